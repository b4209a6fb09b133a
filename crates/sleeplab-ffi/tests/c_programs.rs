//! C programs built against the library cargo just built (`target/<profile>/libsleeplab.so`
//! and `.a`) with the checked-in header: the example under `examples/` (shared and
//! static), the signal-storm test, the benchmark program, the C probe, and the header in
//! strict C and C++ (the installed copies: `c_install.rs`). Needs `cc` and `c++`
//! (scripts/install-deps.sh).

mod common;

use common::{WARNINGS, build_shared, lib_dir, repo, run, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

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
