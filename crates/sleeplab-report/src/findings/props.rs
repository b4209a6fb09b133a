//! Property tests: random synthetic sweeps; every claim of every finding must hold for
//! its numbers.

use super::*;
use crate::findings;
use crate::testdata::{cell, result, sweep};
use proptest::prelude::*;
use sleeplab_results::model::ExperimentData;
use sleeplab_stats::Ci;

const MECHS: [&str; 13] = [
    "nanosleep",
    "clock-nanosleep",
    "futex-waitv",
    "io-uring-timeout",
    "io-uring-wait",
    "std-sleep",
    "select",
    "poll",
    "epoll",
    "ppoll",
    "timerfd",
    "timerfd-reuse",
    "spin",
];
const REQS: [u64; 6] = [0, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];

/// One random cell: any sample size, median at or above the request, tail quantiles
/// following the rule, context switches that may or may not show blocking.
fn arb_cell(
    mech: &'static str,
    req: u64,
    load: usize,
    slack: u64,
) -> impl Strategy<Value = sleeplab_results::sweep::SweepCell> {
    (
        1u64..3_000,
        0.0f64..3e6,
        prop_oneof![Just(0.0), Just(0.3), Just(1.0), 0.0f64..2.0],
        0.0f64..2e6,
        0u64..3,
        proptest::option::of(0u64..10_000_000),
        1.0f64..20.0,
        0.0f64..0.5,
    )
        .prop_map(move |(n, over, csw, cpu, early, first, tail, w)| {
            let median = req as f64 + over;
            let mut c = cell(mech, req, load, slack, median);
            c.summary.count = n;
            // Each quantile's interval: ±w around it, open above where its upper rank
            // runs off the sample, none where nothing bounds it (stats::quantile_ci).
            let ci = |v: f64, q: f64| {
                let (lo, hi) = sleeplab_stats::ci_ranks(n, q);
                (lo.is_some() || hi.is_some())
                    .then(|| Ci(lo.map(|_| v * (1.0 - w)), hi.map(|_| v * (1.0 + w))))
            };
            c.summary.median_ci_ns = ci(median, 0.5);
            for (q, k, slot, ci_slot) in [
                (0.9, 10.0, &mut c.summary.p90_ns, &mut c.summary.p90_ci_ns),
                (0.99, 2.0, &mut c.summary.p99_ns, &mut c.summary.p99_ci_ns),
                (
                    0.999,
                    1.0,
                    &mut c.summary.p999_ns,
                    &mut c.summary.p999_ci_ns,
                ),
            ] {
                let v = median * (1.0 + tail / k);
                *slot = Some(v);
                *ci_slot = ci(v, q);
            }
            c.summary.enforce_quantile_rule();
            c.summary.early_count = early.min(n);
            c.voluntary_csw_per_call = csw;
            c.cpu_ns_per_call = cpu;
            c.first_calls_ns = first.into_iter().collect();
            crate::testdata::resync(&mut c);
            c
        })
}

fn arb_sweep() -> impl Strategy<Value = Vec<sleeplab_results::sweep::SweepCell>> {
    (
        proptest::sample::subsequence(MECHS.to_vec(), 1..=MECHS.len()),
        proptest::sample::subsequence(REQS.to_vec(), 1..=REQS.len()),
        prop_oneof![Just(vec![0usize]), Just(vec![0, 2]), Just(vec![0, 5])],
        prop_oneof![Just(vec![50_000u64]), Just(vec![50_000, 1])],
    )
        .prop_flat_map(|(mechs, reqs, loads, slacks)| {
            let mut cells = Vec::new();
            for &m in &mechs {
                for &d in &reqs {
                    for &l in &loads {
                        for &s in &slacks {
                            cells.push(arb_cell(m, d, l, s));
                        }
                    }
                }
            }
            cells
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Every finding's claims hold for its numbers, whatever the sweep.
    #[test]
    fn every_finding_is_true_of_its_numbers(cells in arb_sweep(), cpus in 1usize..5, vm in any::<bool>()) {
        let mut r = result(ExperimentData::Sweep(sweep(cells)));
        r.fingerprint.cpu_count = cpus;
        if vm {
            r.fingerprint.virtualization = Some("kvm".into());
            r.fingerprint.idle = Some(sleeplab::system::Idle { driver: Some("none".into()), ..Default::default() });
        }
        for f in findings(&Results::of(&r), sleeplab_results::Wording::NAMES) {
            prop_assert!(f.sentence().check().is_ok(), "{}: {:?}", f.id, f.sentence().check());
            prop_assert!(!f.text.contains("NaN") && !f.text.contains("inf"), "{}", f.text);
            // A quantile the sample cannot resolve is never printed as "–" in prose.
            prop_assert!(!f.text.contains(" – ") && !f.text.contains("–)"), "{}", f.text);
        }
    }
}
