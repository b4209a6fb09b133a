//! The synthetic inputs the walk over every verdict draws from: sweeps, pace results,
//! runtimes' one-shot cells and tune arms, each shaped by proptest (the units behind each
//! statistic: their count, width, and whether the interval is open above).

use crate::testdata::{cell, result, sweep};
use proptest::prelude::*;
use sleeplab_results::model::{ExperimentData, ResultFile};
use sleeplab_results::pace::PaceResult;
use sleeplab_results::runtimes::OneshotCell;
use sleeplab_results::sweep::SweepCell;
use sleeplab_stats::{Ci, Unit, UnitIntervals, summarize};

/// Intervals over `n` units around a summary-like set of values: each statistic's
/// interval is ±`w` of its value (open above where `open`); none at all below 8 units.
pub(super) fn units(
    s: &sleeplab_stats::Summary,
    unit: Unit,
    n: u64,
    w: f64,
    open: bool,
) -> UnitIntervals {
    let ci = |v: Option<f64>| {
        v.filter(|_| n >= sleeplab_stats::MIN_UNITS)
            .map(|v| Ci(Some(v * (1.0 - w)), (!open).then_some(v * (1.0 + w))))
    };
    UnitIntervals {
        unit,
        units: n,
        median_ci_ns: ci(Some(s.median_ns)),
        p90_ci_ns: ci(s.p90_ns),
        p99_ci_ns: ci(s.p99_ns),
        p999_ci_ns: ci(s.p999_ns),
        mean_ci_ns: ci(Some(s.mean_ns)),
    }
}

/// How a synthetic result's units vary: none (a result written before them), a count
/// of units, the width of their intervals, whether the upper ends are open.
pub(super) type Shape = (Option<u64>, f64, bool);

pub(super) fn arb_shape() -> impl Strategy<Value = Shape> {
    (
        prop_oneof![Just(None), Just(Some(4u64)), Just(Some(10)), Just(Some(40))],
        0.0f64..0.6,
        any::<bool>(),
    )
}

/// A sweep cell with this median (and count), its units shaped by `shape`.
pub(super) fn sweep_cell(
    m: &str,
    d: u64,
    load: usize,
    slack: u64,
    median: f64,
    shape: Shape,
) -> SweepCell {
    let mut c = cell(m, d, load, slack, median);
    c.units = shape
        .0
        .map(|n| units(&c.summary, Unit::Round, n, shape.1, shape.2));
    c
}

/// A main sweep (idle and loaded) and a slack sweep (two slacks) of `mechs`, medians
/// from `v`.
pub(super) fn sweeps(v: &[(f64, f64, f64, Shape)]) -> ResultFile {
    const MECHS: [&str; 7] = [
        "nanosleep",
        "select",
        "timerfd",
        "epoll",
        "clock-nanosleep",
        "futex-waitv",
        "io-uring-timeout",
    ];
    let mut cells = Vec::new();
    for (i, &(idle, loaded, low, shape)) in v.iter().enumerate() {
        for d in [1_000u64, 10_000, 1_000_000] {
            let k = d as f64 / 1_000.0;
            cells.push(sweep_cell(MECHS[i], d, 0, 50_000, idle * k, shape));
            cells.push(sweep_cell(MECHS[i], d, 2, 50_000, loaded * k, shape));
            cells.push(sweep_cell(MECHS[i], d, 0, 1, low * k, shape));
        }
    }
    result(ExperimentData::Sweep(sweep(cells)))
}

/// A pace result of `frames` frames all `late` ns late in blocks of `block`, its CPU
/// `cpu` % with a ±`w` interval (none below 8 blocks).
pub(super) fn pace(name: &str, frames: Vec<u64>, block: u64, cpu: f64, w: f64) -> PaceResult {
    let mut r = PaceResult::uniform(name, 0, 0, 0, cpu);
    r.error = summarize(&frames, 0);
    let n = frames.len() as u64;
    let counts: Vec<u64> = (0..n.div_ceil(block))
        .map(|b| block.min(n - block * b))
        .collect();
    r.units = UnitIntervals::of_counted(Unit::Block, &frames, &counts);
    r.cpu_ci_percent = (counts.len() as u64 >= sleeplab_stats::MIN_UNITS)
        .then_some(Ci(Some(cpu * (1.0 - w)), Some(cpu * (1.0 + w))));
    r
}

/// A one-shot cell of `n` calls with this median, its units shaped by `shape` (blocks
/// of consecutive calls).
pub(super) fn oneshot(req: u64, median: f64, n: u64, shape: Shape) -> OneshotCell {
    let mut s = summarize(&[median as u64], req);
    s.count = n;
    s.median_ci_ns = Some(Ci(Some(median * 0.99), Some(median * 1.01)));
    OneshotCell {
        requested_ns: req,
        units: shape.0.map(|k| units(&s, Unit::Block, k, shape.1, shape.2)),
        summary: s,
        warmup_ns: vec![],
        samples_ns: vec![],
        all_samples_ns: vec![],
        notes: vec![],
        explanation: None,
    }
}

/// The fixture's runtimes result with one runtime whose plain sleep and sleeplab's own
/// measured `req` with these medians.
pub(super) fn runtimes(req: u64, plain: OneshotCell, ours: OneshotCell) -> ResultFile {
    use crate::findings::runtimes::main_sleep;
    crate::testdata::one_runtime(
        |x| main_sleep(x).is_some(),
        |rt| {
            let mut m = main_sleep(rt).unwrap().clone();
            let mut mine = m.clone();
            m.cells = vec![plain];
            mine.method = "sleeplab_sleep_ns".into();
            mine.cells = vec![OneshotCell {
                requested_ns: req,
                ..ours
            }];
            rt.methods = vec![m, mine];
        },
    )
}

/// One cell of the tune fixture: as is's p99, the two settings', their rounds' shape.
pub(super) type TuneInput = (f64, f64, f64, Shape);

/// A tune result: as is and two settings, one cell each per input cell (as is's p99,
/// then each setting's, from its three values), its rounds shaped by `shape`: paired
/// round p99s where the upper ends are closed, none (the arms' own intervals) where open.
pub(super) fn tune(v: &[TuneInput]) -> ResultFile {
    use sleeplab_results::tune::{Arm, ArmCell, CellSpec, TuneData, as_is_info, judge};
    let cell = |i: usize, p99: f64, (k, w, open): Shape| {
        let mut s = summarize(&[p99 as u64], 0);
        s.p99_ns = Some(p99);
        let n = k.unwrap_or(0);
        let round: Vec<Option<f64>> = if open || k.is_none() {
            Vec::new()
        } else {
            (0..n)
                .map(|r| Some(p99 * (1.0 + w * ((r % 3) as f64 - 1.0))))
                .collect()
        };
        let spec = CellSpec {
            mechanism: "clock-nanosleep-abs".into(),
            requested_ns: 1_000 * (i as u64 + 1),
        };
        ArmCell {
            waits: 100 * n.max(1),
            p50_ns: Some(p99 / 2.0),
            p99_ns: Some(p99),
            units: k.map(|n| units(&s, Unit::Round, n, w, open)),
            round_p50_ns: round.iter().map(|x| x.map(|x| x / 2.0)).collect(),
            round_p99_ns: round,
            ..ArmCell::of_rounds(&spec, &[])
        }
    };
    let arm = |name: &str, pick: &dyn Fn(&TuneInput) -> f64| {
        let mut info = as_is_info();
        info.name = name.into();
        let cells = v.iter().enumerate();
        let cells = cells.map(|(i, x)| cell(i, pick(x), x.3)).collect();
        Arm {
            cpus: Some(0.5),
            ..Arm::new(info, cells, 8)
        }
    };
    let mut d = TuneData {
        cpu: 0,
        rounds: 8,
        root: false,
        arms: vec![
            arm(sleeplab_results::tune::AS_IS, &|x| x.0),
            arm("timer-slack", &|x| x.1),
            arm("keep-awake", &|x| x.2),
        ],
        unavailable: vec![],
        boot: vec![],
    };
    judge(&mut d);
    result(ExperimentData::Tune(d))
}

/// What the walk is run on: sweep cells (idle, loaded and low-slack medians, their
/// units), the runs' scales of them, pace contenders (frames, block, CPU, its interval's
/// width), advise's tolerance, and a runtime's plain and sleeplab medians.
pub(super) type Input = (
    Vec<(f64, f64, f64, Shape)>,
    Vec<f64>,
    Vec<(Vec<u64>, u64, f64, f64)>,
    u64,
    (f64, f64, u64, Shape, Shape),
);

pub(super) fn arb_input() -> impl Strategy<Value = Input> {
    (
        proptest::collection::vec((1e3f64..1e5, 1e3f64..1e5, 1e3f64..1e5, arb_shape()), 1..8),
        proptest::collection::vec(0.5f64..2.0, 6),
        proptest::collection::vec(
            (
                proptest::collection::vec(0u64..2_000_000, 100..500),
                1u64..60,
                0.01f64..99.0,
                0.0f64..0.5,
            ),
            1..5,
        ),
        1_000u64..1_000_000,
        (
            1e3f64..1e6,
            1e3f64..1e6,
            1u64..300,
            arb_shape(),
            arb_shape(),
        ),
    )
}
