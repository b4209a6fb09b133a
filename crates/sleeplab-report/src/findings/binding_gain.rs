//! The finding on sleeplab's own precise sleep in other languages: where a probe measured
//! both the language's plain sleep and sleeplab's (the C probe's `sleeplab_sleep_ns`
//! through the C ABI, the Python probe's `sleeplab.sleep` through the Python package),
//! how much less the precise one overslept.

use super::runtimes::{is_sleeplab, main_sleep};
use super::{Finding, Results, small_n};
use sleeplab_results::protocol::Kind;
use sleeplab_results::runtimes::{MethodResult, MethodStatus, OneshotCell, RuntimeStatus};
use sleeplab_stats::{
    Claim, Est, INDISTINGUISHABLE, Order, Sentence, Stat, WITHIN_RUN, basis_note, interval_text,
    order, units::ns,
};

/// A measured one-shot method.
fn measured_oneshot(m: &MethodResult) -> bool {
    m.kind == Kind::Oneshot && m.status == MethodStatus::Measured
}

/// The request both methods measured that is closest to 1 ms (by ratio; the smaller on a
/// tie), with both cells. Cells with an early median (a rounding down) are left out: their
/// oversleep is not a lateness.
fn common_cell<'a>(
    plain: &'a MethodResult,
    precise: &'a MethodResult,
) -> Option<(&'a OneshotCell, &'a OneshotCell)> {
    let usable = |c: &&OneshotCell| {
        c.requested_ns > 0 && c.summary.count > 0 && c.summary.median_ns >= c.requested_ns as f64
    };
    let distance = |d: u64| (d as f64 / 1e6).ln().abs();
    precise
        .cells
        .iter()
        .filter(usable)
        .filter_map(|p| {
            let q = plain
                .cells
                .iter()
                .filter(usable)
                .find(|c| c.requested_ns == p.requested_ns)?;
            Some((q, p))
        })
        .min_by(|a, b| {
            let (da, db) = (distance(a.0.requested_ns), distance(b.0.requested_ns));
            da.total_cmp(&db)
                .then(a.0.requested_ns.cmp(&b.0.requested_ns))
        })
}

/// How much less `precise` overslept than `plain` (median oversleeps, ns).
fn comparison(precise: f64, plain: f64) -> String {
    if precise >= plain {
        "not less".into()
    } else if precise <= 0.0 {
        format!("{} less", ns(plain - precise))
    } else {
        let ratio = plain / precise;
        if ratio >= 10.0 {
            format!("{ratio:.0}× less")
        } else {
            format!("{ratio:.1}× less")
        }
    }
}

/// "Asked for 1 ms, C's sleeplab_sleep_ns overslept by a median of 2 µs, nanosleep by
/// 74 µs: 37× less." One statistic: the median oversleep (median elapsed − request) of
/// the one request closest to 1 ms both measured, at the same load and timer slack.
pub fn binding_gain(r: &Results<'_>) -> Option<Finding> {
    let (_, d) = r.runtimes()?;
    let parts: Vec<Sentence> = d
        .runtimes
        .iter()
        .filter(|rt| rt.status == RuntimeStatus::Measured)
        .flat_map(|rt| {
            // The language's plain sleep, paired with each sleeplab method run under the
            // same conditions.
            let plain = main_sleep(rt);
            rt.methods
                .iter()
                .filter(|m| measured_oneshot(m) && is_sleeplab(&m.method))
                .filter_map(move |precise| {
                    let plain = plain?;
                    let same = precise.load == plain.load
                        && precise.timer_slack_ns == plain.timer_slack_ns;
                    let (q, p) = common_cell(plain, precise).filter(|_| same)?;
                    Some(pair_sentence(&rt.title, precise, p, plain, q))
                })
        })
        .collect();
    let mut parts = parts.into_iter();
    let mut s = parts.next()?;
    for more in parts {
        s.push("; ");
        s.append(more);
    }
    s.text[..1].make_ascii_uppercase();
    s.push(".");
    Some(Finding::new("sleeplab-in-other-languages", s))
}

/// One runtime's part: both median oversleeps (each a quoted median, n named when under
/// 100) and how much less the precise one overslept: "less" only where the 95 %
/// intervals of the two medians over blocks of consecutive calls separate, said to be
/// within-run intervals (each method ran in its own probe run); else the two are
/// indistinguishable in this run, with both intervals.
fn pair_sentence(
    title: &str,
    precise: &MethodResult,
    p: &OneshotCell,
    plain: &MethodResult,
    q: &OneshotCell,
) -> Sentence {
    let over = |c: &OneshotCell| c.summary.median_ns - c.requested_ns as f64;
    let est = |c: &OneshotCell| {
        let req = c.requested_ns as f64;
        let e = c
            .est(Stat::Median)
            .unwrap_or(Est::point(c.summary.median_ns));
        Est {
            value: over(c),
            ci: e.ci.map(|ci| ci.map(|v| v - req)),
            ..e
        }
    };
    let (po, qo) = (ns(over(p)), ns(over(q)));
    let (ep, eq) = (est(p), est(q));
    let verdict = if ep.value < eq.value {
        order(&ep, &eq)
    } else {
        // "not less" claims no order.
        Order::Indistinguishable
    };
    let gain = match verdict {
        Order::Below => format!("{} ({WITHIN_RUN})", comparison(over(p), over(q))),
        _ if ep.value >= eq.value => comparison(over(p), over(q)),
        _ => format!(
            "{INDISTINGUISHABLE} ({} vs {}{})",
            interval_text(ep.ci, ns),
            interval_text(eq.ci, ns),
            basis_note(&[&ep, &eq])
        ),
    };
    let mut s = Sentence::new(format!(
        "asked for {}, {title}'s {} overslept by a median of {po}{}, {} by {qo}{}: {gain}",
        ns(p.requested_ns as f64),
        precise.method,
        small_n(p.summary.count),
        plain.method,
        small_n(q.summary.count),
    ));
    if ep.value < eq.value && verdict != Order::Above {
        s.claim(Claim::Verdict {
            stat: Stat::Median,
            a: ep,
            b: eq,
            stated: verdict,
        });
    }
    for (c, shown) in [(p, po), (q, qo)] {
        s.claim(Claim::Quote {
            stat: Stat::Median,
            n: c.summary.count,
            shown,
        });
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture's runtimes result with one runtime holding these one-shot methods:
    /// (name, [(request, median)]).
    fn with_methods(
        title: &str,
        methods: &[(&str, &[(u64, f64)])],
    ) -> sleeplab_results::model::ResultFile {
        let measured = |x: &sleeplab_results::runtimes::RuntimeResult| {
            x.methods
                .iter()
                .any(|m| measured_oneshot(m) && !m.cells.is_empty())
        };
        crate::testdata::one_runtime(measured, |rt| {
            let template = rt
                .methods
                .iter()
                .find(|m| measured_oneshot(m) && !m.cells.is_empty())
                .unwrap()
                .clone();
            rt.title = title.into();
            rt.methods = methods
                .iter()
                .map(|(name, cells)| {
                    let mut m = template.clone();
                    m.method = (*name).into();
                    m.cells = cells
                        .iter()
                        .map(|&(requested, median)| {
                            let mut c = template.cells[0].clone();
                            c.requested_ns = requested;
                            c.summary.count = 100;
                            c.summary.median_ns = median;
                            // A ±1 % interval over 10 blocks: the gains below are told apart.
                            c.summary.median_ci_ns =
                                Some(sleeplab_stats::Ci(Some(0.99 * median), Some(1.01 * median)));
                            c.units = Some(crate::testdata::rounds(&c.summary, 10));
                            if let Some(u) = c.units.as_mut() {
                                u.unit = sleeplab_stats::Unit::Block;
                            }
                            c
                        })
                        .collect();
                    m
                })
                .collect();
        })
    }

    fn text(r: &sleeplab_results::model::ResultFile) -> Option<String> {
        binding_gain(&Results::of(r)).map(|f| {
            f.sentence().check().expect("its claims hold");
            f.text
        })
    }

    #[test]
    fn states_the_gain_at_the_request_closest_to_1_ms() {
        let r = with_methods(
            "C",
            &[
                (
                    "nanosleep",
                    &[(100_000, 170_000.0), (1_000_000, 1_074_000.0)],
                ),
                (
                    "sleeplab_sleep_ns",
                    &[(100_000, 101_000.0), (1_000_000, 1_002_000.0)],
                ),
            ],
        );
        assert_eq!(
            text(&r).unwrap(),
            "Asked for 1 ms, C's sleeplab_sleep_ns overslept by a median of 2 µs, nanosleep by 74 µs: 37× less (within-run intervals; run-to-run variation not included)."
        );
    }

    #[test]
    fn says_not_less_when_sleeplab_did_not_win_and_keeps_the_ratio_honest() {
        let r = with_methods(
            "Python",
            &[
                ("time.sleep", &[(10_000_000, 10_050_000.0)]),
                ("sleeplab.sleep", &[(10_000_000, 10_060_000.0)]),
            ],
        );
        assert!(
            text(&r)
                .unwrap()
                .contains("by a median of 60 µs, time.sleep by 50 µs: not less")
        );
        assert_eq!(comparison(0.0, 50_000.0), "50 µs less");
        assert_eq!(comparison(20_000.0, 50_000.0), "2.5× less");
        assert_eq!(comparison(50_000.0, 50_000.0), "not less");
    }

    #[test]
    fn needs_both_methods_at_a_shared_request_that_was_not_early() {
        // Only the plain sleep: no finding.
        assert_eq!(
            text(&with_methods("C", &[("nanosleep", &[(1_000_000, 1e6)])])),
            None
        );
        // No request in common.
        let r = with_methods(
            "C",
            &[
                ("nanosleep", &[(1_000_000, 1_070_000.0)]),
                ("sleeplab_sleep_ns", &[(100_000, 101_000.0)]),
            ],
        );
        assert_eq!(text(&r), None);
        // A plain sleep that returned early (rounded down) is no baseline.
        let r = with_methods(
            "C",
            &[
                ("poll", &[(100_000, 200.0)]),
                ("sleeplab_sleep_ns", &[(100_000, 101_000.0)]),
            ],
        );
        assert_eq!(text(&r), None);
        // sleeplab's method listed first is still not taken for the plain sleep.
        let r = with_methods(
            "C",
            &[
                ("sleeplab_sleep_ns", &[(1_000_000, 1_002_000.0)]),
                ("nanosleep", &[(1_000_000, 1_074_000.0)]),
            ],
        );
        assert!(
            text(&r)
                .unwrap()
                .contains("sleeplab_sleep_ns overslept by a median of 2 µs, nanosleep by 74 µs")
        );
    }
}
