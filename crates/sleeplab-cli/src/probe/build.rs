//! The build cache of compiled probes: one directory per build, keyed by a hash of the
//! probe's source files, the build command and the compiler's version output, so a
//! changed source or compiler rebuilds and an unchanged one starts at once. Builds go to
//! a temporary directory renamed into place, so a half-finished build is never used and
//! concurrent builds (parallel tests) do not collide.

use super::child::ChildSettings;
use super::command::ProbeCommand;
use super::runner::{self, Limits, Verdict};
use sleeplab_results::RuntimeId;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a build may take.
pub(super) const BUILD_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a version query may take.
pub(super) const QUERY_TIMEOUT: Duration = Duration::from_secs(30);
/// Output kept from a build or a query.
pub(super) const TOOL_OUTPUT_CAP: usize = 16 << 20;

/// The build command for `id`, writing into `out` (a fresh directory).
fn build_command(id: RuntimeId, dir: &Path, out: &Path) -> ProbeCommand {
    let src = dir.join(id.main_source());
    match id {
        RuntimeId::C => ProbeCommand::new("cc")
            .with_args(["-O2", "-std=c11", "-Wall", "-Wextra", "-o"])
            .with_args([out.join("probe").into_os_string(), src.into_os_string()]),
        RuntimeId::Cpp => ProbeCommand::new("c++")
            .with_args(["-O2", "-std=c++17", "-pthread", "-Wall", "-Wextra", "-o"])
            .with_args([out.join("probe").into_os_string(), src.into_os_string()]),
        RuntimeId::Go => ProbeCommand::new("go")
            .with_args(["build", "-o"])
            .with_args([out.join("probe").into_os_string(), ".".into()])
            .with_env("GOFLAGS", "-mod=mod -buildvcs=false")
            .with_env("GOTOOLCHAIN", "local")
            .in_dir(dir),
        // -sourcepath: Probe.java's base class (ProbeArgs.java) is compiled with it.
        RuntimeId::Java => ProbeCommand::new("javac")
            .with_args(["-d"])
            .with_args([out.join("classes").into_os_string()])
            .with_args(["-sourcepath".into(), dir.as_os_str().to_owned()])
            .with_args([src.into_os_string()]),
        RuntimeId::Windows => ProbeCommand::new("x86_64-w64-mingw32-gcc")
            .with_args(["-O2", "-Wall", "-Wextra", "-o"])
            .with_args([out.join("probe.exe").into_os_string(), src.into_os_string()])
            .with_args(["-lwinmm"]),
        _ => ProbeCommand::new("true"),
    }
}

/// Builds the probe of `id` (its sources in `dir`) into the build cache `cache` (or finds
/// the cached build): the build's directory and a note.
pub(super) fn build(cache: &Path, id: RuntimeId, dir: &Path) -> Result<(PathBuf, String), String> {
    let version = match id.version_command() {
        Some(argv) => tool_output(argv)?,
        None => String::new(),
    };
    let sources = source_files(id, dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    // The key covers the command as written for a fixed output path, so a change of
    // flags rebuilds too.
    let template = build_command(id, dir, Path::new("OUT")).words(&[]);
    let key = build_key(id, &template, &version, &sources);
    let final_dir = cache.join(format!("{}-{key:016x}", id.name()));
    if final_dir.is_dir() {
        return Ok((final_dir, "cached build".into()));
    }
    std::fs::create_dir_all(cache)
        .map_err(|e| format!("cannot create the cache {}: {e}", cache.display()))?;
    let tmp = tempfile::Builder::new()
        .prefix(&format!("{}-{key:016x}.tmp", id.name()))
        .tempdir_in(cache)
        .map_err(|e| {
            format!(
                "cannot create a build directory in {}: {e}",
                cache.display()
            )
        })?;
    let cmd = build_command(id, dir, tmp.path());
    let t0 = Instant::now();
    let out = runner::run(
        &cmd,
        &[],
        ChildSettings::default(),
        Limits {
            timeout: BUILD_TIMEOUT,
            output_cap: TOOL_OUTPUT_CAP,
        },
    )
    .map_err(|e| format!("build failed: {e}"))?;
    if out.verdict() != Verdict::Ok {
        let why = match out.verdict() {
            Verdict::Failed(w) | Verdict::BadArguments(w) | Verdict::Unavailable(w) => w,
            Verdict::Ok => String::new(),
        };
        return Err(format!(
            "build failed ({}): {why}",
            cmd.words(&[]).join(" ")
        ));
    }
    let built = tmp.keep();
    match std::fs::rename(&built, &final_dir) {
        Ok(()) => {}
        Err(_) if final_dir.is_dir() => {
            // Someone else finished the same build first: use theirs.
            let _ = std::fs::remove_dir_all(&built);
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&built);
            return Err(format!(
                "cannot move the build into {}: {e}",
                final_dir.display()
            ));
        }
    }
    Ok((
        final_dir,
        format!("built in {:.1} s", t0.elapsed().as_secs_f64()),
    ))
}

/// Runs a version query and returns its stdout and stderr.
fn tool_output(argv: &[&str]) -> Result<String, String> {
    let Some((program, args)) = argv.split_first() else {
        return Ok(String::new());
    };
    let cmd = ProbeCommand::new(program).with_args(args.iter().copied());
    let out = runner::run(
        &cmd,
        &[],
        ChildSettings::default(),
        Limits {
            timeout: QUERY_TIMEOUT,
            output_cap: TOOL_OUTPUT_CAP,
        },
    )
    .map_err(|e| e.to_string())?;
    match out.verdict() {
        Verdict::Ok => Ok(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )),
        Verdict::Failed(w) | Verdict::BadArguments(w) | Verdict::Unavailable(w) => {
            Err(format!("{} failed: {w}", argv.join(" ")))
        }
    }
}

/// The files whose content decides a build: `(name relative to the probe dir, bytes)`,
/// sorted by name. A C or C++ probe is its main source and the parts it includes from
/// its directory (`*.h`: the Windows probe is split by topic into one translation unit).
fn source_files(id: RuntimeId, dir: &Path) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let wanted = |name: &str| match id {
        RuntimeId::Go => name.ends_with(".go") || name == "go.mod" || name == "go.sum",
        RuntimeId::C | RuntimeId::Cpp | RuntimeId::Windows => {
            name == id.main_source() || name.ends_with(".h")
        }
        RuntimeId::Java => name.ends_with(".java"),
        other => name == other.main_source(),
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_file() && wanted(&name) {
            files.push((name, std::fs::read(entry.path())?));
        }
    }
    files.sort();
    Ok(files)
}

/// The cache key of a build: FNV-1a (64 bit) over the runtime, the build command, the
/// compiler's version output and every source file (name, length, bytes).
pub fn build_key(
    id: RuntimeId,
    command: &[String],
    tool_version: &str,
    sources: &[(String, Vec<u8>)],
) -> u64 {
    let mut h = fnv::FnvHasher::default();
    let mut put = |bytes: &[u8]| {
        h.write_u64(bytes.len() as u64);
        h.write(bytes);
    };
    put(id.name().as_bytes());
    for w in command {
        put(w.as_bytes());
    }
    put(tool_version.as_bytes());
    for (name, bytes) in sources {
        put(name.as_bytes());
        put(bytes);
    }
    h.finish()
}

/// The build cache: `$XDG_CACHE_HOME/sleeplab/probes`, else `~/.cache/sleeplab/probes`.
pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".cache"))
        })
        .unwrap_or_else(|| std::env::temp_dir().join("sleeplab-cache"));
    base.join("sleeplab").join("probes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_changes_with_source_command_and_compiler() {
        let src = vec![("probe.c".to_string(), b"int main(){}".to_vec())];
        let cmd = vec!["cc".to_string(), "-O2".to_string()];
        let k = build_key(RuntimeId::C, &cmd, "gcc 12", &src);
        assert_eq!(k, build_key(RuntimeId::C, &cmd, "gcc 12", &src));
        let src2 = vec![("probe.c".to_string(), b"int main(){ }".to_vec())];
        assert_ne!(k, build_key(RuntimeId::C, &cmd, "gcc 12", &src2));
        assert_ne!(k, build_key(RuntimeId::C, &cmd, "gcc 13", &src));
        assert_ne!(k, build_key(RuntimeId::Cpp, &cmd, "gcc 12", &src));
        let cmd2 = vec!["cc".to_string(), "-O3".to_string()];
        assert_ne!(k, build_key(RuntimeId::C, &cmd2, "gcc 12", &src));
    }

    /// A part the main source includes decides the build as the main source does; other
    /// files of the directory (the README) do not.
    #[test]
    fn a_probe_is_its_main_source_and_the_parts_it_includes() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [
            ("probe.c", "#include \"args.h\"\n"),
            ("args.h", "int x;\n"),
            ("README.md", "notes\n"),
            ("Probe.java", "class Probe extends ProbeArgs {}\n"),
            ("ProbeArgs.java", "class ProbeArgs {}\n"),
        ] {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let names = |id| -> Vec<String> {
            source_files(id, dir.path())
                .unwrap()
                .into_iter()
                .map(|(n, _)| n)
                .collect()
        };
        assert_eq!(names(RuntimeId::Windows), ["args.h", "probe.c"]);
        assert_eq!(names(RuntimeId::C), ["args.h", "probe.c"]);
        assert_eq!(names(RuntimeId::Java), ["Probe.java", "ProbeArgs.java"]);
    }
}
