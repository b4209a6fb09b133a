//! The README's front door, walked from outside the repository: a new crate in a
//! temporary directory depends on the library with exactly the README's `Cargo.toml`
//! lines, its `main` is the README's, and it builds with `RUSTFLAGS=-D warnings` (no
//! warning from the library or from the example) and runs. The same for the README's
//! tokio lines and its async example (built, not run: it ticks for ten seconds).
//!
//! The crates sit in the system's temporary directory beside a link named `sleeplab` to
//! this repository, as the README's path (`../sleeplab/crates/sleeplab`) has it, take the
//! workspace's `Cargo.lock` and build `--offline` into one target directory kept under
//! `target/tmp`. Their directory is named after this worktree and kept, so a second run
//! finds the same paths and recompiles only what changed.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The lines of the README from the heading `heading` to the next heading of its level
/// or above.
fn section<'a>(readme: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading.split(' ').next().unwrap_or("").len();
    let mut lines = readme.lines().skip_while(|l| *l != heading);
    assert!(lines.next().is_some(), "the README has no `{heading}`");
    lines
        .take_while(|l| {
            let hashes = l.len() - l.trim_start_matches('#').len();
            !(hashes > 0 && hashes <= level && l[hashes..].starts_with(' '))
        })
        .collect()
}

/// The contents of the fenced code blocks of `lines` whose info string starts with
/// `lang`, in order.
fn blocks(lines: &[&str], lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    // Inside a block: whether it is one of `lang`'s, and its text so far.
    let mut open: Option<(bool, String)> = None;
    for line in lines {
        match (open.take(), line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some((info.split(',').next() == Some(lang), String::new()));
            }
            (Some((wanted, text)), Some(_)) => {
                if wanted {
                    out.push(text);
                }
            }
            (Some((wanted, mut text)), None) => {
                text.push_str(line);
                text.push('\n');
                open = Some((wanted, text));
            }
            (None, None) => {}
        }
    }
    out
}

/// The scratch directory of this worktree: outside the repository, the same on every
/// run (a path that changes would make Cargo rebuild the library each time).
fn scratch() -> PathBuf {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    env!("CARGO_TARGET_TMPDIR").hash(&mut h);
    std::env::temp_dir().join(format!("sleeplab-from-outside-{:016x}", h.finish()))
}

/// Writes `contents` to `path` unless it holds them already (an unchanged file keeps
/// its time, so Cargo does not rebuild it).
fn write(path: &Path, contents: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(contents) {
        std::fs::write(path, contents).unwrap();
    }
}

/// Writes the crate `name` under `root`: a package whose dependencies are `dependencies`
/// (a `[dependencies]` table, verbatim) and whose `src/main.rs` is `main`.
fn write_crate(root: &Path, name: &str, dependencies: &str, main: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n{dependencies}"
    );
    write(&dir.join("Cargo.toml"), &manifest);
    write(&dir.join("src/main.rs"), main);
    // The versions the workspace builds with, all in the local registry: `--offline`.
    let lock = std::fs::read_to_string(repo().join("Cargo.lock")).unwrap();
    write(&dir.join("Cargo.lock"), &lock);
    dir
}

/// `cargo <args>` in `dir` with warnings denied; its stdout, or a panic with its output.
fn cargo(dir: &Path, args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(args)
        .args(["--offline", "--quiet"])
        .current_dir(dir)
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("from-outside"),
        )
        .env("RUSTFLAGS", "-D warnings")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "cargo {args:?} in {}: {}\n{stdout}\n{}",
        dir.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_readme_builds_from_a_crate_of_its_own() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let use_it = section(&readme, "### Use it from your project");
    let tomls = blocks(&use_it, "toml");
    let plain = tomls
        .iter()
        .find(|t| t.contains("sleeplab = { path = ") && !t.contains("features"))
        .expect("the README's path dependency");
    let with_tokio = tomls
        .iter()
        .find(|t| t.contains("sleeplab = { path = ") && t.contains("\"tokio\""))
        .expect("the README's path dependency with the feature tokio");
    assert!(
        tomls.iter().any(|t| t.contains("sleeplab = { git = ")),
        "the README's git dependency"
    );
    for feature in ["`tokio`", "`async-io`", "`io-uring`"] {
        assert!(
            use_it.iter().any(|l| l.contains(feature)),
            "the README names the feature {feature}"
        );
    }
    let main = blocks(&use_it, "rust")
        .into_iter()
        .find(|b| b.contains("fn main"))
        .expect("the README's main");
    let async_main = blocks(&section(&readme, "### From async code"), "rust")
        .into_iter()
        .find(|b| b.contains("#[tokio::main]"))
        .expect("the README's async main");

    let root = scratch();
    std::fs::create_dir_all(&root).unwrap();
    // `../sleeplab/crates/sleeplab` from each crate: a clone beside the project.
    let link = root.join("sleeplab");
    let target = repo().canonicalize().unwrap();
    if std::fs::read_link(&link).ok() != Some(target.clone()) {
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).unwrap();
    }

    let dir = write_crate(&root, "readme-main", plain, &main);
    let out = cargo(&dir, &["run"]);
    assert!(out.contains("tick 2 came"), "{out}");

    let dir = write_crate(&root, "readme-async", with_tokio, &async_main);
    cargo(&dir, &["build"]);
}
