//! The planned wall time of a stage, derived from its config alone: requested durations
//! × counts plus fixed allowances (no measurement). The survey's announced times ("about
//! N s", "~N s" per stage) and the plan's budget test both read [`Estimate::estimate_ns`]
//! through `StagePlan`, so there is one derivation.
//!
//! The allowances are stated constants, not timings of this machine: what a call costs
//! beyond its request, what a wake-up costs when more threads spin than there are CPUs,
//! what starting a probe or simulating a sleep costs (from the stage times in
//! `docs/REPORT.md`).

use crate::contenders;
use crate::experiments::cpu::CpuConfig;
use crate::experiments::explain::{self, ExplainConfig};
use crate::experiments::pace::PaceConfig;
use crate::experiments::rounds::share;
use crate::experiments::runtimes::{ProbeQuota, RuntimesConfig};
use crate::experiments::short::ShortConfig;
use crate::experiments::simulate::{Models, SimulateOptions};
use crate::experiments::sweep::{Quota, SweepConfig};
use crate::experiments::timers::TimersConfig;

/// What one wait costs beyond its (rounded) request: the clock reads, the system call
/// and the default 50 µs timer slack with a wake-up.
pub const CALL_OVERHEAD_NS: u64 = 60_000;

/// What a wake-up waits for a CPU when more threads spin than there are CPUs: seed 000's
/// regime (where a 10 ms nanosleep was measured at 17 ms on average with 5 busy threads
/// on 2 CPUs).
pub const OVERSUBSCRIBED_WAKE_NS: u64 = 7_000_000;

/// Setting up and finishing a stage (threads, the result, its progress bar).
pub const STAGE_OVERHEAD_NS: u64 = 200_000_000;

/// Starting one runtime's probe and listing its methods (a JVM takes the longest).
pub const PROBE_START_NS: u64 = 1_000_000_000;

/// What one call of a runtime's sleep costs beyond its request, on average over the
/// probes' methods: about half of them round requests under 1 ms up to ~1 ms (Go's
/// time.Sleep on some calls, Node.js's timers, asyncio, Java's millisecond sleeps,
/// Wine; `docs/RUNTIMES.md`), the others overshoot by ~60 µs.
pub const PROBE_CALL_OVERHEAD_NS: u64 = 500_000;

/// One-shot methods a runtime's probe has, at most, besides its periodic one.
pub const PROBE_ONESHOT_METHODS: u64 = 3;

/// One simulated sleep in virtual time (CPU-bound), from the simulate stage's time.
pub const SIMULATED_SLEEP_NS: u64 = 350_000;

/// A stage's planned wall time, ns.
pub trait Estimate {
    /// Planned wall time, ns, from the config alone, on a machine of `cpus` CPUs (a
    /// load above it is oversubscribed).
    fn estimate_ns(&self, cpus: usize) -> u64;
}

/// One wait of `requested_ns` by `mechanism`: the request rounded up to the mechanism's
/// unit (poll takes milliseconds), plus the call's overhead.
fn call_ns(mechanism: &str, requested_ns: u64) -> u64 {
    let unit = contenders::all()
        .into_iter()
        .find(|i| i.name == mechanism)
        .map_or(1, |i| i.min_ns.max(1));
    requested_ns.div_ceil(unit) * unit + CALL_OVERHEAD_NS
}

/// The samples a cell takes under `quota` when each call costs `call_ns` (the tests' check
/// of the quotas).
#[cfg(test)]
pub(crate) fn samples(quota: Quota, call_ns: u64) -> u64 {
    match quota {
        Quota::Iterations { count } => count,
        Quota::Budget {
            budget_ns,
            min_count,
            max_count,
        } => budget_ns
            .div_ceil(call_ns.max(1))
            .clamp(min_count.max(1), max_count.max(min_count.max(1))),
    }
}

/// The samples a cell takes under `quota` in `rounds` interleaved rounds, each taking
/// its share of the budget and of the minimum and maximum counts (at least one sample),
/// as the sweep's loop does.
pub fn samples_in_rounds(quota: Quota, call_ns: u64, rounds: u64) -> u64 {
    let rounds = rounds.max(1);
    (0..rounds)
        .map(|r| match quota {
            Quota::Iterations { count } => share(count, rounds, r),
            Quota::Budget {
                budget_ns,
                min_count,
                max_count,
            } => {
                let min = share(min_count, rounds, r).max(1);
                let max = share(max_count, rounds, r).max(min);
                share(budget_ns, rounds, r)
                    .div_ceil(call_ns.max(1))
                    .clamp(min, max)
            }
        })
        .sum()
}

/// Every planned cell: (warm-up + its samples over the rounds) × the call's cost, once
/// per slack level.
impl Estimate for SweepConfig {
    fn estimate_ns(&self, cpus: usize) -> u64 {
        let slacks = self.timer_slacks_ns.len().max(1) as u64;
        let cells: u64 = self
            .planned_cells()
            .into_iter()
            .map(|(m, d, load, quota)| {
                let mut call = call_ns(m, d);
                if load > cpus {
                    call += OVERSUBSCRIBED_WAKE_NS;
                }
                (samples_in_rounds(quota, call, self.rounds) + self.warmup) * call
            })
            .sum();
        cells * slacks + STAGE_OVERHEAD_NS
    }
}

/// Every item at every load (and slack): warm-up + wakes, each the call's cost; a load
/// above the CPUs adds a wake-up's wait for a CPU to every call.
impl Estimate for ExplainConfig {
    fn estimate_ns(&self, cpus: usize) -> u64 {
        let slacks = self.timer_slacks_ns.len().max(1) as u64;
        let waits = self.iterations + explain::WARMUP;
        let cells: u64 = self
            .loads
            .iter()
            .flat_map(|&load| {
                self.items.iter().map(move |i| {
                    let mut call = call_ns(&i.mechanism, i.requested_ns);
                    if load > cpus {
                        call += OVERSUBSCRIBED_WAKE_NS;
                    }
                    waits * call
                })
            })
            .sum();
        cells * slacks + STAGE_OVERHEAD_NS
    }
}

/// Every cell (each mechanism at 0 and its unit, and the empty-loop floor) fills its
/// batch time in every repetition.
impl Estimate for ShortConfig {
    fn estimate_ns(&self, _cpus: usize) -> u64 {
        let cells = 2 * self.mechanisms.len() as u64 + 1;
        let slacks = self.timer_slacks_ns.len().max(1) as u64;
        self.repetitions * cells * slacks * self.batch_time_ns + STAGE_OVERHEAD_NS
    }
}

/// Every contender's frames, one period each.
impl Estimate for PaceConfig {
    fn estimate_ns(&self, _cpus: usize) -> u64 {
        self.strategies.len() as u64 * self.frames * (self.period_ns + self.work_ns)
            + STAGE_OVERHEAD_NS
    }
}

/// Every strategy at every interval for its seconds.
impl Estimate for CpuConfig {
    fn estimate_ns(&self, _cpus: usize) -> u64 {
        self.strategies.len() as u64 * self.intervals_ns.len() as u64 * self.seconds_ns
            + STAGE_OVERHEAD_NS
    }
}

/// Every mechanism × period × load × slack for its duration.
impl Estimate for TimersConfig {
    fn estimate_ns(&self, _cpus: usize) -> u64 {
        let cells = self.mechanisms.len()
            * self.periods_ns.len()
            * self.loads.len().max(1)
            * self.timer_slacks_ns.len().max(1);
        cells as u64 * self.duration_ns + STAGE_OVERHEAD_NS
    }
}

/// Every strategy × interval × scheduler, `warmup + sleeps` simulated sleeps each.
impl Estimate for SimulateOptions {
    fn estimate_ns(&self, _cpus: usize) -> u64 {
        let strategies = self.strategies.as_ref().map_or(5, Vec::len) as u64;
        let models = match &self.models {
            Models::Schedulers { periods_ns, .. } => periods_ns.len() as u64,
            Models::Replay(_) => 1,
        };
        strategies
            * self.intervals_ns.len() as u64
            * models
            * (self.sleeps + self.warmup)
            * SIMULATED_SLEEP_NS
            + STAGE_OVERHEAD_NS
    }
}

/// Per runtime: its probe's start, its one-shot methods' cells at every request (a
/// fixed count: count × (request + `PROBE_CALL_OVERHEAD_NS`); a budget: the budget),
/// its periodic ticks; at every load.
impl Estimate for RuntimesConfig {
    fn estimate_ns(&self, _cpus: usize) -> u64 {
        let cell = |d: u64| match self.quota.count_for(d) {
            Some(count) => (count + self.warmup) * (d + PROBE_CALL_OVERHEAD_NS),
            None => match self.quota {
                ProbeQuota::Budget { budget_ns, .. } => budget_ns,
                _ => 0,
            },
        };
        let cells: u64 = self.durations_ns.iter().map(|&d| cell(d)).sum();
        let oneshot = PROBE_ONESHOT_METHODS * cells;
        let periodic = (self.ticks + self.warmup) * self.period_ns;
        let per_runtime = PROBE_START_NS + (oneshot + periodic) * self.loads.len().max(1) as u64;
        self.runtimes.len() as u64 * per_runtime + STAGE_OVERHEAD_NS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_quota_samples_are_clamped() {
        let q = Quota::Budget {
            budget_ns: 30_000_000,
            min_count: 100,
            max_count: 2_000,
        };
        assert_eq!(samples(q, 60_000), 500);
        assert_eq!(samples(q, 1_060_000), 100);
        assert_eq!(samples(q, 1), 2_000);
        assert_eq!(samples(Quota::Iterations { count: 7 }, 1), 7);
    }

    /// A fixed count per request costs (count + warm-up) × (request + overhead) per
    /// cell, for each one-shot method.
    #[test]
    fn runtimes_with_a_fixed_count_are_estimated_per_request() {
        let c = RuntimesConfig {
            runtimes: vec!["c".into()],
            durations_ns: vec![1_000_000, 1_000],
            quota: ProbeQuota::PerRequest {
                count: 100,
                max_ideal_ns: 50_000_000,
            },
            warmup: 2,
            ticks: 0,
            period_ns: 0,
            loads: vec![0],
            methods: None,
            timer_slacks_ns: vec![],
            pin_cpu: None,
            policy: Default::default(),
            priority: 0,
            mlock: false,
            timestamps: false,
            trace: false,
            json_samples: 0,
            output_cap_bytes: 0,
            startup_timeout_ns: 0,
            saved_files: vec![],
        };
        let cells = (50 + 2) * (1_000_000 + PROBE_CALL_OVERHEAD_NS)
            + (100 + 2) * (1_000 + PROBE_CALL_OVERHEAD_NS);
        assert_eq!(
            c.estimate_ns(2),
            PROBE_START_NS + PROBE_ONESHOT_METHODS * cells + STAGE_OVERHEAD_NS
        );
    }

    /// (iterations + warm-up) × each item's call per load: a 100 µs nanosleep and the
    /// precise sleeper at 60 Hz, idle and oversubscribed.
    #[test]
    fn explain_is_estimated_per_item_and_load() {
        use crate::experiments::explain::ExplainItem;
        let item = |m: &str, ns: u64| ExplainItem {
            mechanism: m.into(),
            requested_ns: ns,
        };
        let c = ExplainConfig {
            items: vec![item("nanosleep", 100_000), item("precise", 16_666_667)],
            loads: vec![0, 3],
            timer_slacks_ns: vec![],
            iterations: 40,
            rounds: 2,
            json_wakes: 0,
            trace: true,
        };
        let calls = (100_000 + CALL_OVERHEAD_NS) + (16_666_667 + CALL_OVERHEAD_NS);
        let waits = 40 + explain::WARMUP;
        assert_eq!(
            c.estimate_ns(2),
            waits * (2 * calls + 2 * OVERSUBSCRIBED_WAKE_NS) + STAGE_OVERHEAD_NS
        );
    }

    #[test]
    fn load_beyond_the_cpus_costs_a_wake_up_per_call() {
        assert_eq!(call_ns("nanosleep", 1_000), 1_000 + CALL_OVERHEAD_NS);
        let c = SweepConfig {
            loads: vec![0, 2, 5],
            ..SweepConfig::new(&["nanosleep"], &[1_000], Quota::Iterations { count: 10 })
        };
        let call = 1_000 + CALL_OVERHEAD_NS;
        assert_eq!(
            c.estimate_ns(2),
            3 * 10 * call + 10 * OVERSUBSCRIBED_WAKE_NS + STAGE_OVERHEAD_NS
        );
    }
}
