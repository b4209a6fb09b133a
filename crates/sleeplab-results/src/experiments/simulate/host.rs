//! The host of a virtual machine, as the simulator models it: a model of what takes a
//! *running* vCPU away (plugged into
//! [`VirtualEnv::with_preemption_at`](sleeplab::lab::VirtualEnv::with_preemption_at), so
//! it acts on spins), while a *halted* one (a native sleep) is woken as the native-sleep
//! model says, promptly.
//!
//! * **Noise** (every host): while the vCPU runs, gaps arrive at a constant rate per
//!   second of running, their lengths drawn from a quantile table (piecewise linear
//!   between the table's points). [`HostModel::quiet`] is fitted from `noise_probe`'s
//!   spins after 60 Hz sleeps on the project's 2-core KVM guest, the gaps spent off the
//!   guest's run queue (docs/SIMULATE.md, "The host").
//! * **Punishment** (a busy host, [`HostModel::busy`]): once the vCPU has run
//!   [`Punishment::after_run_ns`] since it woke from a halt (preemptions left out), each
//!   further µs of running risks a deschedule at [`Punishment::per_s`], lasting a time
//!   uniform in `[min_ns, max_ns]`: a spinning vCPU is a CPU hog to the host's scheduler.
//!   A hypothesis, not a fit: the numbers are chosen so that a 300 µs spin after a halt
//!   is late by milliseconds about as often as one measurement with a busy host showed.
//!
//! Integer-only draws from the cell's own [`SimRng`] stream, as every model here.

use super::rng::{SimRng, below, chance, threshold};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab::lab::Running;

/// One point of a gap-length quantile table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GapQuantile {
    /// The quantile, 0–1.
    pub q: f64,
    /// The gap length at it, ns.
    pub ns: u64,
}

/// How a busy host punishes a vCPU that keeps running after it woke.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Punishment {
    /// Running this long since the wake is free, ns.
    pub after_run_ns: u64,
    /// Deschedules per second of running beyond it.
    pub per_s: f64,
    /// The shortest deschedule, ns.
    pub min_ns: u64,
    /// The longest deschedule, ns.
    pub max_ns: u64,
}

/// A virtual machine's host (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HostModel {
    /// `quiet`, `busy`, or a name given by whoever built it.
    pub name: String,
    /// Gaps per second of running.
    pub gaps_per_s: f64,
    /// The gaps' lengths: a quantile table from q = 0 to q = 1, ascending in both.
    pub gap_quantiles: Vec<GapQuantile>,
    /// A busy host's punishment of long runs, if any.
    pub punishment: Option<Punishment>,
}

/// `(q, µs)` of the quiet host's gap lengths (see [`HostModel::quiet`]).
const QUIET_GAPS_NS: [(f64, u64); 8] = [
    (0.0, 5_000),
    (0.1, 5_300),
    (0.25, 6_000),
    (0.5, 7_500),
    (0.75, 27_000),
    (0.9, 31_000),
    (0.99, 50_000),
    (1.0, 170_000),
];

impl HostModel {
    /// The project's 2-core KVM guest's host, fitted (docs/SIMULATE.md, "The host"):
    /// 900 gaps of at least 5 µs per second of running, median 7.5 µs, p90 31 µs, p99
    /// 50 µs, at most 170 µs (the medians of six probes' per-CPU numbers).
    pub fn quiet() -> Self {
        Self {
            name: "quiet".into(),
            gaps_per_s: 900.0,
            gap_quantiles: QUIET_GAPS_NS
                .iter()
                .map(|&(q, ns)| GapQuantile { q, ns })
                .collect(),
            punishment: None,
        }
    }

    /// [`quiet`](Self::quiet) plus a busy host's punishment: after 100 µs of running since
    /// a wake, a deschedule of 1–2 ms per 200 µs of further running on average (a 300 µs
    /// spin after a halt loses its CPU for milliseconds in about 6 of 10 frames).
    pub fn busy() -> Self {
        Self {
            name: "busy".into(),
            punishment: Some(Punishment {
                after_run_ns: 100_000,
                per_s: 5_000.0,
                min_ns: 1_000_000,
                max_ns: 2_000_000,
            }),
            ..Self::quiet()
        }
    }

    /// The model called `name` (`quiet` or `busy`).
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "quiet" => Some(Self::quiet()),
            "busy" => Some(Self::busy()),
            _ => None,
        }
    }

    /// The names [`named`](Self::named) knows.
    pub const NAMES: [&'static str; 2] = ["quiet", "busy"];

    /// The closure for
    /// [`VirtualEnv::with_preemption_at`](sleeplab::lab::VirtualEnv::with_preemption_at),
    /// drawing from `rng`: how long the running vCPU loses its CPU now, ns.
    pub fn preempt_fn(&self, mut rng: SimRng) -> impl FnMut(&Running) -> u64 + Send + 'static {
        let noise_per_ns = per_ns_threshold(self.gaps_per_s);
        let table = RankTable::new(&self.gap_quantiles);
        let punish = self.punishment.map(|p| (p, per_ns_threshold(p.per_s)));
        let (mut last, mut woke_at) = (0u64, None);
        move |r: &Running| {
            // Running time since the last call: the run since the wake grows between
            // calls and starts anew at a wake.
            let now = r.since_wake_ns;
            let ran = if woke_at == Some(r.woke_at) {
                now.saturating_sub(last)
            } else {
                now
            };
            let before = now - ran;
            (last, woke_at) = (now, Some(r.woke_at));
            if let Some((p, per_ns)) = punish {
                let exposed = now.saturating_sub(p.after_run_ns.max(before));
                if exposed > 0 && chance(&mut rng, per_ns.saturating_mul(exposed)) {
                    let span = p.max_ns.saturating_sub(p.min_ns).saturating_add(1);
                    return p.min_ns + below(&mut rng, span);
                }
            }
            if ran > 0 && chance(&mut rng, noise_per_ns.saturating_mul(ran)) {
                return table.draw(&mut rng);
            }
            0
        }
    }

    /// The share of running time the noise takes on average (mean gap × rate), 0–1: a
    /// check of the table against the probe's "lost" share.
    pub fn noise_share(&self) -> f64 {
        let t = &self.gap_quantiles;
        let mean: f64 = t
            .windows(2)
            .map(|w| (w[1].q - w[0].q) * (w[0].ns + w[1].ns) as f64 / 2.0)
            .sum();
        mean * self.gaps_per_s / 1e9
    }
}

/// `p·2⁶⁴` for a chance of `per_s / 10⁹` per ns (see [`threshold`]).
fn per_ns_threshold(per_s: f64) -> u64 {
    threshold(per_s / 1e9)
}

/// Ranks out of 2¹⁶ and their lengths: a quantile table for integer-only draws.
#[derive(Debug, Clone)]
struct RankTable {
    points: Vec<(u64, u64)>,
}

impl RankTable {
    const RANKS: u64 = 1 << 16;

    fn new(table: &[GapQuantile]) -> Self {
        let mut points: Vec<(u64, u64)> = table
            .iter()
            .map(|g| {
                let rank = (g.q.clamp(0.0, 1.0) * Self::RANKS as f64).round() as u64;
                (rank, g.ns)
            })
            .collect();
        points.sort_unstable();
        if points.is_empty() {
            points.push((0, 0));
        }
        Self { points }
    }

    /// A length at a uniform rank, linear between the table's points.
    fn draw(&self, rng: &mut SimRng) -> u64 {
        self.at(below(rng, Self::RANKS))
    }

    fn at(&self, rank: u64) -> u64 {
        let p = &self.points;
        let i = p.partition_point(|&(r, _)| r <= rank);
        if i == 0 {
            return p[0].1;
        }
        if i == p.len() {
            return p[i - 1].1;
        }
        let ((r0, a), (r1, b)) = (p[i - 1], p[i]);
        let span = u128::from(r1 - r0).max(1);
        let part = u128::from(rank - r0);
        if b >= a {
            a + (u128::from(b - a) * part / span) as u64
        } else {
            a - (u128::from(a - b) * part / span) as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::rng::rng_for;
    use super::*;

    /// The gaps of `wakes` runs of `run_per_wake` ns each, reads `step` ns apart, and how
    /// many runs had a gap of 1 ms or more.
    fn spin(model: &HostModel, seed: u64, wakes: u64, run_per_wake: u64, step: u64) -> Vec<u64> {
        spin_counting(model, seed, wakes, run_per_wake, step).0
    }

    fn spin_counting(
        model: &HostModel,
        seed: u64,
        wakes: u64,
        run_per_wake: u64,
        step: u64,
    ) -> (Vec<u64>, usize) {
        let mut f = model.preempt_fn(rng_for(seed, &[]));
        let mut gaps = Vec::new();
        let mut punished = 0;
        for w in 0..wakes {
            let mut hit = false;
            let mut since = 0;
            while since < run_per_wake {
                since += step;
                let lost = f(&Running {
                    now: w * 1_000_000_000 + since,
                    run_ns: since,
                    since_wake_ns: since,
                    woke_at: w * 1_000_000_000,
                });
                if lost > 0 {
                    gaps.push(lost);
                    hit |= lost >= 1_000_000;
                }
            }
            punished += usize::from(hit);
        }
        (gaps, punished)
    }

    #[test]
    fn the_quiet_host_has_the_fitted_rate_and_quantiles() {
        let m = HostModel::quiet();
        // 100 wakes of 100 ms of running: 10 s, about 9 000 gaps.
        let mut gaps = spin(&m, 3, 100, 100_000_000, 50);
        let n = gaps.len() as f64;
        assert!((n / 10.0 - 900.0).abs() < 50.0, "{n} gaps in 10 s");
        gaps.sort_unstable();
        let q = |p: f64| gaps[((gaps.len() - 1) as f64 * p) as usize];
        assert!((7_000..=8_000).contains(&q(0.5)), "{}", q(0.5));
        assert!((29_000..=33_000).contains(&q(0.9)), "{}", q(0.9));
        assert!(*gaps.last().unwrap() <= 170_000);
        assert!(gaps[0] >= 5_000);
        // The mean from the table, against the draws.
        let share = gaps.iter().sum::<u64>() as f64 / 10e9;
        assert!(
            (share - m.noise_share()).abs() < 0.1 * m.noise_share(),
            "{share}"
        );
    }

    #[test]
    fn a_busy_host_punishes_long_runs_only() {
        let m = HostModel::busy();
        // 1 000 wakes that run 100 µs each: never punished.
        assert_eq!(spin_counting(&m, 5, 1_000, 100_000, 50).1, 0);
        // Running 300 µs: 200 µs exposed at one per 200 µs, 1 − e⁻¹ ≈ 63 % punished.
        let n = spin_counting(&m, 5, 1_000, 300_000, 50).1;
        assert!((560..=700).contains(&n), "{n} of 1000");
        for g in spin(&m, 6, 200, 400_000, 50) {
            assert!(g <= 2_000_000);
        }
    }

    #[test]
    fn the_rank_table_interpolates_and_clamps() {
        let t = RankTable::new(&[
            GapQuantile { q: 0.0, ns: 100 },
            GapQuantile { q: 0.5, ns: 200 },
            GapQuantile { q: 1.0, ns: 1_000 },
        ]);
        assert_eq!(t.at(0), 100);
        assert_eq!(t.at(RankTable::RANKS / 4), 150);
        assert_eq!(t.at(RankTable::RANKS / 2), 200);
        assert_eq!(t.at(RankTable::RANKS * 3 / 4), 600);
        assert_eq!(t.at(RankTable::RANKS), 1_000);
        assert_eq!(RankTable::new(&[]).at(5), 0);
        assert_eq!(HostModel::named("busy"), Some(HostModel::busy()));
        assert_eq!(HostModel::named("loud"), None);
    }
}
