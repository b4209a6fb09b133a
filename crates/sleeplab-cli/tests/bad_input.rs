//! Bad input, one table through the real binary for every command: durations
//! (negative, NaN, inf, 1e400, empty, `1.5.3ms`, unknown units, empty list elements,
//! beyond a day), counts (0, negative, huge), unknown names, conflicting flags,
//! unwritable or directory output paths, and for `report`/`compare` missing, empty,
//! truncated, non-JSON, wrong-schema-version and wrong-experiment files. Every case must
//! exit 2 with exactly one line on stderr that names the bad value, print nothing on
//! stdout, not panic (`common::exit2`), and leave its output directory empty (no
//! half-written file, no `.sleeplab-*` temp file). Every subcommand has a case.

mod common;

use clap::CommandFactory;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_sleeplab")
}

/// One bad invocation: the arguments (with placeholders) and a text the error line
/// must contain (the bad value, or the flags that conflict).
struct Case {
    args: &'static [&'static str],
    names: &'static str,
}

const fn case(args: &'static [&'static str], names: &'static str) -> Case {
    Case { args, names }
}

/// Placeholders in the arguments (and the text to name):
/// `@J` an output JSON path in the case's (empty) directory, `@C` an output CSV path there,
/// `@D` the directory itself, `@O` a report directory in it, `@M` a file in a directory
/// that does not exist, `%name` a fixture (`name.json`, or the file or directory `name`).
#[rustfmt::skip]
const CASES: &[Case] = &[
    // Durations, on every command that takes one.
    case(&["sweep", "--durations=-1ms", "--json", "@J"], "-1ms"),
    case(&["sweep", "--durations", "NaN", "--json", "@J"], "NaN"),
    case(&["sweep", "--durations", "inf", "--json", "@J"], "inf"),
    case(&["sweep", "--durations", "1e400", "--json", "@J"], "1e400"),
    case(&["sweep", "--durations", "", "--json", "@J"], "\"\""),
    case(&["sweep", "--durations", "1.5.3ms", "--json", "@J"], "1.5.3ms"),
    case(&["sweep", "--durations", "5parsecs", "--json", "@J"], "parsecs"),
    case(&["sweep", "--durations", "1ms,,2ms", "--json", "@J"], "1ms,,2ms"),
    case(&["sweep", "--durations", "1ms,", "--json", "@J"], "1ms,"),
    case(&["sweep", "--durations", "5", "--json", "@J"], "\"5\""),
    case(&["sweep", "--durations", "1.5ns", "--json", "@J"], "1.5ns"),
    case(&["sweep", "--durations", "0.5ns", "--json", "@J"], "0.5ns"),
    case(&["sweep", "--durations", "+5ms", "--json", "@J"], "+5ms"),
    case(&["sweep", "--durations", "0x10ns", "--json", "@J"], "0x10ns"),
    case(&["sweep", "--durations", "86401s", "--json", "@J"], "86401s"),
    case(&["sweep", "--durations", "99999999999999999999999s", "--json", "@J"], "99999999999999999999999s"),
    case(&["sweep", "--budget", "86401s", "--json", "@J"], "86401s"),
    case(&["sweep", "--timer-slack", "0", "--json", "@J"], "\"0\""),
    case(&["sweep", "--timer-slack", "86401s", "--json", "@J"], "86401s"),
    case(&["short", "--batch-time=-1ms", "--json", "@J"], "-1ms"),
    case(&["short", "--batch-time", "86401s", "--json", "@J"], "86401s"),
    case(&["short", "--timer-slack", "1ms,,1ns", "--json", "@J"], "1ms,,1ns"),
    case(&["pace", "--work", "NaN", "--json", "@J"], "NaN"),
    case(&["pace", "--work", "86401s", "--json", "@J"], "86401s"),
    case(&["pace", "--rate", "0", "--json", "@J"], "\"0\""),
    case(&["pace", "--rate", "inf", "--json", "@J"], "inf"),
    case(&["pace", "--rate", "NaN", "--json", "@J"], "NaN"),
    case(&["pace", "--rate=-60", "--json", "@J"], "-60"),
    case(&["pace", "--rate", "1e400", "--json", "@J"], "1e400"),
    case(&["pace", "--timer-slack", "0", "--json", "@J"], "\"0\""),
    case(&["cpu", "--intervals", "0", "--json", "@J"], "\"0\""),
    case(&["cpu", "--intervals", "1ms,,2ms", "--json", "@J"], "1ms,,2ms"),
    case(&["cpu", "--intervals", "86401s", "--json", "@J"], "86401s"),
    case(&["cpu", "--seconds", "86401s", "--json", "@J"], "86401s"),
    case(&["cpu", "--seconds", "0", "--json", "@J"], "\"0\""),
    case(&["advise", "--period", "0", "--tolerance", "1us", "--json", "@J"], "\"0\""),
    case(&["advise", "--period", "1ms", "--tolerance=-1us", "--json", "@J"], "-1us"),
    case(&["advise", "--period", "86401s", "--tolerance", "1us", "--json", "@J"], "86401s"),
    case(&["advise", "--duration", "1ms", "--tolerance", "1us", "--seconds", "1e400", "--json", "@J"], "1e400"),
    case(&["advise", "--period", "1ms", "--tolerance", "1us", "--seconds", "1ms", "--json", "@J"], "--seconds"),
    case(&["timers", "--periods", "0", "--json", "@J"], "\"0\""),
    case(&["timers", "--periods", "1.5.3ms", "--json", "@J"], "1.5.3ms"),
    case(&["timers", "--periods", "86401s", "--json", "@J"], "86401s"),
    case(&["timers", "--seconds", "NaN", "--json", "@J"], "NaN"),
    case(&["timers", "--seconds", "3601", "--json", "@J"], "3601"),
    case(&["timers", "--seconds", "86400s", "--json", "@J"], "86400s"),
    case(&["timers", "--seconds=-1", "--json", "@J"], "-1"),
    case(&["runtimes", "--durations", "86401s", "--json", "@J"], "86401s"),
    case(&["runtimes", "--durations", "1ms,,1ms", "--json", "@J"], "1ms,,1ms"),
    case(&["runtimes", "--budget=-1ms", "--json", "@J"], "-1ms"),
    case(&["runtimes", "--period", "0", "--json", "@J"], "\"0\""),
    case(&["simulate", "--intervals", "86401s", "--json", "@J"], "86401s"),
    case(&["simulate", "--intervals", "0", "--json", "@J"], "\"0\""),
    case(&["simulate", "--periods", "10..1ms", "--json", "@J"], "10..1ms"),
    case(&["simulate", "--periods", "1..99999999999ms", "--json", "@J"], "1..99999999999ms"),
    case(&["simulate", "--preempt-prob", "NaN", "--json", "@J"], "NaN"),
    case(&["simulate", "--preempt-prob", "1", "--json", "@J"], "\"1\""),
    // Counts: zero, negative, huge.
    case(&["sweep", "--iterations", "0", "--json", "@J"], "\"0\""),
    case(&["sweep", "--iterations=-5", "--json", "@J"], "-5"),
    case(&["sweep", "--iterations", "99999999999999999999999", "--json", "@J"], "99999999999999999999999"),
    case(&["sweep", "--iterations", "1.5", "--json", "@J"], "1.5"),
    case(&["sweep", "--rounds", "0", "--json", "@J"], "\"0\""),
    case(&["sweep", "--load", "100000", "--json", "@J"], "100000"),
    case(&["sweep", "--load=-1", "--json", "@J"], "-1"),
    case(&["sweep", "--load", "1,,2", "--json", "@J"], "1,,2"),
    case(&["sweep", "--warmup=-1", "--json", "@J"], "-1"),
    case(&["sweep", "--json-samples", "18446744073709551616", "--json", "@J"], "18446744073709551616"),
    case(&["sweep", "--min-iterations", "10", "--max-iterations", "5", "--json", "@J"], "--min-iterations"),
    case(&["short", "--batch", "0", "--json", "@J"], "\"0\""),
    case(&["short", "--batch", "99999999999", "--json", "@J"], "99999999999"),
    case(&["short", "--repetitions", "1", "--json", "@J"], "\"1\""),
    case(&["short", "--seed", "abc", "--json", "@J"], "abc"),
    case(&["pace", "--frames", "0", "--json", "@J"], "\"0\""),
    case(&["pace", "--block", "0", "--json", "@J"], "\"0\""),
    case(&["timers", "--threads", "0", "--json", "@J"], "\"0\""),
    case(&["timers", "--threads", "100000", "--json", "@J"], "100000"),
    case(&["timers", "--histogram-max", "0", "--json", "@J"], "\"0\""),
    case(&["timers", "--load", "99999", "--json", "@J"], "99999"),
    case(&["runtimes", "--count", "0", "--json", "@J"], "\"0\""),
    case(&["runtimes", "--ticks", "0", "--json", "@J"], "\"0\""),
    case(&["runtimes", "--max-count=-1", "--json", "@J"], "-1"),
    case(&["simulate", "--sleeps", "0", "--json", "@J"], "\"0\""),
    case(&["simulate", "--seed", "18446744073709551616", "--json", "@J"], "18446744073709551616"),
    // Unknown names.
    case(&["sweep", "--mechanisms", "nanoslep", "--json", "@J"], "nanoslep"),
    case(&["sweep", "--mechanisms", "", "--json", "@J"], "\"\""),
    case(&["short", "--mechanisms", "foo", "--json", "@J"], "foo"),
    case(&["timers", "--mechanisms", "bogus", "--json", "@J"], "bogus"),
    case(&["pace", "--strategies", "spn", "--json", "@J"], "spn"),
    case(&["pace", "--strategies", "precise:q=7", "--json", "@J"], "`7`"),
    case(&["pace", "--strategies", "seed-hybrid:y=1", "--json", "@J"], "`y`"),
    case(&["pace", "--strategies", "spin-sleep:2s", "--json", "@J"], "`2s`"),
    case(&["pace", "--strategies", "precise:tol=0.5ns", "--json", "@J"], "`0.5ns`"),
    case(&["pace", "--load", "many", "--json", "@J"], "many"),
    case(&["pace", "--load=-1", "--json", "@J"], "-1"),
    case(&["cpu", "--strategies", "nope", "--json", "@J"], "nope"),
    case(&["simulate", "--strategies", "spin-sleep", "--json", "@J"], "spin-sleep"),
    case(&["runtimes", "--runtimes", "cobol", "--json", "@J"], "cobol"),
    case(&["sweep", "--policy", "bogus", "--json", "@J"], "bogus"),
    case(&["sweep", "--pin", "9999", "--json", "@J"], "9999"),
    case(&["survey", "--stages", "nope", "-o", "@O"], "nope"),
    case(&["nosuchcommand"], "nosuchcommand"),
    case(&["sweep", "--bogus-flag"], "--bogus-flag"),
    // Conflicting or missing flags.
    case(&["sweep", "--timertest", "--durations", "1ms", "--json", "@J"], "--timertest"),
    case(&["sweep", "--iterations", "5", "--budget", "1s", "--json", "@J"], "--budget"),
    case(&["sweep", "--policy", "fifo", "--priority", "0", "--json", "@J"], "--priority 0"),
    case(&["sweep", "--priority", "50", "--json", "@J"], "--priority 50"),
    case(&["sweep", "--json", "@J", "--csv", "@J"], "--csv"),
    case(&["advise", "--period", "1ms", "--duration", "1ms", "--tolerance", "1us", "--json", "@J"], "--duration"),
    case(&["advise", "--period", "1ms", "--json", "@J"], "--tolerance"),
    case(&["advise", "--duration", "1ms", "--tolerance", "1us", "--json", "@J", "--csv", "@C"], "--csv"),
    case(&["runtimes", "--count", "5", "--budget", "1s", "--json", "@J"], "--budget"),
    case(&["runtimes", "--list", "--json", "@J"], "--list"),
    case(&["survey", "--quick", "--full", "-o", "@O"], "--full"),
    case(&["--quick", "sweep", "--json", "@J"], "--quick"),
    case(&["simulate", "--replay-load", "3", "--json", "@J"], "--replay"),
    case(&["compare", "%sweep"], "B.json"),
    // Output paths: a directory, a missing directory, a place nobody can write.
    case(&["sweep", "--json", "@D"], "is a directory"),
    case(&["sweep", "--json", "/nonexistent-sleeplab-dir/x.json"], "/nonexistent-sleeplab-dir"),
    case(&["sweep", "--json", "@J", "--csv", "/proc/sleeplab-x.csv"], "/proc/sleeplab-x.csv"),
    case(&["short", "--json", "@J", "--csv", "@D"], "is a directory"),
    case(&["pace", "--json", "/proc/sleeplab-x.json"], "/proc/sleeplab-x.json"),
    case(&["cpu", "--json", ""], "--json"),
    case(&["timers", "--json", "@J", "--histogram", "@D"], "--histogram"),
    // monitor: every flag checked before it listens (a busy port: tests/monitor_cli.rs).
    case(&["monitor", "--listen", "127.0.0.1:99999"], "127.0.0.1:99999"),
    case(&["monitor", "--listen", "nowhere"], "nowhere"),
    case(&["monitor", "--mechanisms", "nanoslep@1ms"], "nanoslep"),
    case(&["monitor", "--mechanisms", "precise@0hz"], "0hz"),
    case(&["monitor", "--mechanisms", "nanosleep,,precise"], "nanosleep,,precise"),
    case(&["monitor", "--durations=-1ms", "--mechanisms", "nanosleep"], "-1ms"),
    case(&["monitor", "--interval", "1ms"], "1ms"),
    case(&["monitor", "--interval", "86401s"], "86401s"),
    case(&["monitor", "--burst", "0"], "\"0\""),
    case(&["monitor", "--stall", "NaN"], "NaN"),
    case(&["monitor", "--pin", "9999"], "9999"),
    case(&["runtimes", "--json", "@D"], "is a directory"),
    case(&["simulate", "--json", "@J", "--csv", "@D"], "is a directory"),
    case(&["advise", "--duration", "1ms", "--tolerance", "1us", "--json", "@D"], "is a directory"),
    case(&["schema", "--output", "@D"], "is a directory"),
    case(&["survey", "-o", "/proc/version"], "/proc/version"),
    case(&["report", "%sweep", "-o", "/proc/version"], "/proc/version"),
    case(&["compare", "%sweep", "%sweep", "-o", "/proc/version"], "/proc/version"),
    // Result files that are not what report/compare/simulate --replay need.
    case(&["report", "%missing", "-o", "@O"], "missing.json"),
    case(&["report", "%empty", "-o", "@O"], "empty.json"),
    case(&["report", "%blank", "-o", "@O"], "blank.json"),
    case(&["report", "%truncated", "-o", "@O"], "truncated.json"),
    case(&["report", "%notjson", "-o", "@O"], "notjson.json"),
    case(&["report", "%array", "-o", "@O"], "array.json"),
    case(&["report", "%noversion", "-o", "@O"], "noversion.json"),
    case(&["report", "%v999", "-o", "@O"], "999"),
    case(&["report", "%vstring", "-o", "@O"], "vstring.json"),
    case(&["report", "%wrongexp", "-o", "@O"], "teleport"),
    case(&["report", "%baddata", "-o", "@O"], "baddata.json"),
    case(&["report", "%binary", "-o", "@O"], "binary.json"),
    case(&["report", "%dir", "-o", "@O"], "dir"),
    case(&["compare", "%sweep", "%empty", "-o", "@O"], "empty.json"),
    case(&["compare", "%truncated", "%sweep", "-o", "@O"], "truncated.json"),
    case(&["compare", "%sweep", "%v999", "-o", "@O"], "999"),
    case(&["compare", "%sweep", "%missing", "-o", "@O"], "missing.json"),
    case(&["compare", "%sweep", "%wrongexp", "-o", "@O"], "teleport"),
    case(&["compare", "%sweep", "%simulate", "-o", "@O"], "simulate.json"),
    // compare of three and more (a fleet).
    case(&["compare", "%sweep", "%sweep", "%empty", "-o", "@O"], "empty.json"),
    case(&["compare", "%sweep", "%sweep", "%simulate"], "simulate.json"),
    case(&["compare", "%sweep", "%sweep", "--json", "@D"], "is a directory"),
    case(&["simulate", "--replay", "%empty", "--json", "@J"], "empty.json"),
    case(&["simulate", "--replay", "%simulate", "--json", "@J"], "simulate.json"),
    case(&["simulate", "--replay", "%sweep", "--replay-mechanism", "nope", "--json", "@J"], "nope"),
    case(&["list", "--bogus"], "--bogus"),
    // `sweep`, as its own suite checked it (without --json).
    case(&["sweep", "--durations", "-1ms", "-q"], "-1ms"),
    case(&["sweep", "--durations", "NaN", "-q"], "NaN"),
    case(&["sweep", "--durations", "inf", "-q"], "inf"),
    case(&["sweep", "--durations", "1e400", "-q"], "1e400"),
    case(&["sweep", "--durations", "", "-q"], "\"\""),
    case(&["sweep", "--durations", "1.5.3ms", "-q"], "1.5.3ms"),
    case(&["sweep", "--durations", "5parsecs", "-q"], "5parsecs"),
    case(&["sweep", "--durations", "1ms,,2ms", "-q"], "1ms,,2ms"),
    case(&["sweep", "--durations", "2days", "-q"], "2days"),
    case(&["sweep", "--durations", "90000s", "-q"], "90000s"),
    case(&["sweep", "--durations", "1.5ns", "-q"], "1.5ns"),
    case(&["sweep", "--iterations", "0", "-q"], "0"),
    case(&["sweep", "--iterations", "-5", "-q"], "-5"),
    case(&["sweep", "--iterations", "99999999999999999999", "-q"], "99999999999999999999"),
    case(&["sweep", "--budget", "0", "-q"], "0"),
    case(&["sweep", "--load", "-1", "-q"], "-1"),
    case(&["sweep", "--load", "100000", "-q"], "100000"),
    case(&["sweep", "--rounds", "0", "-q"], "0"),
    case(&["sweep", "--timer-slack", "0", "-q"], "0"),
    case(&["sweep", "--mechanisms", "nanoslep", "-q"], "nanoslep"),
    case(&["sweep", "--mechanisms", "nanoslep"], "did you mean nanosleep"),
    case(&["sweep", "--mechanisms", "nanosleep,", "-q"], "nanosleep,"),
    case(&["sweep", "--iterations", "5", "--budget", "1s", "-q"], "--budget"),
    case(&["sweep", "--timertest", "--durations", "1ms", "-q"], "--durations"),
    case(&["sweep", "--policy", "batch", "-q"], "batch"),
    case(&["sweep", "--policy", "fifo", "--priority", "0", "-q"], "0"),
    case(&["sweep", "--priority", "5", "-q"], "5"),
    case(&["sweep", "--pin", "4096", "-q"], "4096"),
    case(&["sweep", "--min-iterations", "50", "--max-iterations", "10", "-q"], "50"),
    case(&["sweep", "--json", "@D", "-q"], "@D"),
    case(&["sweep", "--csv", "/nonexistent/dir/x.csv", "-q"], "/nonexistent/dir"),
    case(&["sweep", "--frobnicate", "-q"], "--frobnicate"),
    case(&["nonsense-command", "-q"], "nonsense-command"),
    // `short`, as its own suite checked it.
    case(&["short", "-q", "--mechanisms", "nanoslep"], "nanosleep"),
    case(&["short", "-q", "--mechanisms", ""], "empty"),
    case(&["short", "-q", "--mechanisms", "yield,,spin"], "empty element"),
    case(&["short", "-q", "--batch", "0"], "\"0\""),
    case(&["short", "-q", "--batch", "-5"], "\"-5\""),
    case(&["short", "-q", "--batch", "many"], "\"many\""),
    case(&["short", "-q", "--repetitions", "1"], "\"1\""),
    case(&["short", "-q", "--batch-time", "-1ms"], "\"-1ms\""),
    case(&["short", "-q", "--batch-time", "5 parsecs"], "\"5 parsecs\""),
    case(&["short", "-q", "--timer-slack", "0"], "\"0\""),
    case(&["short", "-q", "--timer-slack", "1.5.3ms"], "\"1.5.3ms\""),
    case(&["short", "-q", "--seed", "abc"], "\"abc\""),
    case(&["short", "-q", "--json", "@M"], "--json"),
    case(&["short", "-q", "--csv", "/"], "--csv"),
    case(&["short", "-q", "--pin", "99999"], "--pin 99999"),
    case(&["short", "-q", "--priority", "5"], "--priority 5"),
    case(&["short", "-q", "--policy", "batchy"], "batchy"),
    case(&["short", "-q", "--no-such-flag"], "--no-such-flag"),
    // `simulate`, as its own suite checked it.
    case(&["simulate", "-q", "--strategies", "precsie"], "precise"),
    case(&["simulate", "-q", "--strategies", "spin-sleep"], "spin-sleep"),
    case(&["simulate", "-q", "--strategies", ""], "strategy list"),
    case(&["simulate", "-q", "--intervals", "0"], "\"0\""),
    case(&["simulate", "-q", "--intervals", "5"], "\"5\""),
    case(&["simulate", "-q", "--intervals", "11s"], "\"11s\""),
    case(&["simulate", "-q", "--periods", "10..1ms"], "10..1ms"),
    case(&["simulate", "-q", "--periods", "1..10"], "1..10"),
    case(&["simulate", "-q", "--periods", "1.5..3ms"], "1.5..3ms"),
    case(&["simulate", "-q", "--period", "-1ms"], "-1ms"),
    case(&["simulate", "-q", "--preempt-prob", "1.5"], "1.5"),
    case(&["simulate", "-q", "--preempt-prob", "NaN"], "NaN"),
    case(&["simulate", "-q", "--sleeps", "0"], "\"0\""),
    case(&["simulate", "-q", "--warmup", "-1"], "-1"),
    case(&["simulate", "-q", "--seed", "x"], "\"x\""),
    case(&["simulate", "-q", "--replay-mechanism", "poll"], "--replay"),
    case(&["simulate", "-q", "--replay", "/nonexistent/sweep.json"], "/nonexistent/sweep.json"),
    case(&["simulate", "-q", "--replay", "%notjson"], "notjson.json"),
    case(&["simulate", "-q", "--replay", "%notjson", "--periods", "1ms"], "--periods"),
    case(&["simulate", "-q", "--json", "/nonexistent/dir/x.json"], "/nonexistent/dir/x.json"),
    // `report` and `compare` against a real survey, as their own suite checked them.
    case(&["report", "%missing", "-o", "@O"], "missing.json"),
    case(&["report", "%survey-truncated", "-o", "@O"], "survey-truncated.json"),
    case(&["report", "%hello", "-o", "@O"], "hello.json"),
    case(&["report", "%survey-v99", "-o", "@O"], "survey-v99.json"),
    case(&["compare", "%survey", "%missing"], "missing.json"),
    case(&["compare", "%survey", "%empty"], "empty.json"),
    case(&["compare", "%survey", "%survey-truncated"], "survey-truncated.json"),
    case(&["compare", "%survey", "%notjson"], "notjson.json"),
    case(&["compare", "%survey", "%hello"], "hello.json"),
    case(&["compare", "%survey", "%survey-v99"], "survey-v99.json"),
    case(&["compare", "%missing", "%survey"], "missing.json"),
    case(&["compare", "%empty", "%survey"], "empty.json"),
    case(&["compare", "%survey-truncated", "%survey"], "survey-truncated.json"),
    case(&["compare", "%notjson", "%survey"], "notjson.json"),
    case(&["compare", "%hello", "%survey"], "hello.json"),
    case(&["compare", "%survey-v99", "%survey"], "survey-v99.json"),
    case(&["compare", "%survey-sweep", "%survey-timers"], "share no measurements"),
    case(&["report", "%survey", "-o", "%file"], "not a directory"),
    // A directory holding another run's report (index.html and its results.json).
    case(&["report", "%sweep", "-o", "%other-report"], "other-report"),
    // `runtimes`, as its own suite checked it (without --json).
    case(&["runtimes", "--runtimes", "pyhton"], "did you mean python?"),
    case(&["runtimes", "--runtimes", "rust"], "rust"),
    case(&["runtimes", "--runtimes", "c,,go"], "c,,go"),
    case(&["runtimes", "--durations", "5"], "\"5\""),
    case(&["runtimes", "--durations", "-1ms"], "-1ms"),
    case(&["runtimes", "--budget", "0"], "\"0\""),
    case(&["runtimes", "--count", "0"], "\"0\""),
    case(&["runtimes", "--count", "3", "--budget", "1s"], "--budget"),
    case(&["runtimes", "--max-ideal", "1s", "--budget", "1s"], "--budget"),
    case(&["runtimes", "--max-ideal", "0"], "\"0\""),
    case(&["runtimes", "--max-count", "x"], "\"x\""),
    case(&["runtimes", "--warmup", "-1"], "-1"),
    case(&["runtimes", "--period", "0"], "\"0\""),
    case(&["runtimes", "--ticks", "0"], "\"0\""),
    case(&["runtimes", "--load", "-1"], "-1"),
    case(&["runtimes", "--timer-slack", "0"], "\"0\""),
    case(&["runtimes", "--pin", "4096"], "4096"),
    case(&["runtimes", "--list", "--json", "x.json"], "--json"),
    case(&["runtimes", "--json", "@M"], "no/such/dir"),
    case(&["runtimes", "--runtimes", "c", "--methods", "nanoslep"], "did you mean nanosleep?"),
    case(&["runtimes", "--saved", "%count_mismatch.txt"], "count_mismatch.txt: line 4:"),
    case(&["runtimes", "--saved", "@M"], "cannot read saved probe output"),
    // `timers`, as its own suite checked it (quiet, --json unless given).
    case(&["timers", "--periods", "-1ms", "-q", "--json", "@J"], "-1ms"),
    case(&["timers", "--periods", "0", "-q", "--json", "@J"], "\"0\""),
    case(&["timers", "--periods", "500ns", "-q", "--json", "@J"], "500ns"),
    case(&["timers", "--periods", "1ms,,2ms", "-q", "--json", "@J"], "1ms,,2ms"),
    case(&["timers", "--periods", "NaN", "-q", "--json", "@J"], "NaN"),
    case(&["timers", "--periods", "2s", "-q", "--json", "@J"], "2.000 s"),
    case(&["timers", "--periods", "1us", "--seconds", "10", "-q", "--json", "@J"], "1.000 µs"),
    case(&["timers", "--seconds", "0", "-q", "--json", "@J"], "\"0\""),
    case(&["timers", "--seconds", "-1", "-q", "--json", "@J"], "-1"),
    case(&["timers", "--seconds", "abc", "-q", "--json", "@J"], "abc"),
    case(&["timers", "--seconds", "7200", "-q", "--json", "@J"], "7200"),
    case(&["timers", "--threads", "0", "-q", "--json", "@J"], "\"0\""),
    case(&["timers", "--threads", "65", "-q", "--json", "@J"], "65"),
    case(&["timers", "--load", "-1", "-q", "--json", "@J"], "-1"),
    case(&["timers", "--timer-slack", "0", "-q", "--json", "@J"], "\"0\""),
    case(&["timers", "--histogram-max", "0", "-q", "--json", "@J"], "\"0\""),
    case(&["timers", "--mechanisms", "timerfd", "-q", "--json", "@J"], "timerfd"),
    case(&["timers", "--mechanisms", "busy-wait,", "-q", "--json", "@J"], "busy-wait,"),
    case(&["timers", "--mechanisms", "busy-wiat", "-q", "--json", "@J"], "did you mean busy-wait"),
    case(&["timers", "--policy", "fifo", "--priority", "0", "-q", "--json", "@J"], "0"),
    case(&["timers", "--pin", "4096", "-q", "--json", "@J"], "4096"),
    case(&["timers", "--histogram", "@D", "-q", "--json", "@J"], "@D"),
    case(&["timers", "--json", "/nonexistent/dir/x.json", "-q"], "/nonexistent/dir"),
    case(&["timers", "--frobnicate", "-q", "--json", "@J"], "--frobnicate"),
    // --seconds: one form in every command (a duration, or a plain number of seconds).
    case(&["cpu", "--seconds", "1x", "--json", "@J"], "1x"),
    case(&["advise", "--duration", "1ms", "--tolerance", "1us", "--seconds", "0", "--json", "@J"], "\"0\""),
    case(&["timers", "--seconds", "0s", "--json", "@J"], "0s"),
    case(&["--quick", "list"], "--quick"),
    case(&["--stages", "nope", "-o", "@O"], "unknown stage"),
];

/// Runs the binary, asserting success; for making fixtures.
fn make(args: &[&str]) {
    let out = Command::new(bin()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Writes the fixture files into `dir`: a real sweep and simulate result, and broken ones.
fn fixtures(dir: &Path) {
    let p = |name: &str| dir.join(name).display().to_string();
    make(&[
        "sweep",
        "-q",
        "--mechanisms",
        "yield",
        "--durations",
        "0",
        "--iterations",
        "3",
        "--rounds",
        "1",
        "--warmup",
        "0",
        "--json",
        &p("sweep.json"),
    ]);
    make(&[
        "simulate",
        "-q",
        "--strategies",
        "std-sleep",
        "--intervals",
        "1ms",
        "--periods",
        "1ms",
        "--sleeps",
        "3",
        "--warmup",
        "0",
        "--json",
        &p("simulate.json"),
    ]);
    let good = std::fs::read_to_string(dir.join("sweep.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&good).unwrap();
    let with = |key: &str, v: serde_json::Value| {
        let mut x = value.clone();
        x[key] = v;
        x.to_string()
    };
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("empty.json", vec![]),
        ("blank.json", b"  \n\t\n".to_vec()),
        ("truncated.json", good.as_bytes()[..good.len() / 2].to_vec()),
        ("notjson.json", b"hello, world\n".to_vec()),
        ("array.json", b"[1, 2, 3]".to_vec()),
        ("noversion.json", b"{\"experiment\": \"sweep\"}".to_vec()),
        ("v999.json", with("schema_version", 999.into()).into_bytes()),
        (
            "vstring.json",
            with("schema_version", "1".into()).into_bytes(),
        ),
        (
            "wrongexp.json",
            with("experiment", "teleport".into()).into_bytes(),
        ),
        (
            "baddata.json",
            with("data", serde_json::json!({"cells": "none"})).into_bytes(),
        ),
        ("binary.json", b"\xff\xfe\x00\x01garbage".to_vec()),
    ];
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    std::fs::create_dir(dir.join("dir")).unwrap();
    std::fs::write(dir.join("file"), "x").unwrap();
    std::fs::write(dir.join("hello.json"), "{\"hello\": 1}").unwrap();
    // A probe output that breaks the protocol (`runtimes --saved`).
    std::fs::copy(
        common::repo_root().join("spec/vectors/invalid/count_mismatch.txt"),
        dir.join("count_mismatch.txt"),
    )
    .unwrap();
    // A real survey (the report fixture), and files made from it.
    let survey = std::fs::read_to_string(
        common::repo_root().join("crates/sleeplab-cli/tests/fixtures/survey.json"),
    )
    .unwrap();
    std::fs::write(dir.join("survey.json"), &survey).unwrap();
    std::fs::write(
        dir.join("survey-truncated.json"),
        &survey[..survey.len() / 2],
    )
    .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&survey).unwrap();
    for stage in ["sweep", "timers"] {
        let result = v["data"]["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["experiment"] == stage)
            .unwrap()
            .to_string();
        std::fs::write(dir.join(format!("survey-{stage}.json")), result).unwrap();
    }
    v["schema_version"] = 99.into();
    std::fs::write(dir.join("survey-v99.json"), v.to_string()).unwrap();
    // Another run's report: an index and the results it was rendered from.
    let other = dir.join("other-report");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("index.html"), "<html></html>").unwrap();
    std::fs::copy(dir.join("survey.json"), other.join("results.json")).unwrap();
}

/// An argument (or the text to name) with its placeholder filled in.
fn expand(a: &str, out: &Path, fx: &Path) -> String {
    match a {
        "@J" => out.join("out.json").display().to_string(),
        "@C" => out.join("out.csv").display().to_string(),
        "@D" => out.display().to_string(),
        "@O" => out.join("report").display().to_string(),
        "@M" => out.join("no/such/dir/out.json").display().to_string(),
        a if a.starts_with('%') => {
            let name = &a[1..];
            let file = if fx.join(name).exists() {
                name.to_string()
            } else {
                format!("{name}.json")
            };
            fx.join(file).display().to_string()
        }
        a => a.to_string(),
    }
}

/// Runs one case; returns what is wrong with its outcome, if anything.
fn check(c: &Case, root: &Path, fx: &Path, i: usize) -> Option<String> {
    let out = root.join(format!("case{i}"));
    std::fs::create_dir(&out).unwrap();
    let args: Vec<String> = c.args.iter().map(|a| expand(a, &out, fx)).collect();
    let o = Command::new(bin())
        .args(&args)
        .current_dir(&out)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let mut wrong = common::exit2::exit_2_problems(&o, &expand(c.names, &out, fx));
    let left: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    if !left.is_empty() {
        wrong.push(format!("left files behind: {left:?}"));
    }
    (!wrong.is_empty()).then(|| format!("{args:?}: {}\n    stderr: {stderr}", wrong.join("; ")))
}

#[test]
fn every_bad_invocation_exits_2_with_one_line_and_leaves_no_file() {
    let root = tempfile::tempdir().unwrap();
    let fx = root.path().join("fixtures");
    std::fs::create_dir(&fx).unwrap();
    fixtures(&fx);
    let fixture_files = listing(&fx);
    // Two workers: each case is a process start and a validation.
    let failures: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let (root, fx) = (root.path(), fx.as_path());
                s.spawn(move || {
                    CASES
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| i % 2 == w)
                        .filter_map(|(i, c)| check(c, root, fx, i))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    // The fixtures are read, never written.
    assert_eq!(listing(&fx), fixture_files, "fixture directory changed");
    eprintln!(
        "bad input: {} invocations tried, {} wrong",
        CASES.len(),
        failures.len()
    );
    assert!(CASES.len() >= 200);
    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// The files of a directory with their sizes, sorted.
fn listing(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    v.sort();
    v
}

/// The table has a case for every subcommand (and for the survey's options at the top).
#[test]
fn every_command_has_a_bad_input_case() {
    let commands: BTreeSet<String> = sleeplab_cli::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|n| n != "help")
        .collect();
    let covered: BTreeSet<String> = CASES.iter().map(|c| c.args[0].to_string()).collect();
    let missing: Vec<&String> = commands.difference(&covered).collect();
    assert!(missing.is_empty(), "no bad-input case for {missing:?}");
    assert!(
        covered.contains("--quick"),
        "no case for the survey's options"
    );
}
