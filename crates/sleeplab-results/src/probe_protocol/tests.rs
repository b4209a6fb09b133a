//! The parser against the spec's test vectors, by hand, and under random input.

use super::*;
use proptest::prelude::*;
use std::path::PathBuf;

fn vectors(dir: &str) -> Vec<(String, Vec<u8>)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../spec/vectors")
        .join(dir);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("readable vector"))
        })
        .collect();
    out.sort();
    out
}

fn load(dir: &str, name: &str) -> Vec<u8> {
    vectors(dir)
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("vector {dir}/{name} is missing"))
        .1
}

#[test]
fn every_valid_vector_parses() {
    let all = vectors("valid");
    assert!(all.len() >= 4, "{} valid vectors", all.len());
    for (name, bytes) in all {
        match parse_output(&bytes) {
            Err(e) => panic!("valid/{name} was rejected: {e}"),
            Ok(Output::Measurement(m)) => starts_match_the_header(&name, &m),
            Ok(Output::List(_)) => {}
        }
    }
}

/// With timestamps, every one-shot line has its start and every periodic cell its t0;
/// without, none has.
fn starts_match_the_header(name: &str, m: &Measurement) {
    let oneshot = m.header.timestamps && m.mode == Mode::Oneshot;
    let periodic = m.header.timestamps && m.mode == Mode::Periodic;
    for c in &m.cells {
        let len = |v: &Option<Vec<u64>>| v.as_ref().map(Vec::len);
        assert_eq!(
            len(&c.warmup_starts_ns),
            oneshot.then_some(c.warmup.len()),
            "{name}"
        );
        assert_eq!(
            len(&c.starts_ns),
            oneshot.then_some(c.samples.len()),
            "{name}"
        );
        assert_eq!(c.t0_ns.is_some(), periodic, "{name}");
    }
}

#[test]
fn every_invalid_vector_is_rejected() {
    let all = vectors("invalid");
    assert!(all.len() >= 20, "{} invalid vectors", all.len());
    for (name, bytes) in all {
        match parse_output(&bytes) {
            Ok(out) => panic!("invalid/{name} was accepted: {out:?}"),
            Err(e) => {
                assert!(e.line >= 1, "{name}: {e}");
                // Neither entry point accepts it.
                assert!(parse_list(&bytes).is_err(), "{name} accepted as a list");
                assert!(
                    parse_measurement(&bytes).is_err(),
                    "{name} accepted as a measurement"
                );
            }
        }
    }
}

/// `spec/vectors/stopped/`: output of probes killed midway. `keptN_*` keep N finished
/// cells (`*_whole` reached its `end` after all), `broken_*` break the protocol before
/// the cut.
#[test]
fn stopped_vectors_keep_their_finished_cells() {
    let all = vectors("stopped");
    assert!(all.len() >= 6, "{} stopped vectors", all.len());
    for (name, bytes) in all {
        let got = parse_stopped(&bytes);
        if name.starts_with("broken_") {
            assert!(got.is_err(), "stopped/{name} was accepted: {got:?}");
            continue;
        }
        let kept: usize = name
            .strip_prefix("kept")
            .and_then(|r| r.split('_').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("stopped/{name}: name it keptN_ or broken_"));
        let s = got.unwrap_or_else(|e| panic!("stopped/{name} was rejected: {e}"));
        assert_eq!(s.measurement.cells.len(), kept, "{name}");
        assert_eq!(s.ended, name.ends_with("_whole.txt"), "{name}");
        // A whole output parses the strict way too; a cut one does not.
        assert_eq!(parse_measurement(&bytes).is_ok(), s.ended, "{name}");
    }
    let cut = parse_stopped(&load("stopped", "kept2_in_third_cell.txt")).unwrap();
    assert_eq!(cut.unfinished_cell, Some(8));
    let values: Vec<u64> = cut.measurement.cells.iter().map(|c| c.value_ns).collect();
    assert_eq!(values, [1_000_000, 100_000]);
    let mid = parse_stopped(&load("stopped", "kept1_cut_mid_line.txt")).unwrap();
    assert_eq!(mid.unfinished_cell, Some(6));
}

#[test]
fn list_options_are_read_from_the_header() {
    let l = parse_list(&load("valid", "list_options.txt")).unwrap();
    assert_eq!(l.header.options(), [OPTION_MLOCK]);
    assert!(
        parse_list(&load("valid", "list.txt"))
            .unwrap()
            .header
            .options()
            .is_empty()
    );
    let e = parse_list(&load("invalid", "list_options_not_strings.txt")).unwrap_err();
    assert!(e.to_string().contains("options"), "{e}");
}

#[test]
fn timestamps_and_tid_are_read() {
    let m = parse_measurement(&load("valid", "oneshot_timestamps.txt")).unwrap();
    assert_eq!((m.header.tid, m.header.timestamps), (Some(4242), true));
    assert!(
        !m.header.extra.contains_key("tid"),
        "tid is a field of its own"
    );
    let c = &m.cells[0];
    assert_eq!(
        c.warmup_starts_ns.as_deref(),
        Some(&[5_100_000_000_000][..])
    );
    assert_eq!(
        c.starts_ns.as_deref(),
        Some(&[5_100_001_080_000, 5_100_002_150_000][..])
    );
    assert_eq!(c.samples, [1_065_432, 1_071_111]);
    assert_eq!(c.comments.len(), 2);
    // Equal starts (a call of 0 ns) are allowed.
    assert_eq!(
        m.cells[1].starts_ns.as_deref(),
        Some(&[5_100_003_300_000, 5_100_003_300_000][..])
    );
    assert_eq!(c.t0_ns, None);

    let p = parse_measurement(&load("valid", "periodic_timestamps.txt")).unwrap();
    assert_eq!((p.header.tid, p.header.timestamps), (None, true));
    assert_eq!(p.cells[0].t0_ns, Some(5_100_000_000_000));
    assert_eq!(p.cells[0].warmup, [10_050_000]);
    assert_eq!(p.cells[0].samples, [20_061_000, 30_049_000]);
    assert_eq!(p.cells[0].starts_ns, None);

    let t = parse_measurement(&load("valid", "tid_without_timestamps.txt")).unwrap();
    assert_eq!((t.header.tid, t.header.timestamps), (Some(1), false));
    assert_eq!(t.cells[0].starts_ns, None);
    let f = parse_measurement(&load("valid", "timestamps_false.txt")).unwrap();
    assert_eq!(
        (f.header.tid, f.header.timestamps),
        (Some(i32::MAX as u32), false)
    );

    let l = parse_list(&load("valid", "list_options_timestamps.txt")).unwrap();
    assert_eq!(
        l.header.options(),
        [OPTION_MLOCK, OPTION_TIMESTAMPS, "some-future-option"]
    );
    // Outputs from before timestamps read as they did.
    let old = parse_measurement(&load("valid", "oneshot_two_cells.txt")).unwrap();
    assert_eq!((old.header.tid, old.header.timestamps), (None, false));
}

#[test]
fn timestamp_errors_name_the_line_and_the_problem() {
    let cases: [(&str, usize, &str); 12] = [
        (
            "timestamps_without_option.txt",
            3,
            "does not say \"timestamps\":true",
        ),
        (
            "timestamps_missing_start.txt",
            4,
            "needs two fields, elapsed and start",
        ),
        (
            "timestamps_warmup_missing_start.txt",
            3,
            "`w` line needs two fields",
        ),
        ("timestamps_three_fields.txt", 3, "needs 2 field(s)"),
        (
            "timestamps_start_decreasing.txt",
            4,
            "call start 5100000001000 ns is before",
        ),
        (
            "timestamps_start_decreasing_across_cells.txt",
            6,
            "is before the previous",
        ),
        (
            "timestamps_not_bool.txt",
            1,
            "\"timestamps\" must be true or false",
        ),
        (
            "t0_missing.txt",
            3,
            "the periodic cell of line 2 has no `t0` line",
        ),
        ("t0_twice.txt", 4, "a second one in the cell of line 2"),
        (
            "t0_tick_with_start.txt",
            4,
            "gives its start on its `t0` line",
        ),
        (
            "tid_zero.txt",
            1,
            "\"tid\" must be a positive integer below 2^31",
        ),
        (
            "list_with_tid.txt",
            1,
            "must not have `tid` or `timestamps`",
        ),
    ];
    for (name, line, needle) in cases {
        let e = parse_output(&load("invalid", name)).unwrap_err();
        assert_eq!(e.line, line, "{name}: {e}");
        assert!(
            e.to_string().contains(needle),
            "{name}: {e} lacks {needle:?}"
        );
    }
}

#[test]
fn list_vector_exact() {
    let l = parse_list(&load("valid", "list.txt")).unwrap();
    assert_eq!(l.header.runtime, "python");
    assert_eq!(l.header.implementation, "CPython");
    assert_eq!(l.header.runtime_version, "3.11.7");
    assert_eq!(l.header.clock, "time.perf_counter_ns");
    assert_eq!(l.header.platform, "linux x86_64");
    assert_eq!(l.header.method, None);
    assert!(l.header.extra.is_empty());
    let names: Vec<(&str, Kind, bool)> = l
        .methods
        .iter()
        .map(|m| (m.method.as_str(), m.kind, m.available))
        .collect();
    assert_eq!(
        names,
        [
            ("time.sleep", Kind::Oneshot, true),
            ("os.sched_yield", Kind::Yield, true),
            ("threading.Timer", Kind::Periodic, false),
        ]
    );
    assert_eq!(l.methods[2].reason.as_deref(), Some("not on this runtime"));
    assert_eq!(
        l.methods[0].description,
        "time.sleep(seconds) with a float argument"
    );
    assert_eq!(l.methods[0].reason, None);
}

#[test]
fn oneshot_vector_exact() {
    let m = parse_measurement(&load("valid", "oneshot_two_cells.txt")).unwrap();
    assert_eq!(m.method, "time.sleep");
    assert_eq!(m.mode, Mode::Oneshot);
    assert_eq!(m.cells.len(), 2);
    assert_eq!(m.cells[0].value_ns, 1_000_000);
    assert_eq!(m.cells[0].warmup, [1_071_234]);
    assert_eq!(m.cells[0].samples, [1_065_432, 1_071_111]);
    assert_eq!(m.cells[0].line, 2);
    assert_eq!(m.cells[1].value_ns, 100_000);
    assert!(m.cells[1].warmup.is_empty());
    assert_eq!(m.cells[1].samples, [160_123]);
    assert!(m.trailing_comments.is_empty());
}

#[test]
fn periodic_vector_exact() {
    let m = parse_measurement(&load("valid", "periodic.txt")).unwrap();
    assert_eq!(m.method, "time.Ticker");
    assert_eq!(m.mode, Mode::Periodic);
    assert_eq!(m.header.runtime, "go");
    assert_eq!(m.cells.len(), 1);
    assert_eq!(m.cells[0].value_ns, 10_000_000);
    assert_eq!(m.cells[0].warmup, [10_050_000]);
    assert_eq!(m.cells[0].samples, [20_061_000, 30_049_000, 40_102_000]);
}

#[test]
fn crlf_comment_extra_vector_exact() {
    let m = parse_measurement(&load("valid", "crlf_comment_extra_field.txt")).unwrap();
    assert_eq!(m.header.extra.get("extra"), Some(&Value::from(1)));
    assert_eq!(m.header.runtime_version, "12.2.0");
    assert_eq!(m.cells.len(), 1);
    assert_eq!(m.cells[0].samples, [0, u64::MAX]);
    assert_eq!(
        m.cells[0].comments,
        [Comment {
            line: 2,
            text: "a comment line".into()
        }]
    );
}

#[test]
fn errors_name_the_line() {
    let cases: [(&str, usize, &str); 8] = [
        ("", 1, "no output"),
        (
            "{\"protocol\":\"sleeplab-probe/1\"}\n",
            1,
            "\"runtime\" is missing",
        ),
        (
            &load_str("invalid", "count_mismatch.txt"),
            4,
            "says 2 samples but the cell has 1",
        ),
        (&load_str("invalid", "blank_line.txt"), 3, "blank line"),
        (&load_str("invalid", "missing_end.txt"), 5, "missing `end`"),
        (&load_str("invalid", "data_after_end.txt"), 6, "after `end`"),
        (&load_str("invalid", "negative_sample.txt"), 3, "\"-5\""),
        (
            &load_str("invalid", "periodic_decreasing.txt"),
            4,
            "before the previous one",
        ),
    ];
    for (input, line, needle) in cases {
        let e = parse_output(input.as_bytes()).unwrap_err();
        assert_eq!(e.line, line, "{e}");
        assert!(e.to_string().contains(needle), "{e} lacks {needle:?}");
        assert!(e.to_string().starts_with(&format!("line {line}: ")), "{e}");
    }
}

fn load_str(dir: &str, name: &str) -> String {
    String::from_utf8(load(dir, name)).unwrap()
}

const HEAD: &str = "{\"protocol\":\"sleeplab-probe/1\",\"runtime\":\"c\",\"implementation\":\"gcc\",\"runtime_version\":\"12\",\"clock\":\"m\",\"platform\":\"linux\",\"method\":\"m\",\"mode\":\"oneshot\"}\n";

#[test]
fn comments_attach_to_the_next_or_current_cell() {
    let text = format!(
        "{HEAD}# before\ncell 5\n#\n# inside\ns 6\ndone 5 1\n# between\ncell 7\ns 8\ndone 7 1\n# after\nend\n"
    );
    let m = parse_measurement(text.as_bytes()).unwrap();
    let texts = |c: &[Comment]| c.iter().map(|c| c.text.clone()).collect::<Vec<_>>();
    assert_eq!(texts(&m.cells[0].comments), ["before", "", "inside"]);
    assert_eq!(texts(&m.cells[1].comments), ["between"]);
    assert_eq!(texts(&m.trailing_comments), ["after"]);
}

#[test]
fn list_and_measurement_are_not_confused() {
    let list = load("valid", "list.txt");
    assert!(parse_measurement(&list).is_err());
    let meas = load("valid", "periodic.txt");
    let e = parse_list(&meas).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::WrongOutputKind(_)), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn never_panics_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse_output(&bytes);
        let _ = parse_list(&bytes);
        let _ = parse_measurement(&bytes);
    }

    #[test]
    fn never_panics_on_plausible_lines(
        header in prop_oneof![
            Just(HEAD.trim_end().to_string()),
            Just(HEAD.trim_end().replace("oneshot", "periodic")),
            Just("{\"protocol\":\"sleeplab-probe/1\",\"runtime\":\"c\",\"implementation\":\"gcc\",\"runtime_version\":\"12\",\"clock\":\"m\",\"platform\":\"linux\"}".to_string()),
            Just(HEAD.trim_end().replace("}", ",\"timestamps\":true,\"tid\":7}")),
            Just(HEAD.trim_end().replace("oneshot", "periodic").replace("}", ",\"timestamps\":true}")),
            "\\PC{0,40}",
        ],
        body in proptest::collection::vec(
            prop_oneof![
                (prop_oneof![Just("cell"), Just("w"), Just("s"), Just("t"), Just("t0"), Just("done"), Just("x")],
                 proptest::collection::vec(prop_oneof![Just("0".to_string()), Just("18446744073709551616".to_string()), "[0-9]{1,20}", "\\PC{0,4}"], 0..3))
                    .prop_map(|(t, f)| if f.is_empty() { t.to_string() } else { format!("{t} {}", f.join(" ")) }),
                Just("end".to_string()),
                Just(String::new()),
                "# \\PC{0,10}",
                Just("{\"method\":\"a\",\"kind\":\"oneshot\",\"available\":false,\"description\":\"d\"}".to_string()),
                "\\PC{0,30}",
            ],
            0..30),
        crlf in any::<bool>(),
        final_newline in any::<bool>(),
    ) {
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut text = header;
        for l in &body {
            text.push_str(eol);
            text.push_str(l);
        }
        if final_newline {
            text.push_str(eol);
        }
        let _ = parse_output(text.as_bytes());
        let _ = parse_list(text.as_bytes());
        let _ = parse_measurement(text.as_bytes());
    }

    /// Well-formed output built from random cells always parses back to those cells.
    #[test]
    fn round_trips(cells in proptest::collection::vec(
        (any::<u64>(), proptest::collection::vec(any::<u64>(), 0..4), proptest::collection::vec(any::<u64>(), 0..6)),
        0..5))
    {
        let mut text = HEAD.to_string();
        for (v, w, s) in &cells {
            text.push_str(&format!("cell {v}\n"));
            for x in w { text.push_str(&format!("w {x}\n")); }
            for x in s { text.push_str(&format!("s {x}\n")); }
            text.push_str(&format!("done {v} {}\n", s.len()));
        }
        text.push_str("end\n");
        let m = parse_measurement(text.as_bytes()).unwrap();
        prop_assert_eq!(m.cells.len(), cells.len());
        for (c, (v, w, s)) in m.cells.iter().zip(&cells) {
            prop_assert_eq!(c.value_ns, *v);
            prop_assert_eq!(&c.warmup, w);
            prop_assert_eq!(&c.samples, s);
        }
    }
}

/// A well-formed output with timestamps from random cells: every call starts at or
/// after the previous one's start.
fn timestamped_text(cells: &[(u64, Vec<u64>, Vec<u64>)], gaps: &[u64], first: u64) -> String {
    let mut text = HEAD.replace("}", ",\"timestamps\":true}");
    let mut start = first;
    let mut gap = gaps.iter().cycle();
    for (v, w, s) in cells {
        text.push_str(&format!("cell {v}\n"));
        for (ty, values) in [("w", w), ("s", s)] {
            for x in values {
                text.push_str(&format!("{ty} {x} {start}\n"));
                start += gap.next().copied().unwrap_or(0);
            }
        }
        text.push_str(&format!("done {v} {}\n", s.len()));
    }
    text.push_str("end\n");
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Starts parse back in order beside their samples; moving any start below the one
    /// before it makes the output invalid.
    #[test]
    fn timestamps_round_trip_and_never_decrease(
        cells in proptest::collection::vec(
            (any::<u32>().prop_map(u64::from),
             proptest::collection::vec(0u64..1 << 40, 0..3),
             proptest::collection::vec(0u64..1 << 40, 0..5)),
            1..4),
        gaps in proptest::collection::vec(0u64..1 << 30, 1..8),
        first in 1u64..1 << 62,
        victim in any::<prop::sample::Index>(),
    ) {
        let text = timestamped_text(&cells, &gaps, first);
        let m = parse_measurement(text.as_bytes()).unwrap();
        let mut seen: Vec<u64> = Vec::new();
        for (c, (_, w, s)) in m.cells.iter().zip(&cells) {
            prop_assert_eq!(&c.warmup, w);
            prop_assert_eq!(&c.samples, s);
            let (ws, ss) = (c.warmup_starts_ns.clone().unwrap(), c.starts_ns.clone().unwrap());
            prop_assert_eq!((ws.len(), ss.len()), (w.len(), s.len()));
            seen.extend(ws);
            seen.extend(ss);
        }
        prop_assert!(seen.windows(2).all(|p| p[0] <= p[1]));
        prop_assert_eq!(seen.first().copied(), (!seen.is_empty()).then_some(first));
        // A start one below its predecessor's breaks the order.
        let lines: Vec<&str> = text.lines().collect();
        let sample_lines: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].starts_with("w ") || lines[i].starts_with("s "))
            .collect();
        if sample_lines.len() >= 2 {
            let k = 1 + victim.index(sample_lines.len() - 1);
            let previous_start: u64 = lines[sample_lines[k - 1]].rsplit(' ').next().unwrap().parse().unwrap();
            let mut fields: Vec<String> = lines[sample_lines[k]].split(' ').map(String::from).collect();
            fields[2] = (previous_start - 1).to_string();
            let mut broken: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            broken[sample_lines[k]] = fields.join(" ");
            let e = parse_measurement(format!("{}\n", broken.join("\n")).as_bytes()).unwrap_err();
            prop_assert_eq!(e.line, sample_lines[k] + 1);
            prop_assert!(matches!(e.kind, ErrorKind::StartDecreasing { .. }), "{}", e);
        }
    }
}
