//! What the C-program tests share: the repository, the library cargo just built (built
//! once per test binary), running a command that must succeed, and compiling a C program
//! against the shared library.

#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `target/<profile>` holding libsleeplab.{so,a}, built once per test run: cargo builds
/// only linkable libraries for integration tests, so this test asks it for the cdylib and
/// the staticlib (cargo does not hold its build lock while tests run). A program linked
/// with `-lsleeplab` asks the loader for the library's SONAME (`libsleeplab.so.0`), which
/// cargo does not make: a link of that name to `libsleeplab.so` is put beside it.
pub fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        let dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
        let profile = match dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev",
            Some(name) => name,
        };
        run(Command::new(env!("CARGO"))
            .args(["build", "-q", "-p", "sleeplab-ffi", "--profile", profile])
            .current_dir(env!("CARGO_MANIFEST_DIR")));
        for f in ["libsleeplab.so", "libsleeplab.a"] {
            assert!(dir.join(f).exists(), "{} not built", dir.join(f).display());
        }
        let soname = dir.join(env!("SLEEPLAB_SONAME"));
        if std::fs::read_link(&soname).ok().as_deref() != Some(Path::new("libsleeplab.so")) {
            let _ = std::fs::remove_file(&soname);
            match std::os::unix::fs::symlink("libsleeplab.so", &soname) {
                // Another test run made it meanwhile.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                made => made.unwrap(),
            }
        }
        dir
    })
}

/// Runs `cmd`; panics with its output unless it succeeds.
pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The warnings every C build here treats as errors.
pub const WARNINGS: &[&str] = &["-O2", "-Wall", "-Wextra", "-Werror"];

/// Compiles `source` against the shared library (with an rpath to it).
pub fn build_shared(source: &Path, out: &Path, extra: &[&str]) {
    let lib = lib_dir();
    run(Command::new("cc")
        .args(WARNINGS)
        .args(extra)
        .arg("-I")
        .arg(repo().join("include"))
        .arg("-o")
        .arg(out)
        .arg(source)
        .arg("-L")
        .arg(lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lsleeplab"));
}

/// A program's standard output as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}
