//! The installed copies of the C library: pkg-config files of an installed copy, the
//! install the README documents, a relative prefix, and /usr/local with ldconfig. Needs
//! `cc` and `pkg-config` (scripts/install-deps.sh).

mod common;

use common::{WARNINGS, lib_dir, repo, run, stdout};
use std::path::Path;
use std::process::Command;

#[test]
fn installed_copy_builds_with_pkg_config() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("prefix");
    run(Command::new(repo().join("scripts/install-c.sh"))
        .arg(&prefix)
        .env("SLEEPLAB_LIB_DIR", lib_dir()));
    // The library under its version, stripped, with the SONAME and development links.
    let lib = prefix.join("lib");
    let file = format!("libsleeplab.so.{}", env!("CARGO_PKG_VERSION"));
    for (link, to) in [
        (env!("SLEEPLAB_SONAME"), file.as_str()),
        ("libsleeplab.so", env!("SLEEPLAB_SONAME")),
    ] {
        assert_eq!(std::fs::read_link(lib.join(link)).unwrap(), Path::new(to));
    }
    let dynamic = stdout(&run(Command::new("readelf").arg("-d").arg(lib.join(&file))));
    let soname = format!("Library soname: [{}]", env!("SLEEPLAB_SONAME"));
    assert!(dynamic.contains(&soname), "{dynamic}");
    let sections = stdout(&run(Command::new("readelf").arg("-S").arg(lib.join(&file))));
    assert!(!sections.contains(".debug_"), "not stripped:\n{sections}");
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(size(&lib.join(&file)) < size(&lib_dir().join("libsleeplab.so")));
    assert!(size(&lib.join("libsleeplab.a")) < size(&lib_dir().join("libsleeplab.a")));
    let pc_path = prefix.join("lib/pkgconfig");
    let flags = |args: &[&str]| -> Vec<String> {
        let out = run(Command::new("pkg-config")
            .args(args)
            .env("PKG_CONFIG_PATH", &pc_path));
        stdout(&out).split_whitespace().map(str::to_owned).collect()
    };
    assert_eq!(
        flags(&["--modversion", "sleeplab"]),
        [env!("CARGO_PKG_VERSION")]
    );
    // A prefix outside the loader's path: the shared library's Libs carry the rpath.
    let libs = flags(&["--libs", "sleeplab"]);
    let rpath = format!("-Wl,-rpath,{}", lib.display());
    assert_eq!(
        libs,
        [format!("-L{}", lib.display()), rpath, "-lsleeplab".into()]
    );
    let source = repo().join("examples/frame_limiter.c");
    for (pc, name) in [("sleeplab", "shared"), ("sleeplab-static", "static")] {
        let exe = tmp.path().join(name);
        run(Command::new("cc")
            .args(WARNINGS)
            .arg("-o")
            .arg(&exe)
            .arg(&source)
            .args(flags(&["--cflags", "--libs", pc])));
        // Nothing in the environment but PATH: no LD_LIBRARY_PATH.
        let text = stdout(&run(Command::new(&exe)
            .arg("2")
            .env_clear()
            .env("PATH", path())));
        assert!(text.contains("frames 2, missed "), "{pc}: {text}");
    }
}

/// This process's PATH.
fn path() -> std::ffi::OsString {
    std::env::var_os("PATH").unwrap_or_default()
}

/// The command lines of the README's C install block.
fn readme_install_lines() -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let (_, rest) = readme.split_once("<!-- begin c-install -->").unwrap();
    let (block, _) = rest.split_once("<!-- end c-install -->").unwrap();
    let block = block.trim();
    let body = block
        .strip_prefix("```sh\n")
        .and_then(|b| b.strip_suffix("\n```"))
        .unwrap_or_else(|| panic!("not one sh block: {block}"));
    body.lines().map(str::to_owned).collect()
}

/// The command lines of `examples/frame_limiter.c`'s top comment: its ` *   ` lines.
fn example_install_lines() -> Vec<String> {
    let source = std::fs::read_to_string(repo().join("examples/frame_limiter.c")).unwrap();
    let comment = source.split_once(" */").unwrap().0;
    comment
        .lines()
        .filter_map(|l| l.strip_prefix(" *   "))
        .map(str::to_owned)
        .collect()
}

/// The README's and the example's install commands, run as a user runs them: the install
/// from the repository (HOME a temporary directory), the export and the build in a scratch
/// project outside the repository holding `examples/frame_limiter.c`, and the program with
/// nothing in its environment but PATH. It exits 0 and links `libsleeplab.so.0`.
#[test]
fn the_documented_c_install_builds_and_runs_the_example_with_no_environment() {
    let lines = readme_install_lines();
    assert_eq!(
        lines,
        example_install_lines(),
        "README.md and frame_limiter.c differ"
    );
    let [install, export, build, run_it] = <[String; 4]>::try_from(lines).unwrap();
    assert!(
        install.starts_with("scripts/install-c.sh \"$HOME/.local\""),
        "{install}"
    );
    assert!(export.starts_with("export PKG_CONFIG_PATH="), "{export}");
    assert!(build.starts_with("cc ") && build.contains("pkg-config --cflags --libs sleeplab"));
    assert!(run_it.starts_with("./frame_limiter "), "{run_it}");
    // The header gives the same install and export lines.
    let header = std::fs::read_to_string(repo().join("include/sleeplab.h")).unwrap();
    for line in [&install, &export] {
        let command = line.split("  #").next().unwrap().trim_end();
        assert!(
            header.contains(&format!(" *   {command}\n")),
            "{command} not in the header"
        );
    }

    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join("examples")).unwrap();
    std::fs::copy(
        repo().join("examples/frame_limiter.c"),
        project.join("examples/frame_limiter.c"),
    )
    .unwrap();
    let bash = |script: &str, dir: &Path| {
        let mut cmd = Command::new("bash");
        cmd.args(["-euo", "pipefail", "-c", script])
            .current_dir(dir)
            .env_clear()
            .env("PATH", path());
        cmd
    };
    // The library this test run built, instead of a release build of its own.
    run(bash(&install, &repo())
        .env("HOME", &home)
        .env("SLEEPLAB_LIB_DIR", lib_dir()));
    run(bash(&format!("{export}\n{build}"), &project).env("HOME", &home));
    let out = run(&mut bash(&run_it, &project));
    let text = stdout(&out);
    assert!(text.contains("frames 60, missed "), "{text}");
    assert!(text.contains(", early 0,"), "{text}");

    let needed = stdout(&run(Command::new("readelf")
        .arg("-d")
        .arg(project.join("frame_limiter"))));
    let soname = env!("SLEEPLAB_SONAME");
    assert!(
        needed.contains(&format!("Shared library: [{soname}]")),
        "{needed}"
    );
    let installed = home.join(".local/lib").join(soname);
    let dynamic = stdout(&run(Command::new("readelf").arg("-d").arg(installed)));
    assert!(
        dynamic.contains(&format!("Library soname: [{soname}]")),
        "{dynamic}"
    );
}

/// A relative PREFIX is the caller's (install-c.sh changes to the repository first), and
/// without SLEEPLAB_LIB_DIR the libraries come from the target directory cargo names
/// (`cargo metadata`), not from `target/` (a stand-in cargo names another one and checks
/// what it is asked).
#[test]
fn install_takes_a_relative_prefix_from_the_caller_and_the_target_dir_from_cargo() {
    let tmp = tempfile::tempdir().unwrap();
    let caller = tmp.path().join("caller");
    let fake_release = tmp.path().join("elsewhere/target/release");
    let bin = tmp.path().join("bin");
    for d in [&caller, &fake_release, &bin] {
        std::fs::create_dir_all(d).unwrap();
    }
    for f in ["libsleeplab.so", "libsleeplab.a"] {
        std::fs::copy(lib_dir().join(f), fake_release.join(f)).unwrap();
    }
    let log = tmp.path().join("cargo.log");
    let fake_cargo = bin.join("cargo");
    std::fs::write(
        &fake_cargo,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{log}'\ncase $1 in\nbuild) ;;\n\
             metadata) echo '{{\"packages\":[],\"target_directory\":\"{target}\",\"version\":1}}' ;;\n\
             *) exit 1 ;;\nesac\n",
            log = log.display(),
            target = fake_release.parent().unwrap().display()
        ),
    )
    .unwrap();
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&fake_cargo, executable).unwrap();
    let path =
        std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(&path())))
            .unwrap();
    run(Command::new(repo().join("scripts/install-c.sh"))
        .arg("rel/prefix")
        .current_dir(&caller)
        .env("PATH", &path)
        .env_remove("SLEEPLAB_LIB_DIR"));

    let installed = caller.join("rel/prefix/lib");
    let file = installed.join(format!("libsleeplab.so.{}", env!("CARGO_PKG_VERSION")));
    assert!(file.is_file(), "nothing in {}", installed.display());
    assert!(
        !repo().join("rel").exists(),
        "installed into the repository"
    );
    let pc = std::fs::read_to_string(installed.join("pkgconfig/sleeplab.pc")).unwrap();
    assert!(
        pc.contains(&format!("prefix={}\n", caller.join("rel/prefix").display())),
        "{pc}"
    );
    // The copy installed is the one from the target directory cargo named.
    let build_id = |p: &Path| {
        let notes = stdout(&run(Command::new("readelf").arg("-n").arg(p)));
        let id = notes
            .lines()
            .find(|l| l.contains("Build ID:"))
            .map(str::to_owned);
        id.unwrap_or_else(|| panic!("no build id in {}", p.display()))
    };
    assert_eq!(
        build_id(&file),
        build_id(&fake_release.join("libsleeplab.so"))
    );
    let asked = std::fs::read_to_string(&log).unwrap();
    assert!(
        asked.contains("build --release -q -p sleeplab-ffi"),
        "{asked}"
    );
    assert!(
        asked.contains("metadata --format-version 1 --no-deps"),
        "{asked}"
    );
}

/// The other case of the install: a prefix the dynamic loader searches. As root, in a
/// private mount namespace (overlays on /usr/local and /etc, so that neither the files
/// nor ldconfig's cache of this machine change), `scripts/install-c.sh` with its default
/// prefix runs ldconfig and writes no rpath, and the example built with pkg-config runs
/// with an empty environment. Needs root and mount namespaces: said and skipped without.
#[test]
fn install_into_usr_local_runs_ldconfig_instead_of_an_rpath() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: installing into /usr/local (in a mount namespace) needs root");
        return;
    }
    let probe = Command::new("unshare").args(["-m", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: no mount namespace (unshare -m) here");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let project = t.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let script = format!(
        r#"set -euo pipefail
for d in usr-local etc; do mkdir -p "$T/$d/up" "$T/$d/work"; done
mount -t overlay overlay -o "lowerdir=/usr/local,upperdir=$T/usr-local/up,workdir=$T/usr-local/work" /usr/local
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$T/etc/up,workdir=$T/etc/work" /etc
mountpoint -q /usr/local && mountpoint -q /etc
'{install}' 2>&1
echo "--- pc"
cat /usr/local/lib/pkgconfig/sleeplab.pc
cd '{project}'
cc -O2 -o frame_limiter '{source}' $(pkg-config --cflags --libs sleeplab)
echo "--- run"
env -i PATH="$PATH" ./frame_limiter 3
echo "--- dynamic"
readelf -d frame_limiter
"#,
        install = repo().join("scripts/install-c.sh").display(),
        project = project.display(),
        source = repo().join("examples/frame_limiter.c").display(),
    );
    let out = run(Command::new("unshare")
        .args(["-m", "bash", "-c", &script])
        .env("T", t)
        .env("SLEEPLAB_LIB_DIR", lib_dir()));
    let text = stdout(&out);
    let section = |name: &str| {
        let start = text.find(&format!("--- {name}\n")).unwrap() + name.len() + 5;
        let end = text[start..].find("--- ").map_or(text.len(), |e| start + e);
        &text[start..end]
    };
    let soname = env!("SLEEPLAB_SONAME");
    assert!(
        text.contains(&format!(
            "ran ldconfig: programs find {soname} in /usr/local/lib"
        )),
        "{text}"
    );
    let libs = section("pc").lines().find(|l| l.starts_with("Libs:"));
    assert_eq!(libs, Some("Libs: -L${libdir} -lsleeplab"), "{text}");
    assert!(section("run").contains("frames 3, missed "), "{text}");
    let dynamic = section("dynamic");
    assert!(
        dynamic.contains(&format!("Shared library: [{soname}]")),
        "{dynamic}"
    );
    assert!(
        !dynamic.contains("RUNPATH") && !dynamic.contains("RPATH"),
        "{dynamic}"
    );
    // Nothing of it reached this machine's /usr/local.
    assert!(!Path::new("/usr/local/lib").join(soname).exists());
}
