//! The absolute grid of a periodic timer, and what a wake on it stands for. Pure: no
//! clock is read here.
//!
//! Deadline `k` (k = 1, 2, …) of a timer armed at `t0` with period `P` is due at
//! `t0 + k·P`; the grid is never re-based on a wake time. Each [`Wake`] reports how many
//! deadlines it stands for (`expirations`, ≥ 1): the timerfd expiration count,
//! 1 + `timer_getoverrun()` for a POSIX timer, and for the loops the deadlines already
//! passed when they woke ([`passed_deadlines`]). Its own deadline is the latest it
//! covers; the ones before it in the same wake were overrun (missed).

/// One wake-up of a periodic mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C)]
pub struct Wake {
    /// When the waiting thread (or the SIGEV_THREAD callback) read the clock after
    /// waking, ns (CLOCK_MONOTONIC).
    pub wake_ns: u64,
    /// Deadlines this wake stands for, as the mechanism reported them (≥ 1).
    pub expirations: u64,
}

/// A wake placed on its timer's grid: the programmed expiry it answers and when it came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expiry {
    /// The programmed expiry of the latest deadline this wake stands for, ns.
    pub deadline_ns: u64,
    /// When the wake was seen, ns (never before `deadline_ns` for a mechanism with exact
    /// counts).
    pub wake_ns: u64,
    /// Deadlines it stands for (≥ 1).
    pub expirations: u64,
}

impl Expiry {
    /// Deadlines overrun: passed together with a later one, so their own wake never came.
    pub fn overruns(&self) -> u64 {
        self.expirations.saturating_sub(1)
    }

    /// `wake − deadline`, ns (negative only for an early wake).
    pub fn lateness_ns(&self) -> i64 {
        // Timestamps are far below 2^63 ns (292 years of uptime).
        self.wake_ns as i64 - self.deadline_ns as i64
    }
}

/// The grid `t0 + k·P` of an armed timer and how many of its deadlines the wakes so far
/// covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    t0_ns: u64,
    period_ns: u64,
    covered: u64,
}

impl Grid {
    /// The grid of a timer armed at `t0_ns` (its first deadline is `t0 + P`); a zero
    /// period is taken as 1 ns.
    pub fn new(t0_ns: u64, period_ns: u64) -> Self {
        Self {
            t0_ns,
            period_ns: period_ns.max(1),
            covered: 0,
        }
    }

    /// The origin, ns.
    pub fn t0_ns(&self) -> u64 {
        self.t0_ns
    }

    /// The period, ns.
    pub fn period_ns(&self) -> u64 {
        self.period_ns
    }

    /// Deadlines covered by the wakes so far.
    pub fn covered(&self) -> u64 {
        self.covered
    }

    /// When deadline `k` is due, ns (saturating).
    pub fn deadline(&self, k: u64) -> u64 {
        self.t0_ns.saturating_add(k.saturating_mul(self.period_ns))
    }

    /// The first deadline no wake has covered yet.
    pub fn next_deadline(&self) -> u64 {
        self.deadline(self.covered.saturating_add(1))
    }

    /// How many deadlines a loop that woke at `now` stands for ([`passed_deadlines`]).
    pub fn passed(&self, now: u64) -> u64 {
        passed_deadlines(self.t0_ns, self.period_ns, self.covered, now)
    }

    /// Places `wake` on the grid after the wakes before it: it covers the next
    /// `expirations` deadlines (at least one), the last of which is its own.
    pub fn advance(&mut self, wake: Wake) -> Expiry {
        self.covered = self.covered.saturating_add(wake.expirations.max(1));
        Expiry {
            deadline_ns: self.deadline(self.covered),
            wake_ns: wake.wake_ns,
            expirations: wake.expirations,
        }
    }
}

/// How many deadlines a loop that woke at `now` has just passed, given that `covered`
/// deadlines were accounted for before: the deadlines up to and including the latest one
/// at or before `now`, and at least 1 (the wake stands for the deadline it waited for,
/// even when it woke early). Saturating; never panics (a 0 period is taken as 1 ns).
pub fn passed_deadlines(t0_ns: u64, period_ns: u64, covered: u64, now: u64) -> u64 {
    let latest = now.saturating_sub(t0_ns) / period_ns.max(1);
    latest.max(covered.saturating_add(1)) - covered
}

/// Makes per-wake expiration counts that are only estimates consistent with the wake
/// times, for mechanisms whose count cannot be tied to the wake that reports it
/// ([`PeriodicMechanism::exact_counts`](super::PeriodicMechanism::exact_counts) false):
///
/// * `setitimer`: the kernel counts no overruns, so the count is the deadlines passed by
///   the clock read after `sigwaitinfo`; but a thread preempted between dequeuing the
///   signal and that read sees a deadline whose own signal is still to come, and that
///   signal would then look early.
/// * `posix-timer-thread`: each expiry runs in its own thread, so `timer_getoverrun` in a
///   callback may return the overrun of another expiry.
///
/// Each wake `i` claims deadline `k_i` (the running sum of its estimates). A wake cannot
/// stand for a deadline after its own time, so `k_i` is capped at the latest deadline at
/// or before the wake, and at `k_{i+1} − 1` (a backward pass); then `k_i ≥ k_{i−1} + 1`
/// is restored (a forward pass). When the wakes can be matched to distinct deadlines at
/// or before them, no wake is early afterwards; when they cannot (more wakes than
/// deadlines have passed: a real early wake), the forward pass leaves the excess early.
/// Counts that are already consistent (the kernel's exact ones) are left unchanged.
pub fn reconcile(t0_ns: u64, period_ns: u64, wakes: &mut [Wake]) {
    let p = period_ns.max(1);
    let mut k: Vec<u64> = Vec::with_capacity(wakes.len());
    let mut c = 0u64;
    for w in wakes.iter() {
        c = c.saturating_add(w.expirations.max(1));
        k.push(c);
    }
    let mut cap = u64::MAX;
    for (ki, w) in k.iter_mut().zip(wakes.iter()).rev() {
        let latest = w.wake_ns.saturating_sub(t0_ns) / p;
        *ki = (*ki).min(latest).min(cap);
        cap = ki.saturating_sub(1);
    }
    let mut prev = 0u64;
    for (ki, w) in k.iter_mut().zip(wakes.iter_mut()) {
        *ki = (*ki).max(prev + 1);
        w.expirations = *ki - prev;
        prev = *ki;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_grid_places_wakes_on_their_own_deadline() {
        let mut g = Grid::new(10 * MS, MS);
        assert_eq!(g.next_deadline(), 11 * MS);
        let e = g.advance(Wake {
            wake_ns: 11 * MS + 20_000,
            expirations: 1,
        });
        assert_eq!(
            (e.deadline_ns, e.lateness_ns(), e.overruns()),
            (11 * MS, 20_000, 0)
        );
        // A stall: the next wake at t0 + 4.5 ms stands for deadlines 2, 3 and 4.
        assert_eq!(g.passed(14 * MS + MS / 2), 3);
        let e = g.advance(Wake {
            wake_ns: 14 * MS + MS / 2,
            expirations: 3,
        });
        assert_eq!((e.deadline_ns, e.overruns(), g.covered()), (14 * MS, 2, 4));
        assert_eq!(g.next_deadline(), 15 * MS);
        // A wake reporting 0 still moves the grid by one, and nothing overflows.
        let mut g = Grid::new(u64::MAX - 1, 0);
        assert_eq!(g.period_ns(), 1);
        let e = g.advance(Wake::default());
        assert_eq!((e.deadline_ns, g.covered()), (u64::MAX, 1));
        assert_eq!(g.deadline(u64::MAX), u64::MAX);
    }

    #[test]
    fn reconcile_leaves_a_real_early_wake_early() {
        let t0 = 10 * MS;
        let w = |wake_ns, expirations| Wake {
            wake_ns,
            expirations,
        };
        // Two wakes before deadline 2 claim deadlines 1..=2 and 3: both are capped at
        // deadline 1, then the second is pushed to deadline 2, which it precedes.
        let mut wakes = vec![w(t0 + 1_500_000, 2), w(t0 + 1_700_000, 1)];
        reconcile(t0, MS, &mut wakes);
        assert_eq!(wakes, vec![w(t0 + 1_500_000, 1), w(t0 + 1_700_000, 1)]);
        let mut g = Grid::new(t0, MS);
        let e: Vec<i64> = wakes.iter().map(|&x| g.advance(x).lateness_ns()).collect();
        assert_eq!(e, vec![500_000, -300_000]);
        // Consistent counts, and none at all, are left alone.
        let mut exact = vec![w(t0 + MS, 1), w(t0 + 4 * MS + 1, 3)];
        reconcile(t0, MS, &mut exact);
        assert_eq!(exact, vec![w(t0 + MS, 1), w(t0 + 4 * MS + 1, 3)]);
        reconcile(t0, MS, &mut []);
    }
}
