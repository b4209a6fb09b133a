//! The building blocks every strategy is made of: a native sleep that resumes after early
//! returns, and a spin loop that returns at the first clock read at or after a deadline.

use super::spin_log;
use crate::clock::Env;

/// The fixed native sleep of the seed and SDL strategies: one millisecond, in ns.
pub(crate) const ONE_MS: u64 = 1_000_000;

/// How the final phase of a wait burns its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpinStrategy {
    /// Busy-wait with a pause instruction between clock reads ([`Env::spin_pause`]): the
    /// most precise, keeps the core busy.
    #[default]
    Spin,
    /// Call `sched_yield` between clock reads ([`Env::yield_now`]): lets another runnable
    /// thread on this core go first. On an idle core it returns at once and costs as
    /// much CPU as spinning. With a busy thread on the same CPU it costs a whole slice:
    /// since Linux 6.6 (EEVDF) `yield_task_fair` pushes the yielder's virtual deadline
    /// one slice ahead (and since 6.17 also forfeits its remaining lag), so the busy
    /// thread is picked and runs until its own slice ends or a tick preempts it,
    /// milliseconds later (`sched_base_slice` 0.75 ms × (1 + log₂ CPUs), rounded to ticks).
    /// That is why the yield-spinning contenders (`fixed-margin`, the `spin_sleep` crate's
    /// Linux default) are milliseconds late at the median with one busy thread per CPU.
    YieldSpin,
}

/// How a spin phase ended: the first clock read at or after its deadline, and the longest
/// time between two consecutive clock reads on the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spun {
    /// The first clock reading at or after the deadline.
    pub woke: u64,
    /// The longest gap between consecutive clock reads, counted from `from` (the last
    /// reading before the spin), ns. A spin iteration takes tens of ns; a gap of
    /// milliseconds means the thread lost its CPU while spinning.
    pub max_gap_ns: u64,
    /// How long the spin had run (since `from`) when that longest gap began, ns.
    pub run_before_gap_ns: u64,
}

/// Spins until the clock reads at or after `deadline`, starting after the reading
/// `from`; returns that reading and the longest gap between readings. Its gaps go to
/// the [`spin_log`] when installed.
#[inline]
pub(crate) fn spin_until<E: Env>(
    env: &mut E,
    from: u64,
    deadline: u64,
    strategy: SpinStrategy,
) -> Spun {
    let mut prev = from;
    let mut max_gap_ns = 0;
    let mut run_before_gap_ns = 0;
    // Gaps are logged only while a tracer installed the log (one read per call).
    let log = spin_log::threshold();
    loop {
        let now = env.now();
        let gap = now.saturating_sub(prev);
        if gap >= log {
            spin_log::note(prev, now);
        }
        if gap > max_gap_ns {
            max_gap_ns = gap;
            run_before_gap_ns = prev.saturating_sub(from);
        }
        prev = now;
        if now >= deadline {
            return Spun {
                woke: now,
                max_gap_ns,
                run_before_gap_ns,
            };
        }
        match strategy {
            SpinStrategy::Spin => env.spin_pause(),
            SpinStrategy::YieldSpin => env.yield_now(),
        }
    }
}

/// Absolute native sleep until `target`, sleeping again after early (interrupted)
/// returns; returns the first clock reading at or after `target`.
#[inline]
pub(crate) fn native_sleep_until<E: Env>(env: &mut E, target: u64) -> u64 {
    loop {
        env.sleep_until(target);
        let now = env.now();
        if now >= target {
            return now;
        }
    }
}

/// [`native_sleep_until`] that gives up after an early return when `interrupted` says
/// so: `None` then (the caller has something earlier to do), else the first reading at
/// or after `target`.
#[inline]
pub(crate) fn native_sleep_until_or<E: Env>(
    env: &mut E,
    target: u64,
    interrupted: &mut impl FnMut(&mut E) -> bool,
) -> Option<u64> {
    loop {
        env.sleep_until(target);
        let now = env.now();
        if now >= target {
            return Some(now);
        }
        if interrupted(env) {
            return None;
        }
    }
}

/// Relative native sleep of `ns` from `from`, resuming with the remaining time after early
/// returns (what `nanosleep` with its remainder, `std::thread::sleep` and
/// `std::this_thread::sleep_for` do); returns the first reading at or after `from + ns`.
#[inline]
pub(crate) fn native_sleep_for_from<E: Env>(env: &mut E, from: u64, ns: u64) -> u64 {
    let end = from.saturating_add(ns);
    let mut now = from;
    while now < end {
        env.sleep_for(end - now);
        now = env.now();
    }
    now
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::{VirtualCosts, VirtualEnv};

    #[test]
    fn a_spin_reports_its_longest_gap_and_when_it_began() {
        // Clock reads 10 ns, pauses 90 ns: reads 100 ns apart; a 1 ms preemption once
        // the spin has run 500 ns.
        let mut env = VirtualEnv::starting_at(1_000)
            .with_costs(VirtualCosts {
                clock_read_ns: 10,
                spin_pause_ns: 90,
                yield_ns: 90,
                sleep_cpu_ns: 0,
            })
            .with_preemption(|run| if run >= 500 { 1_000_000 } else { 0 });
        let spun = spin_until(&mut env, 1_000, 2_000_000, SpinStrategy::Spin);
        assert!(spun.woke >= 2_000_000);
        assert!(spun.max_gap_ns >= 1_000_000, "{spun:?}");
        assert!((400..=600).contains(&spun.run_before_gap_ns), "{spun:?}");
        // Without preemptions the gaps are one iteration.
        let mut quiet = VirtualEnv::starting_at(0);
        let spun = spin_until(&mut quiet, 0, 10_000, SpinStrategy::YieldSpin);
        assert!(spun.max_gap_ns <= 400, "{spun:?}");
    }
}
