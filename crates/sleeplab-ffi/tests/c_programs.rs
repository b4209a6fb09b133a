//! C programs built against the library cargo just built (`target/<profile>/libsleeplab.so`
//! and `.a`) with the checked-in header: the example under `examples/` (shared and
//! static), the signal-storm test, the header in strict C and C++, and the pkg-config
//! files of an installed copy. Needs `cc`, `c++` and `pkg-config` (scripts/install-deps.sh).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `target/<profile>` holding libsleeplab.{so,a}, built once per test run: cargo builds
/// only linkable libraries for integration tests, so this test asks it for the cdylib and
/// the staticlib (cargo does not hold its build lock while tests run). A program linked
/// with `-lsleeplab` asks the loader for the library's SONAME (`libsleeplab.so.0`), which
/// cargo does not make: a link of that name to `libsleeplab.so` is put beside it.
fn lib_dir() -> &'static Path {
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

fn run(cmd: &mut Command) -> Output {
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

const WARNINGS: &[&str] = &["-O2", "-Wall", "-Wextra", "-Werror"];

/// Compiles `source` against the shared library (with an rpath to it).
fn build_shared(source: &Path, out: &Path, extra: &[&str]) {
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

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn frame_limiter_example_runs_linked_shared_and_static() {
    let tmp = tempfile::tempdir().unwrap();
    let source = repo().join("examples/frame_limiter.c");

    let shared = tmp.path().join("frame_limiter_shared");
    build_shared(&source, &shared, &["-std=c11"]);
    let out = run(Command::new(&shared).arg("6"));
    let text = stdout(&out);
    assert!(text.contains("frames 6, missed "), "{text}");
    assert!(text.contains(", early 0,"), "{text}");

    // Static: the archive plus the system libraries it needs, and no libsleeplab.so.
    let fully_static = tmp.path().join("frame_limiter_static");
    run(Command::new("cc")
        .args(WARNINGS)
        .arg("-std=c11")
        .arg("-I")
        .arg(repo().join("include"))
        .arg("-o")
        .arg(&fully_static)
        .arg(&source)
        .arg(lib_dir().join("libsleeplab.a"))
        .args(["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl"]));
    let deps = stdout(&run(Command::new("ldd").arg(&fully_static)));
    assert!(!deps.contains("libsleeplab"), "{deps}");
    let text = stdout(&run(Command::new(&fully_static).arg("3")));
    assert!(text.contains("frames 3, missed "), "{text}");

    // Bad arguments: exit 2 with one line.
    let out = Command::new(&shared).arg("zero").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad frame count 'zero'"));
}

#[test]
fn never_early_through_the_abi_under_a_10khz_signal_storm() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("signal_storm");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/signal_storm.c");
    build_shared(&source, &exe, &["-std=c11", "-pthread"]);
    let out = run(&mut Command::new(&exe));
    let text = stdout(&out);
    assert!(text.contains("calls 600, early 0, failed 0"), "{text}");
    eprintln!("{text}");
}

#[test]
fn benchmark_program_runs_a_tiny_interleaved_run() {
    // A smoke run of scripts/bench-c.sh's program (not a measurement): the JSON it prints
    // has every contender with one sample per frame, none early.
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("pace");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/pace.c");
    build_shared(&source, &exe, &["-std=c11"]);
    let out = run(Command::new(&exe).args(["--frames", "5", "--block", "2"]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["contenders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "nanosleep",
            "sleeplab_sleep_ns",
            "sleeplab_sleep_until_ns",
            "spin"
        ]
    );
    for c in v["contenders"].as_array().unwrap() {
        let lateness: Vec<i64> = ints(&c["lateness_ns"]);
        assert_eq!(lateness.len(), 5);
        assert!(lateness.iter().all(|&x| x >= 0), "{c}");
        assert!(c["cpu_ns"].as_u64().unwrap() > 0);
        let name = c["name"].as_str().unwrap();
        assert_eq!(
            c["sleeper"].is_object(),
            name.starts_with("sleeplab"),
            "{name}"
        );
        if !name.starts_with("sleeplab") {
            continue;
        }
        assert_eq!(c["timer_slack_ns"], 1);
        // The sleeper's view of each frame: its own lateness, the deadline shift and the
        // return path add up to the loop's lateness, and none is negative.
        let view = |f: &str| ints(&c["sleeper"][f]);
        let (own, shift, ret) = (
            view("lateness_ns"),
            view("deadline_shift_ns"),
            view("return_ns"),
        );
        for k in 0..5 {
            assert_eq!(own[k] + shift[k] + ret[k], lateness[k], "{name} frame {k}");
            assert!(
                own[k] >= 0 && shift[k] >= 0 && ret[k] >= 0,
                "{name} frame {k}"
            );
        }
        if name.ends_with("until_ns") {
            assert!(shift.iter().all(|&x| x == 0), "handed the loop's deadline");
        }
        // A frame with a native phase (oversleep >= 0; -1 without) planned a margin.
        let (margin, oversleep) = (view("margin_ns"), view("native_oversleep_ns"));
        for k in 0..5 {
            assert!(
                oversleep[k] >= -1 && (oversleep[k] < 0 || margin[k] > 0),
                "{name}"
            );
        }
        assert_eq!(view("spin_ns").len(), 5);
    }

    let bad = Command::new(&exe).args(["--frames", "0"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// A JSON array of integers.
fn ints(v: &serde_json::Value) -> Vec<i64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

/// The lab's C probe (`probes/c/probe.c`), built as `sleeplab runtimes` builds it, run
/// with `args` (split at spaces) and `SLEEPLAB_LIB` set to `lib`.
fn c_probe(lib: &Path, args: &str) -> Output {
    static PROBE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, exe) = PROBE.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let exe = tmp.path().join("probe");
        run(Command::new("cc")
            .args(["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&exe)
            .arg(repo().join("probes/c/probe.c")));
        (tmp, exe)
    });
    Command::new(exe)
        .args(args.split(' '))
        .env("SLEEPLAB_LIB", lib)
        .output()
        .unwrap()
}

/// The samples (`s`/`t` lines) of one cell of a successful probe run, after its
/// `cell <value>` line, checked against its `done` line.
fn probe_samples(out: &Output, value: u64) -> Vec<u64> {
    let text = stdout(out);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.ends_with("end\n"), "{text}");
    let cell = format!("cell {value}\n");
    let rest = &text[text
        .find(&cell)
        .unwrap_or_else(|| panic!("no {cell:?} in {text}"))..];
    let end = rest.find("done ").unwrap();
    let samples: Vec<u64> = rest[..end]
        .lines()
        .filter_map(|l| l.strip_prefix("s ").or_else(|| l.strip_prefix("t ")))
        .map(|n| n.parse().unwrap())
        .collect();
    assert!(rest[end..].starts_with(&format!("done {value} {}\n", samples.len())));
    samples
}

#[test]
fn the_c_probe_measures_the_abi_never_early_and_says_when_it_is_missing() {
    let lib = lib_dir().join("libsleeplab.so");
    let text = stdout(&c_probe(&lib, "--list"));
    for method in ["sleeplab_sleep_ns", "sleeplab_ticker"] {
        let line = text
            .lines()
            .find(|l| l.contains(&format!("\"method\":\"{method}\"")))
            .unwrap_or_else(|| panic!("{method} not listed: {text}"));
        assert!(line.contains("\"available\":true"), "{line}");
    }

    let out = c_probe(
        &lib,
        "--method sleeplab_sleep_ns --durations-ns 0,200000 --count 20",
    );
    assert!(stdout(&out).contains("\"method\":\"sleeplab_sleep_ns\""));
    for d in [0, 200_000] {
        let samples = probe_samples(&out, d);
        assert_eq!(samples.len(), 20);
        assert!(samples.iter().all(|&s| s >= d), "early at {d}: {samples:?}");
    }

    let period = 1_000_000;
    let out = c_probe(
        &lib,
        "--method sleeplab_ticker --period-ns 1000000 --count 30 --warmup 2",
    );
    let ticks = probe_samples(&out, period);
    assert_eq!(ticks.len(), 30);
    for (i, t) in ticks.iter().enumerate() {
        let k = i as u64 + 3; // after two warm-up ticks, counting from 1
        assert!(
            *t >= k * period,
            "tick {k} at {t} ns, due at {} ns",
            k * period
        );
    }
    assert!(ticks.windows(2).all(|w| w[0] <= w[1]), "{ticks:?}");

    // Without the library: listed as unavailable with the reason, exit 3 when asked for.
    let missing = Path::new("/nonexistent/libsleeplab.so");
    let text = stdout(&c_probe(missing, "--list"));
    let line = text
        .lines()
        .find(|l| l.contains("sleeplab_sleep_ns"))
        .unwrap();
    assert!(line.contains("\"available\":false,\"reason\":"), "{line}");
    assert!(line.contains("SLEEPLAB_LIB"), "{line}");
    let out = c_probe(
        missing,
        "--method sleeplab_sleep_ns --durations-ns 1000 --count 1",
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(out.stdout.is_empty());
}

#[test]
fn header_compiles_as_strict_c99_and_cpp() {
    let tmp = tempfile::tempdir().unwrap();
    let c = tmp.path().join("use.c");
    std::fs::write(
        &c,
        "#include \"sleeplab.h\"\n\
         int main(void) {\n\
         \x20 sleeplab_sleeper *s = sleeplab_sleeper_new();\n\
         \x20 int rc = sleeplab_sleep_ns(s, 1000);\n\
         \x20 sleeplab_sleeper_free(s);\n\
         \x20 return rc == SLEEPLAB_OK && -SLEEPLAB_EINVAL == 22 ? 0 : 1;\n\
         }\n",
    )
    .unwrap();
    build_shared(&c, &tmp.path().join("use_c"), &["-std=c99", "-pedantic"]);
    run(&mut Command::new(tmp.path().join("use_c")));

    let cpp = tmp.path().join("use.cpp");
    std::fs::copy(&c, &cpp).unwrap();
    let lib = lib_dir();
    run(Command::new("c++")
        .args(WARNINGS)
        .args(["-std=c++11", "-pedantic", "-I"])
        .arg(repo().join("include"))
        .arg("-o")
        .arg(tmp.path().join("use_cpp"))
        .arg(&cpp)
        .arg("-L")
        .arg(lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lsleeplab"));
    run(&mut Command::new(tmp.path().join("use_cpp")));
}

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
