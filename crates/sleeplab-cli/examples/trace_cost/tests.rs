//! The trace_cost example's tests: its arithmetic, on numbers given by hand.

use super::report::{Outcome, Side, fmt_ci};
use super::*;
use sleeplab_stats::Ci;

#[test]
fn a_side_pools_its_blocks() {
    let a = Block {
        lateness_ns: vec![10, 30, 20],
        wall_ns: 1_000,
        busy_ns: 50,
        process_ns: 10,
        events: 4,
        drain_ns: 40,
        traced_wakes: 3,
        ..Block::default()
    };
    let b = Block {
        lateness_ns: vec![40, -5, 60],
        wall_ns: 1_000,
        busy_ns: 30,
        process_ns: 30,
        ..Block::default()
    };
    let s = Side::of(&[&a, &b]);
    assert_eq!(s.n, 6);
    // Sorted: -5 10 20 30 40 60: the linear median is 25.
    assert_eq!(s.median_ns, Some(25.0));
    // Six samples: the median's interval runs from the first to the sixth.
    assert_eq!(s.interval, Some(Ci(Some(-5.0), Some(60.0))));
    assert_eq!(s.p99_ns, None);
    assert_eq!((s.busy_pct, s.process_pct), (4.0, 2.0));
    assert_eq!(s.drain_ns_per_event, Some(10.0));
    assert_eq!(s.traced_wakes, 3);
}

#[test]
fn the_report_judges_each_traced_side_on_intervals() {
    let blk = |late: i64, busy: u64| Block {
        lateness_ns: vec![late; 10],
        wall_ns: 1_000_000_000,
        busy_ns: busy,
        cpus: 2,
        ..Block::default()
    };
    // Six rounds; the cells' tracing adds `late` − 50 µs to every wake and `extra`
    // busy time a second, the program's 2 µs and 1.5 ms, by BPF 1.5 µs and 1 ms, with
    // the idle states 2.5 µs and 2 ms, light 1 µs and 1 ms, the program's by the pid
    // list 3 µs and 1.5 ms, the bare instance 0.5 µs and 0.5 ms.
    let ms = 1_000_000;
    let rounds = |late: i64, extra: [u64; 6]| -> Vec<[Block; MODES]> {
        extra
            .iter()
            .map(|&e| {
                [
                    blk(50_000, 10 * ms),
                    blk(late, 10 * ms + e),
                    blk(52_000, 11 * ms + ms / 2),
                    blk(51_500, 11 * ms),
                    blk(52_500, 12 * ms),
                    blk(51_000, 11 * ms),
                    blk(53_000, 11 * ms + ms / 2),
                    blk(50_500, 10 * ms + ms / 2),
                ]
            })
            .collect()
    };
    let lines = report(
        "x",
        &rounds(51_000, [4 * ms, 5 * ms, 6 * ms, 4 * ms, 5 * ms, 6 * ms]),
        ms,
    )
    .join("\n");
    assert!(
        lines.contains(
            "- ✅ traced: median lateness, traced − untraced: 1.00 µs [1.00 µs – 1.00 µs]"
        ),
        "{lines}"
    );
    assert!(
        lines.contains("- ✅ traced: machine CPU at 1000 Hz, traced − untraced: 0.500 [0.400 – 0.600] % of a core"),
        "{lines}"
    );
    assert!(lines.contains("target ≤ 1 %;"), "{lines}");
    assert!(
        lines.contains("- ✅ program, light: machine CPU at 1000 Hz, traced − untraced: 0.100 "),
        "{lines}"
    );
    assert!(
        lines.contains("- ✅ program: machine CPU at 1000 Hz, traced − untraced: 0.150 "),
        "{lines}"
    );
    assert!(
        lines.contains("- ✅ program, BPF: machine CPU at 1000 Hz, traced − untraced: 0.100 "),
        "{lines}"
    );
    // 2 µs on a 2 µs target: the interval [2, 2] lies at it, met.
    assert!(
        lines.contains("- ✅ program: median lateness, traced − untraced: 2.00 µs"),
        "{lines}"
    );
    assert!(
        lines.contains("- ✅ program, BPF: median lateness, traced − untraced: 1.50 µs"),
        "{lines}"
    );
    // 3 µs and 2 % of a core: both missed, for the full tracer only; 0.5–1.5 %: undecided.
    let lines = report("x", &rounds(53_000, [20 * ms; 6]), ms).join("\n");
    assert!(
        lines.contains("- ❌ traced: median lateness, traced − untraced: 3.00 µs"),
        "{lines}"
    );
    assert!(lines.contains("- ❌ traced: machine CPU at"), "{lines}");
    assert!(
        lines.contains("- ✅ program, light: median lateness, traced − untraced: 1.00 µs"),
        "{lines}"
    );
    let spread = [5 * ms, 15 * ms, 8 * ms, 12 * ms, 6 * ms, 14 * ms];
    let lines = report("x", &rounds(51_000, spread), ms).join("\n");
    assert!(lines.contains("- ⚪ traced: machine CPU at"), "{lines}");
    // The table has a row per mode, the untraced one first.
    let rows: Vec<&str> = lines.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(rows.len(), 9, "{lines}");
    assert!(rows[1].starts_with("| untraced | 60 |"), "{lines}");
    assert!(rows[3].starts_with("| program | 60 |"), "{lines}");
    assert!(rows[4].starts_with("| program, BPF | 60 |"), "{lines}");
    assert!(
        rows[5].starts_with("| program, idle states | 60 |"),
        "{lines}"
    );
    assert!(rows[6].starts_with("| program, light | 60 |"), "{lines}");
    assert!(rows[7].starts_with("| program, pid list | 60 |"), "{lines}");
    assert!(
        lines.contains("- ❌ program, idle states: median lateness, traced − untraced: 2.50 µs"),
        "{lines}"
    );
    assert!(
        lines.contains("- ❌ program, pid list: median lateness, traced − untraced: 3.00 µs"),
        "{lines}"
    );
    // The bare instance is judged as the tracers are, and its wakes are not accounted.
    assert!(rows[8].starts_with("| bare ftrace | 60 |"), "{lines}");
    assert!(rows[8].ends_with("| – |"), "{lines}");
    assert!(
        lines.contains("- ✅ bare ftrace: median lateness, traced − untraced: 0.50 µs"),
        "{lines}"
    );
    // Two rounds give the rounds' median no interval; a saturated machine no verdict.
    let two: Vec<_> = rounds(51_000, [4 * ms; 6]).into_iter().take(2).collect();
    let lines = report("x", &two, ms).join("\n");
    assert!(lines.contains("- – (not judged: 2 rounds"), "{lines}");
    let mut saturated = [(); MODES].map(|_| blk(50_000, 2_000 * ms));
    saturated[0] = blk(50_000, 1_950 * ms);
    let busy = vec![saturated; 6];
    let lines = report("x", &busy, ms).join("\n");
    assert!(
        lines.contains("- – (not judged: the machine was busy"),
        "{lines}"
    );
}

#[test]
fn outcomes_of_intervals() {
    let c = |l: f64, h: f64| Some(Ci(Some(l), Some(h)));
    assert_eq!(Outcome::of(c(1.0, 2.0), 2.0), Some(Outcome::Met));
    assert_eq!(Outcome::of(c(2.5, 3.0), 2.0), Some(Outcome::Missed));
    assert_eq!(Outcome::of(c(1.0, 3.0), 2.0), Some(Outcome::Undecided));
    assert_eq!(
        Outcome::of(Some(Ci(None, Some(1.0))), 2.0),
        Some(Outcome::Met)
    );
    assert_eq!(
        Outcome::of(Some(Ci(Some(1.0), None)), 2.0),
        Some(Outcome::Undecided)
    );
    assert_eq!(Outcome::of(None, 2.0), None);
    assert_eq!(fmt_ci(c(1.0, 2.0), |v| format!("{v}")), "[1 – 2]");
    assert_eq!(
        fmt_ci(Some(Ci(Some(1.0), None)), |v| format!("{v}")),
        "[≥ 1]"
    );
    assert_eq!(fmt_ci(None, |v| format!("{v}")), "[–]");
}

#[test]
fn event_lists_parse_or_name_the_bad_item() {
    let l = parse_events("sched:sched_waking, irq_vectors:local_timer_entry").unwrap();
    assert_eq!(
        l.to_string(),
        "sched:sched_waking, irq_vectors:local_timer_entry"
    );
    assert_eq!(
        parse_events("sched").unwrap_err(),
        "\"sched\": not system:event"
    );
    assert!(parse_events("sched:").is_err());
    assert!(parse_events(":x").is_err());
}
