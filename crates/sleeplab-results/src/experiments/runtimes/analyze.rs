//! Pure functions of the runtimes experiment: what a probe run must look like, how long
//! it may take, and the statistics of periodic ticks.

use super::{Lateness, ProbeQuota, RuntimesConfig};
use crate::probe_protocol::{Kind, Measurement, Mode, arg};
use sleeplab_stats::{Summary, quantile_sorted, summarize, tail_quantile};
use std::time::Duration;

/// What one probe invocation was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The method.
    pub method: String,
    /// Its kind.
    pub kind: Kind,
    /// The header's `runtime` the probe must print.
    pub runtime: Option<String>,
    /// One-shot: the durations; periodic: the period (one cell).
    pub cells_ns: Vec<u64>,
    /// One-shot quota (periodic: `Count` of ticks).
    pub quota: ProbeQuota,
    /// Warm-up lines per cell.
    pub warmup: u64,
    /// The probe locks its memory first (`--mlock`).
    pub mlock: bool,
    /// The probe gives each call's start on `CLOCK_MONOTONIC` (`--timestamps`): asked
    /// for by the config; `measure` clears it for a probe that does not offer it.
    pub timestamps: bool,
}

impl Request {
    /// The request for `method` of `kind` under `config`.
    pub fn new(config: &RuntimesConfig, method: &str, kind: Kind, runtime: Option<String>) -> Self {
        let (cells_ns, quota) = match kind {
            Kind::Oneshot => (config.durations_ns.clone(), config.quota),
            Kind::Yield => (vec![0], config.quota),
            Kind::Periodic => (
                vec![config.period_ns],
                ProbeQuota::Count {
                    count: config.ticks,
                },
            ),
        };
        Self {
            method: method.to_string(),
            kind,
            runtime,
            cells_ns,
            quota,
            warmup: config.warmup,
            mlock: config.mlock,
            timestamps: config.timestamps,
        }
    }

    /// The probe runs this request takes: one per run of consecutive cells that share
    /// a count under [`ProbeQuota::PerRequest`] (the protocol's `--count` holds for every
    /// cell of a run), each asked for exactly that count; otherwise itself.
    pub fn split(self) -> Vec<Request> {
        let ProbeQuota::PerRequest { .. } = self.quota else {
            return vec![self];
        };
        if self.cells_ns.is_empty() {
            return vec![self];
        }
        let mut out: Vec<Request> = Vec::new();
        for &d in &self.cells_ns {
            let count = self.quota.count_for(d).unwrap_or(1);
            match out.last_mut() {
                Some(r) if r.quota == (ProbeQuota::Count { count }) => r.cells_ns.push(d),
                _ => out.push(Request {
                    cells_ns: vec![d],
                    quota: ProbeQuota::Count { count },
                    ..self.clone()
                }),
            }
        }
        out
    }

    /// The probe's arguments, exactly as the protocol spells them (a
    /// [`ProbeQuota::PerRequest`] request is [split](Self::split) first: here it asks
    /// for its first cell's count).
    pub fn args(&self) -> Vec<String> {
        let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let mut a = vec![arg::METHOD.to_string(), self.method.clone()];
        if self.kind == Kind::Periodic {
            a.extend([arg::PERIOD_NS.into(), list(&self.cells_ns)]);
        } else {
            a.extend([arg::DURATIONS_NS.into(), list(&self.cells_ns)]);
        }
        match self.quota {
            ProbeQuota::Count { count } => a.extend([arg::COUNT.into(), count.to_string()]),
            ProbeQuota::PerRequest { .. } => {
                let first = self.cells_ns.first().copied().unwrap_or(0);
                let count = self.quota.count_for(first).unwrap_or(1);
                a.extend([arg::COUNT.into(), count.to_string()]);
            }
            ProbeQuota::Budget {
                budget_ns,
                max_count,
            } => a.extend([
                arg::BUDGET_NS.into(),
                budget_ns.to_string(),
                arg::MAX_COUNT.into(),
                max_count.to_string(),
            ]),
        }
        if self.warmup > 0 {
            a.extend([arg::WARMUP.into(), self.warmup.to_string()]);
        }
        if self.mlock {
            a.push(arg::MLOCK.into());
        }
        if self.timestamps {
            a.push(arg::TIMESTAMPS.into());
        }
        a
    }

    /// How long the probe should need, generously: every sample may take a millisecond
    /// more than asked (Go, Node and asyncio round sub-millisecond waits up to one) and
    /// loop overhead of up to 20 µs per sample.
    pub fn expected(&self) -> Duration {
        let slow = |d: u64| d.saturating_add(2_000_000);
        let mut ns: u64 = 0;
        for &d in &self.cells_ns {
            let cell = match (self.kind, self.quota) {
                (Kind::Periodic, ProbeQuota::Count { count }) => {
                    d.saturating_mul(count.saturating_add(self.warmup).saturating_add(1))
                }
                (_, ProbeQuota::Count { count }) => slow(d).saturating_mul(count),
                (_, q @ ProbeQuota::PerRequest { .. }) => {
                    slow(d).saturating_mul(q.count_for(d).unwrap_or(1))
                }
                (
                    _,
                    ProbeQuota::Budget {
                        budget_ns,
                        max_count,
                    },
                ) => budget_ns
                    .saturating_add(slow(d))
                    .saturating_add(max_count.saturating_mul(20_000)),
            };
            ns = ns
                .saturating_add(cell)
                .saturating_add(slow(d).saturating_mul(self.warmup));
        }
        Duration::from_nanos(ns)
    }

    /// Checks that `m` is what was asked for. `Err` = the probe did something else (the
    /// method fails); `Ok` holds notes on softer deviations. With `whole` false (a probe
    /// stopped midway) its cells need only be the first of those asked for.
    pub fn check(&self, m: &Measurement, whole: bool) -> Result<Vec<String>, String> {
        let mut notes = Vec::new();
        if m.method != self.method {
            return Err(format!(
                "asked for method {:?}, the output is for {:?}",
                self.method, m.method
            ));
        }
        if m.mode != self.kind.mode() {
            return Err(format!(
                "a {} method must be measured in {} mode, the output says {}",
                self.kind,
                self.kind.mode(),
                m.mode
            ));
        }
        if let Some(rt) = &self.runtime {
            if &m.header.runtime != rt {
                return Err(format!(
                    "the header says runtime {:?}, expected {rt:?}",
                    m.header.runtime
                ));
            }
        }
        if m.header.timestamps != self.timestamps {
            return Err(if self.timestamps {
                format!(
                    "asked for {}, the header does not say \"timestamps\":true",
                    arg::TIMESTAMPS
                )
            } else {
                "the output carries timestamps, which were not asked for".into()
            });
        }
        let values: Vec<u64> = m.cells.iter().map(|c| c.value_ns).collect();
        let expected = if whole {
            &self.cells_ns[..]
        } else {
            &self.cells_ns[..values.len().min(self.cells_ns.len())]
        };
        if values != expected {
            return Err(format!(
                "asked for cells {:?}, the output has {:?}",
                self.cells_ns, values
            ));
        }
        for c in &m.cells {
            let n = c.samples.len() as u64;
            let what = if m.mode == Mode::Periodic {
                "ticks"
            } else {
                "samples"
            };
            if c.warmup.len() as u64 != self.warmup {
                return Err(format!(
                    "cell {} (line {}): {} warm-up lines, asked for {}",
                    c.value_ns,
                    c.line,
                    c.warmup.len(),
                    self.warmup
                ));
            }
            match self.quota {
                ProbeQuota::Count { .. } | ProbeQuota::PerRequest { .. } => {
                    let count = self.quota.count_for(c.value_ns).unwrap_or(1);
                    if n != count {
                        return Err(format!(
                            "cell {} (line {}): {n} {what}, asked for {count}",
                            c.value_ns, c.line
                        ));
                    }
                }
                ProbeQuota::Budget {
                    budget_ns,
                    max_count,
                } => {
                    if n == 0 || n > max_count {
                        return Err(format!(
                            "cell {} (line {}): {n} samples, the budget allows 1..={max_count}",
                            c.value_ns, c.line
                        ));
                    }
                    let sum: u128 = c.samples.iter().map(|&x| u128::from(x)).sum();
                    let before_last = sum - u128::from(c.samples[c.samples.len() - 1]);
                    if n < max_count && sum < u128::from(budget_ns) {
                        notes.push(format!(
                            "cell {}: the probe stopped after {n} samples summing to {sum} ns, short of the {budget_ns} ns budget",
                            c.value_ns
                        ));
                    } else if before_last >= u128::from(budget_ns) {
                        notes.push(format!(
                            "cell {}: the probe went on measuring after its samples reached the {budget_ns} ns budget",
                            c.value_ns
                        ));
                    }
                }
            }
        }
        Ok(notes)
    }
}

/// The statistics of one periodic cell.
#[derive(Debug, Clone, PartialEq)]
pub struct PeriodicStats {
    /// Intervals between consecutive measured ticks, summarised against the period.
    pub interval: Summary,
    /// Lateness against k·P.
    pub lateness: Lateness,
}

/// Statistics of periodic ticks: tick k (counting from 1 across `warmup` then `ticks`)
/// is due at k·`period_ns`; lateness is arrival − due, over the measured ticks. The
/// interval of the first measured tick is taken from the last warm-up tick (or from t0
/// when there is none).
pub fn periodic_stats(period_ns: u64, warmup: &[u64], ticks: &[u64]) -> PeriodicStats {
    let w = warmup.len() as u128;
    let mut lateness: Vec<i64> = Vec::with_capacity(ticks.len());
    let mut intervals: Vec<u64> = Vec::with_capacity(ticks.len());
    let mut prev = warmup.last().copied().unwrap_or(0);
    for (i, &arrival) in ticks.iter().enumerate() {
        let due = (w + i as u128 + 1) * u128::from(period_ns);
        let late = i128::from(arrival) - due as i128;
        lateness.push(late.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64);
        intervals.push(arrival.saturating_sub(prev));
        prev = arrival;
    }
    let interval = summarize(&intervals, period_ns);
    let mut sorted = lateness.clone();
    sorted.sort_unstable();
    let lateness = if sorted.is_empty() {
        Lateness::default()
    } else {
        // Shift to unsigned for the shared quantile code, then back.
        let min = sorted[0];
        let shifted: Vec<u64> = sorted
            .iter()
            .map(|&x| (i128::from(x) - i128::from(min)) as u64)
            .collect();
        let q = |p: f64| quantile_sorted(&shifted, p).unwrap_or(0.0) + min as f64;
        let mean = sorted.iter().map(|&x| x as f64).sum::<f64>() / sorted.len() as f64;
        Lateness {
            min_ns: min,
            mean_ns: mean,
            median_ns: q(0.5),
            median_ci_ns: sleeplab_stats::ci_sorted(&sorted, 0.5, |v| v as f64),
            p99_ns: tail_quantile(&shifted, 0.99).map(|v| v + min as f64),
            p99_ci_ns: sleeplab_stats::ci_sorted(&sorted, 0.99, |v| v as f64),
            max_ns: sorted[sorted.len() - 1],
            last_ns: lateness[lateness.len() - 1],
            early_count: sorted.iter().filter(|&&x| x < 0).count() as u64,
        }
    };
    PeriodicStats { interval, lateness }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe_protocol::parse_measurement;
    use crate::test_support::runtimes_config as config;

    #[test]
    fn periodic_by_hand() {
        // P = 1000; warm-up tick 1 at 1100; ticks 2, 3, 4 due at 2000, 3000, 4000.
        let s = periodic_stats(1_000, &[1_100], &[1_900, 3_050, 4_300]);
        assert_eq!(s.lateness.min_ns, -100);
        assert_eq!(s.lateness.max_ns, 300);
        assert_eq!(s.lateness.last_ns, 300);
        assert_eq!(s.lateness.early_count, 1);
        assert!((s.lateness.median_ns - 50.0).abs() < 1e-9);
        assert!((s.lateness.mean_ns - 250.0 / 3.0).abs() < 1e-9);
        // Intervals 800, 1150, 1250 against P = 1000.
        assert_eq!(s.interval.count, 3);
        assert_eq!(s.interval.total_ns, 3_200);
        assert_eq!(s.interval.min_ns, 800);
        assert_eq!(s.interval.early_count, 1);
        assert!((s.interval.mean_ns - 3_200.0 / 3.0).abs() < 1e-9);
        // Without warm-up the first interval is from t0.
        let s = periodic_stats(1_000, &[], &[1_000, 2_000]);
        assert_eq!(s.interval.min_ns, 1_000);
        assert_eq!(s.lateness.max_ns, 0);
        assert_eq!(s.lateness.early_count, 0);
        assert_eq!(
            periodic_stats(1_000, &[], &[]).lateness,
            Lateness::default()
        );
    }

    #[test]
    fn args_follow_the_protocol() {
        let c = config();
        let r = Request::new(&c, "nanosleep", Kind::Oneshot, None);
        assert_eq!(
            r.args().join(" "),
            "--method nanosleep --durations-ns 1000000,10000 --count 2 --warmup 1"
        );
        let r = Request::new(&c, "sched_yield", Kind::Yield, None);
        assert_eq!(r.cells_ns, [0]);
        let r = Request::new(&c, "timerfd", Kind::Periodic, None);
        assert_eq!(
            r.args().join(" "),
            "--method timerfd --period-ns 1000 --count 3 --warmup 1"
        );
        let mut c = config();
        c.quota = ProbeQuota::Budget {
            budget_ns: 5,
            max_count: 7,
        };
        c.warmup = 0;
        let r = Request::new(&c, "m", Kind::Oneshot, None);
        assert_eq!(
            r.args().join(" "),
            "--method m --durations-ns 1000000,10000 --budget-ns 5 --max-count 7"
        );
        assert!(r.expected() > Duration::from_millis(2));
        c.mlock = true;
        let r = Request::new(&c, "m", Kind::Yield, None);
        assert!(r.args().join(" ").ends_with("--max-count 7 --mlock"));
        c.timestamps = true;
        let r = Request::new(&c, "m", Kind::Periodic, None);
        assert!(
            r.args().join(" ").ends_with("--mlock --timestamps"),
            "{r:?}"
        );
    }

    /// With timestamps the header must say so, and without them it must not.
    #[test]
    fn check_holds_the_header_to_the_timestamps_asked_for() {
        let mut c = config();
        c.durations_ns = vec![10_000];
        c.warmup = 0;
        c.quota = ProbeQuota::Count { count: 1 };
        let plain = format!("{HEAD}\ncell 10000\ns 2\ndone 10000 1\nend\n");
        let stamped = format!(
            "{}\ncell 10000\ns 2 7000\ndone 10000 1\nend\n",
            HEAD.replace("}", ",\"timestamps\":true}")
        );
        let parse = |t: &str| parse_measurement(t.as_bytes()).unwrap();
        let without = Request::new(&c, "nanosleep", Kind::Oneshot, None);
        c.timestamps = true;
        let with = Request::new(&c, "nanosleep", Kind::Oneshot, None);
        assert_eq!(with.check(&parse(&stamped), true), Ok(vec![]));
        assert_eq!(without.check(&parse(&plain), true), Ok(vec![]));
        let e = with.check(&parse(&plain), true).unwrap_err();
        assert!(e.starts_with("asked for --timestamps"), "{e}");
        let e = without.check(&parse(&stamped), true).unwrap_err();
        assert!(e.contains("not asked for"), "{e}");
    }

    /// Seed 003's design: the count is fixed per request before measuring (the ideal
    /// total count × request is set, the actual total measured), capped for long
    /// requests; cells sharing a count share a probe run.
    #[test]
    fn per_request_counts_are_fixed_before_measuring() {
        let q = ProbeQuota::PerRequest {
            count: 100,
            max_ideal_ns: 1_000_000_000,
        };
        assert_eq!(q.count_for(100_000_000), Some(10));
        assert_eq!(q.count_for(10_000_000), Some(100));
        assert_eq!(q.count_for(10_000), Some(100));
        assert_eq!(q.count_for(0), Some(100));
        assert_eq!(q.count_for(5_000_000_000), Some(1));
        let budget = ProbeQuota::Budget {
            budget_ns: 1,
            max_count: 1,
        };
        assert_eq!(budget.count_for(1), None);
        let mut c = config();
        c.quota = q;
        c.durations_ns = vec![100_000_000, 10_000_000, 1_000_000, 10_000];
        let runs = Request::new(&c, "nanosleep", Kind::Oneshot, None).split();
        let got: Vec<(Vec<u64>, ProbeQuota)> =
            runs.iter().map(|r| (r.cells_ns.clone(), r.quota)).collect();
        assert_eq!(
            got,
            [
                (vec![100_000_000], ProbeQuota::Count { count: 10 }),
                (
                    vec![10_000_000, 1_000_000, 10_000],
                    ProbeQuota::Count { count: 100 }
                ),
            ]
        );
        assert!(runs[1].args().join(" ").contains("--count 100"));
        // Every cell of the unsplit request is checked against its own count.
        let whole = Request::new(&c, "nanosleep", Kind::Oneshot, None);
        let samples = |n: usize| "s 1\n".repeat(n);
        let out = format!(
            "{HEAD}\ncell 100000000\nw 1\n{}done 100000000 10\ncell 10000000\nw 1\n{}done 10000000 100\ncell 1000000\nw 1\n{}done 1000000 100\ncell 10000\nw 1\n{}done 10000 100\nend\n",
            samples(10),
            samples(100),
            samples(100),
            samples(100)
        );
        assert_eq!(
            whole.check(&parse_measurement(out.as_bytes()).unwrap(), true),
            Ok(vec![])
        );
        // The ideal total of every cell is count × request, fixed by the config.
        let yields = Request::new(&c, "sched_yield", Kind::Yield, None).split();
        assert_eq!(yields.len(), 1);
        assert_eq!(yields[0].quota, ProbeQuota::Count { count: 100 });
        // Budget quotas are one run, as before.
        c.quota = budget;
        assert_eq!(Request::new(&c, "m", Kind::Oneshot, None).split().len(), 1);
    }

    const HEAD: &str = r#"{"protocol":"sleeplab-probe/1","runtime":"c","implementation":"gcc","runtime_version":"12","clock":"m","platform":"linux","method":"nanosleep","mode":"oneshot"}"#;

    #[test]
    fn check_catches_what_the_grammar_allows() {
        let r = Request::new(&config(), "nanosleep", Kind::Oneshot, Some("c".into()));
        let ok = format!(
            "{HEAD}\ncell 1000000\nw 1\ns 2\ns 3\ndone 1000000 2\ncell 10000\nw 1\ns 2\ns 3\ndone 10000 2\nend\n"
        );
        assert_eq!(
            r.check(&parse_measurement(ok.as_bytes()).unwrap(), true),
            Ok(vec![])
        );
        let cases = [
            (ok.replace("\"c\"", "\"go\""), "runtime"),
            (ok.replace("nanosleep", "poll"), "method"),
            (
                ok.replace("cell 10000\nw 1\ns 2\ns 3\ndone 10000 2\n", ""),
                "cells",
            ),
            (ok.replacen("w 1\n", "", 1), "warm-up"),
            (
                ok.replacen("s 3\ndone 1000000 2", "done 1000000 1", 1),
                "1 samples, asked for 2",
            ),
        ];
        for (text, needle) in &cases {
            let m = parse_measurement(text.as_bytes()).unwrap();
            let e = r.check(&m, true).unwrap_err();
            assert!(e.contains(needle), "{e} lacks {needle}");
        }
        // A probe stopped midway: the first of the cells asked for is right, the second
        // alone is not.
        let m = parse_measurement(cases[2].0.as_bytes()).unwrap();
        assert_eq!(r.check(&m, false), Ok(vec![]));
        let second = ok.replace("cell 1000000\nw 1\ns 2\ns 3\ndone 1000000 2\n", "");
        let m = parse_measurement(second.as_bytes()).unwrap();
        assert!(r.check(&m, false).unwrap_err().contains("cells"));
    }

    #[test]
    fn budget_rule_deviations_are_notes() {
        let mut c = config();
        c.quota = ProbeQuota::Budget {
            budget_ns: 10,
            max_count: 3,
        };
        c.warmup = 0;
        c.durations_ns = vec![5];
        let r = Request::new(&c, "nanosleep", Kind::Oneshot, None);
        let m =
            |s: &str| parse_measurement(format!("{HEAD}\ncell 5\n{s}end\n").as_bytes()).unwrap();
        // 6 + 6 reaches 10 on the second sample: right.
        assert_eq!(r.check(&m("s 6\ns 6\ndone 5 2\n"), true), Ok(vec![]));
        // Max count reached before the budget: right.
        assert_eq!(r.check(&m("s 1\ns 1\ns 1\ndone 5 3\n"), true), Ok(vec![]));
        // Stopped short, and went on too long: notes.
        assert_eq!(r.check(&m("s 6\ndone 5 1\n"), true).unwrap().len(), 1);
        assert_eq!(r.check(&m("s 11\ns 1\ndone 5 2\n"), true).unwrap().len(), 1);
        // More than max: an error.
        assert!(r.check(&m("s 1\ns 1\ns 1\ns 1\ndone 5 4\n"), true).is_err());
    }
}
