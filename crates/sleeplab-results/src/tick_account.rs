//! Tick accounting: a pure function from the wake timestamps a periodic mechanism
//! produced and its absolute schedule `t0 + k·P` to counts, lateness per scheduled tick
//! and the seed's interval error. No clock is read here, so it is tested exactly.
//!
//! # The model
//!
//! Deadline `k` (k = 1, 2, …, `ticks`) is due at `t0 + k·P`; the schedule is never
//! re-based on a wake time, so a stall shows up in every tick it delays (no coordinated
//! omission). Each wake reports how many deadlines it stands for (`expirations`, ≥ 1):
//! the timerfd expiration count, 1 + `timer_getoverrun()` for a POSIX timer, and for the
//! loops the deadlines already passed when they woke ([`sleeplab::wait::periodic::passed_deadlines`]). Wake `i`
//! therefore stands for deadlines `c_{i-1}+1 ..= c_i` where `c_i` is the running sum of
//! expirations:
//!
//! * its *own* deadline is `c_i` (the latest it covers); a wake before its own deadline
//!   is **early** (counted, never hidden);
//! * every deadline it covers is *delivered* at the wake's time: the per-tick lateness
//!   is `wake − deadline`, so a stall of 3.5 periods gives lateness 3.5 P, 2.5 P, 1.5 P,
//!   0.5 P to the four ticks it swallowed (what HdrHistogram's expected-interval
//!   correction records, and what cyclictest reports for the first of them);
//! * the deadlines beyond the wake's first are **missed** (overruns): `missed =
//!   Σ (expirations − 1)`, so `received + missed = expected` always;
//! * the seed's error is per wake: `|interval − P| / P` with `interval` the time since
//!   the previous wake (since `t0` for the first).
//!
//! A wake reporting 0 expirations stands for no deadline: it is counted as *extra* and
//! left out of everything else. Wakes after the last scheduled deadline is covered are
//! ignored, and a run cut short is accounted up to the deadlines it reached
//! ([`Schedule::of_run`]).

pub use sleeplab::wait::periodic::Wake;
use sleeplab_account::Window;

/// An absolute periodic schedule: deadline `k` is due at `t0_ns + k·period_ns`,
/// k = 1..=`ticks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// The origin: the clock read right before the timer was armed, ns.
    pub t0_ns: u64,
    /// The period, ns (> 0).
    pub period_ns: u64,
    /// Number of deadlines in the run.
    pub ticks: u64,
}

impl Schedule {
    /// When deadline `k` is due, ns (saturating).
    pub fn deadline(&self, k: u64) -> u64 {
        self.t0_ns.saturating_add(k.saturating_mul(self.period_ns))
    }

    /// The schedule a run of `planned` deadlines from `t0_ns` is accounted against: all
    /// of them, or when the run was `interrupted`, only the deadlines its `wakes`
    /// reached (a stopped run is not charged with deadlines it never waited for).
    pub fn of_run(
        t0_ns: u64,
        period_ns: u64,
        planned: u64,
        interrupted: bool,
        wakes: &[Wake],
    ) -> Self {
        let ticks = if interrupted {
            wakes
                .iter()
                .map(|w| w.expirations)
                .fold(0u64, u64::saturating_add)
                .min(planned)
        } else {
            planned
        };
        Self {
            t0_ns,
            period_ns,
            ticks,
        }
    }
}

/// What happened to one scheduled tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TickRecord {
    /// Delivery time − scheduled time, ns (negative only for an early wake).
    pub lateness_ns: i64,
    /// Index of the wake that delivered it.
    pub wake: u32,
    /// True when the wake also stood for a later deadline: an overrun.
    pub missed: bool,
}

/// The accounting of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Account {
    /// Deadlines scheduled.
    pub expected: u64,
    /// Wakes that delivered at least one scheduled deadline.
    pub received: u64,
    /// Deadlines delivered together with a later one, plus deadlines never delivered:
    /// `expected − received`.
    pub missed: u64,
    /// Wakes before their own deadline.
    pub early: u64,
    /// Wakes that stood for no deadline (0 expirations).
    pub extra: u64,
    /// Deadlines never covered by any wake (an interrupted or failed run).
    pub undelivered: u64,
    /// One record per delivered deadline, in schedule order.
    pub ticks: Vec<TickRecord>,
    /// The seed's error of each received wake: |interval − P| / P × 100.
    pub error_pct: Vec<f64>,
    /// Last received wake − its own deadline, ns.
    pub end_lateness_ns: i64,
    /// Last received wake − (t0 + received·P): how far a program that counts its wakes
    /// as ticks has drifted from the clock (for a relative-sleep loop, the accumulated
    /// drift), ns.
    pub drift_ns: i64,
}

fn diff(a: u64, b: u64) -> i64 {
    // Timestamps are far below 2^63 ns (292 years of uptime).
    a as i64 - b as i64
}

/// Accounts `wakes` (in the order they happened) against `schedule`.
pub fn account(schedule: &Schedule, wakes: &[Wake]) -> Account {
    let n = schedule.ticks;
    let p = schedule.period_ns.max(1);
    let mut acc = Account {
        expected: n,
        received: 0,
        missed: 0,
        early: 0,
        extra: 0,
        undelivered: 0,
        ticks: Vec::with_capacity(usize::try_from(n).unwrap_or(0).min(1 << 24)),
        error_pct: Vec::with_capacity(wakes.len().min(1 << 24)),
        end_lateness_ns: 0,
        drift_ns: 0,
    };
    let mut covered = 0u64;
    let mut prev = schedule.t0_ns;
    for (i, w) in wakes.iter().enumerate() {
        if covered >= n {
            break;
        }
        if w.expirations == 0 {
            acc.extra += 1;
            continue;
        }
        let own = covered.saturating_add(w.expirations);
        let own_lateness = diff(w.wake_ns, schedule.deadline(own));
        if own_lateness < 0 {
            acc.early += 1;
        }
        let last = own.min(n);
        for k in covered + 1..=last {
            acc.ticks.push(TickRecord {
                lateness_ns: diff(w.wake_ns, schedule.deadline(k)),
                wake: u32::try_from(i).unwrap_or(u32::MAX),
                missed: k != own,
            });
        }
        acc.received += 1;
        let interval = diff(w.wake_ns, prev);
        acc.error_pct
            .push((interval - p as i64).unsigned_abs() as f64 / p as f64 * 100.0);
        acc.end_lateness_ns = own_lateness;
        acc.drift_ns = diff(w.wake_ns, schedule.deadline(acc.received));
        prev = w.wake_ns;
        covered = own;
    }
    acc.undelivered = n.saturating_sub(covered.min(n));
    acc.missed = n - acc.received;
    acc
}

/// Each wake of thread `tid` as a window for the kernel's account ([`sleeplab_account`]):
/// from the previous wake (or the origin) to this one, due at the deadline it stands
/// for last (the one its timer fired for). Wakes for no deadline are left out. A timer
/// that never `blocks` (a busy wait) has windows whose time is spin.
pub fn windows(schedule: &Schedule, wakes: &[Wake], tid: i32, blocks: bool) -> Vec<Window> {
    let mut covered = 0u64;
    let mut prev = schedule.t0_ns;
    let mut out = Vec::with_capacity(wakes.len());
    for w in wakes {
        if covered >= schedule.ticks {
            break;
        }
        if w.expirations == 0 {
            continue;
        }
        covered = covered.saturating_add(w.expirations);
        out.push(
            Window::until(tid, prev, schedule.deadline(covered), w.wake_ns).never_blocking(!blocks),
        );
        prev = w.wake_ns;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sleeplab::wait::periodic::{passed_deadlines, reconcile};

    #[test]
    fn a_wake_is_due_at_the_deadline_its_timer_fired_for() {
        let schedule = Schedule {
            t0_ns: 1_000,
            period_ns: 100,
            ticks: 4,
        };
        let wakes = [
            Wake {
                wake_ns: 1_110,
                expirations: 1,
            },
            Wake {
                wake_ns: 1_305,
                expirations: 2,
            },
            Wake {
                wake_ns: 1_306,
                expirations: 0,
            },
            Wake {
                wake_ns: 1_402,
                expirations: 1,
            },
            Wake {
                wake_ns: 1_500,
                expirations: 1,
            },
        ];
        let w = windows(&schedule, &wakes, 7, true);
        let got: Vec<(u64, u64, u64)> = w
            .iter()
            .map(|w| (w.start_ns, w.deadline_ns, w.end_ns))
            .collect();
        assert_eq!(
            got,
            vec![
                (1_000, 1_100, 1_110),
                (1_110, 1_300, 1_305),
                (1_305, 1_400, 1_402)
            ]
        );
        assert!(w.iter().all(|w| w.tid == 7 && w.spin_ns == 0));
    }

    const MS: u64 = 1_000_000;

    fn sched(ticks: u64) -> Schedule {
        Schedule {
            t0_ns: 10 * MS,
            period_ns: MS,
            ticks,
        }
    }

    fn w(wake_ns: u64, expirations: u64) -> Wake {
        Wake {
            wake_ns,
            expirations,
        }
    }

    #[test]
    fn perfect_ticks() {
        // Five wakes 20 µs after each deadline.
        let s = sched(5);
        let wakes: Vec<Wake> = (1..=5).map(|k| w(10 * MS + k * MS + 20_000, 1)).collect();
        let a = account(&s, &wakes);
        assert_eq!(
            (a.expected, a.received, a.missed, a.early, a.extra),
            (5, 5, 0, 0, 0)
        );
        assert_eq!(a.undelivered, 0);
        assert_eq!(a.ticks.len(), 5);
        assert!(a.ticks.iter().all(|t| t.lateness_ns == 20_000 && !t.missed));
        // First interval 1.02 ms (from t0): 2 %; the others exactly 1 ms: 0 %.
        assert_eq!(a.error_pct.len(), 5);
        assert!((a.error_pct[0] - 2.0).abs() < 1e-9);
        assert!(a.error_pct[1..].iter().all(|&e| e == 0.0));
        assert_eq!(a.end_lateness_ns, 20_000);
        assert_eq!(a.drift_ns, 20_000);
    }

    #[test]
    fn stall_spanning_several_periods_counts_every_late_tick() {
        // Deadlines at t0 + 1..=8 ms. Tick 1 on time (+10 µs); then a stall: the next
        // wake comes at t0 + 5.5 ms and reports 4 expirations (deadlines 2, 3, 4, 5);
        // then ticks 6, 7, 8 at +30 µs.
        let t0 = 10 * MS;
        let s = sched(8);
        let wakes = vec![
            w(t0 + MS + 10_000, 1),
            w(t0 + 5 * MS + MS / 2, 4),
            w(t0 + 6 * MS + 30_000, 1),
            w(t0 + 7 * MS + 30_000, 1),
            w(t0 + 8 * MS + 30_000, 1),
        ];
        let a = account(&s, &wakes);
        assert_eq!(a.expected, 8);
        assert_eq!(a.received, 5);
        assert_eq!(a.missed, 3);
        assert_eq!(a.received + a.missed, a.expected);
        assert_eq!((a.early, a.extra, a.undelivered), (0, 0, 0));
        let late: Vec<i64> = a.ticks.iter().map(|t| t.lateness_ns).collect();
        assert_eq!(
            late,
            vec![
                10_000, 3_500_000, 2_500_000, 1_500_000, 500_000, 30_000, 30_000, 30_000
            ]
        );
        let missed: Vec<bool> = a.ticks.iter().map(|t| t.missed).collect();
        assert_eq!(
            missed,
            vec![false, true, true, true, false, false, false, false]
        );
        let by_wake: Vec<u32> = a.ticks.iter().map(|t| t.wake).collect();
        assert_eq!(by_wake, vec![0, 1, 1, 1, 1, 2, 3, 4]);
        // Intervals: 1.01 ms, 4.49 ms, 0.53 ms, 1 ms, 1 ms.
        let expect = [1.0, 349.0, 47.0, 0.0, 0.0];
        for (got, want) in a.error_pct.iter().zip(expect) {
            assert!((got - want).abs() < 1e-9, "{:?}", a.error_pct);
        }
        assert_eq!(a.end_lateness_ns, 30_000);
        // Five wakes counted as ticks: the program thinks it is at t0 + 5 ms; it is at
        // t0 + 8.03 ms.
        assert_eq!(a.drift_ns, 3_030_000);
    }

    #[test]
    fn loop_deadlines_from_times_match_kernel_counts() {
        // A loop that woke at t0 + 5.5 ms after covering 1 deadline has passed 4 more.
        let t0 = 10 * MS;
        assert_eq!(passed_deadlines(t0, MS, 1, t0 + 5 * MS + MS / 2), 4);
        // Woke on its deadline exactly: that one.
        assert_eq!(passed_deadlines(t0, MS, 1, t0 + 2 * MS), 1);
        // Woke early (before deadline 3): still stands for deadline 3 (and is early).
        assert_eq!(passed_deadlines(t0, MS, 2, t0 + 2 * MS + 999_999), 1);
        // Clock before t0 and a zero period do not panic.
        assert_eq!(passed_deadlines(t0, 0, 0, 0), 1);
        assert_eq!(passed_deadlines(u64::MAX, MS, u64::MAX - 1, 0), 1);
    }

    #[test]
    fn early_extra_and_undelivered_are_counted() {
        let t0 = 10 * MS;
        let s = sched(4);
        let wakes = vec![
            w(t0 + MS - 5_000, 1), // 5 µs early
            w(t0 + MS + 1_000, 0), // stands for nothing
            w(t0 + 2 * MS + 1_000, 1),
        ];
        let a = account(&s, &wakes);
        assert_eq!(a.early, 1);
        assert_eq!(a.extra, 1);
        assert_eq!(a.received, 2);
        assert_eq!(a.undelivered, 2);
        assert_eq!(a.missed, 2);
        assert_eq!(a.ticks[0].lateness_ns, -5_000);
        assert_eq!(a.ticks.len(), 2);
    }

    #[test]
    fn wakes_beyond_the_schedule_are_ignored() {
        // The last read covers deadlines 2..=4 of a 3-tick run: 2 and 3 are delivered,
        // deadline 4 is not part of the run; later wakes are ignored.
        let t0 = 10 * MS;
        let s = sched(3);
        let wakes = vec![
            w(t0 + MS + 1_000, 1),
            w(t0 + 4 * MS + 2_000, 3),
            w(t0 + 5 * MS + 2_000, 1),
        ];
        let a = account(&s, &wakes);
        assert_eq!((a.expected, a.received, a.missed), (3, 2, 1));
        let late: Vec<i64> = a.ticks.iter().map(|t| t.lateness_ns).collect();
        assert_eq!(late, vec![1_000, 2_002_000, 1_002_000]);
        // Both deadlines 2 and 3 were swallowed by a wake whose own deadline is 4.
        assert!(a.ticks[1].missed && a.ticks[2].missed);
        assert_eq!(a.end_lateness_ns, 2_000);
    }

    #[test]
    fn reconcile_moves_a_claim_to_the_wake_that_delivered_it() {
        // setitimer: the signal for deadline 1 is dequeued late, the thread is preempted
        // until t0 + 2.1 ms (after deadline 2) and counts 2 deadlines; deadline 2's own
        // signal then arrives at once (t0 + 2.12 ms). Uncorrected, that wake claims
        // deadline 3 and is early; reconciled, the first wake stands for deadline 1 and
        // the second for deadline 2.
        let t0 = 10 * MS;
        let mut wakes = vec![
            w(t0 + 2_100_000, passed_deadlines(t0, MS, 0, t0 + 2_100_000)),
            w(t0 + 2_120_000, 1),
            w(t0 + 3_010_000, 1),
        ];
        assert_eq!(wakes[0].expirations, 2);
        assert_eq!(account(&sched(3), &wakes).early, 1);
        reconcile(t0, MS, &mut wakes);
        let n: Vec<u64> = wakes.iter().map(|w| w.expirations).collect();
        assert_eq!(n, vec![1, 1, 1]);
        let a = account(&sched(3), &wakes);
        assert_eq!((a.early, a.received, a.missed), (0, 3, 0));
        assert_eq!(a.ticks[0].lateness_ns, 1_100_000);

        // SIGEV_THREAD: callbacks read each other's overrun (hints 1+2, 1+2, 1) although
        // the wakes only allow deadlines 1, 2, 5: the reconciled claims are 1, 2, 5.
        let mut wakes = vec![
            w(t0 + 1_900_000, 3),
            w(t0 + 2_050_000, 3),
            w(t0 + 5_020_000, 1),
        ];
        reconcile(t0, MS, &mut wakes);
        let n: Vec<u64> = wakes.iter().map(|w| w.expirations).collect();
        assert_eq!(n, vec![1, 1, 3]);
        let a = account(&sched(5), &wakes);
        assert_eq!((a.early, a.received, a.missed, a.undelivered), (0, 3, 2, 0));
    }

    #[test]
    fn reconcile_keeps_exact_counts_and_real_early_wakes() {
        let t0 = 10 * MS;
        // Exact kernel counts (a stall of 3 periods) stay as they are.
        let exact = vec![
            w(t0 + MS + 10_000, 1),
            w(t0 + 4 * MS + 20_000, 3),
            w(t0 + 5 * MS + 10_000, 1),
        ];
        let mut same = exact.clone();
        reconcile(t0, MS, &mut same);
        assert_eq!(same, exact);
        // Three wakes before deadline 3 cannot all be matched: one stays early.
        let mut too_many = vec![
            w(t0 + MS + 1_000, 1),
            w(t0 + 2 * MS + 1_000, 1),
            w(t0 + 2 * MS + 5_000, 1),
        ];
        reconcile(t0, MS, &mut too_many);
        assert_eq!(account(&sched(3), &too_many).early, 1);
        // Empty input is fine.
        reconcile(t0, MS, &mut []);
    }

    #[test]
    fn an_interrupted_run_is_accounted_up_to_the_deadlines_it_reached() {
        // Deadline 1 on time, then a wake that swallowed deadline 2; 10 were planned.
        let t0 = 10 * MS;
        let wakes = vec![w(t0 + MS + 1_000, 1), w(t0 + 3 * MS + 1_000, 2)];
        let whole = Schedule::of_run(t0, MS, 10, false, &wakes);
        assert_eq!(whole, sched(10));
        let a = account(&whole, &wakes);
        assert_eq!((a.received, a.missed, a.undelivered), (2, 8, 7));
        // Stopped after them: charged with the three deadlines it reached.
        let cut = Schedule::of_run(t0, MS, 10, true, &wakes);
        assert_eq!(cut, sched(3));
        let a = account(&cut, &wakes);
        assert_eq!(
            (a.expected, a.received, a.missed, a.undelivered),
            (3, 2, 1, 0)
        );
        // Never more than planned, and nothing reached is nothing to account.
        assert_eq!(Schedule::of_run(t0, MS, 2, true, &wakes).ticks, 2);
        assert_eq!(Schedule::of_run(t0, MS, 5, true, &[]).ticks, 0);
    }

    #[test]
    fn relative_loop_drift() {
        // A relative 1 ms sleep that overshoots 100 µs each time: wakes at
        // t0 + k·1.1 ms. After 9 wakes (9.9 ms) the loop has passed deadline 9 once
        // more than it woke: each wake is accounted with passed_deadlines.
        let t0 = 10 * MS;
        let s = sched(9);
        let mut wakes = Vec::new();
        let mut covered = 0;
        let mut k = 1;
        while covered < 9 {
            let now = t0 + k * 1_100_000;
            let n = passed_deadlines(t0, MS, covered, now);
            wakes.push(w(now, n));
            covered += n;
            k += 1;
        }
        let a = account(&s, &wakes);
        // Wakes at 1.1, 2.2, …, 8.8 ms cover deadlines 1..=8 one each; the wake at 9.9 ms
        // covers deadline 9. Then 11 ms would cover 10 and 11 (beyond the run).
        assert_eq!(wakes.len(), 9);
        assert_eq!(a.received, 9);
        assert_eq!(a.missed, 0);
        assert_eq!(a.drift_ns, 900_000);
        assert_eq!(a.end_lateness_ns, 900_000);
        // Two more wakes: the 10th at 11 ms swallows deadlines 10 and 11.
        let s = sched(11);
        let mut wakes2 = wakes.clone();
        wakes2.push(w(t0 + 11 * MS, passed_deadlines(t0, MS, 9, t0 + 11 * MS)));
        let a = account(&s, &wakes2);
        assert_eq!((a.received, a.missed), (10, 1));
        assert_eq!(a.drift_ns, MS as i64);
        assert_eq!(a.end_lateness_ns, 0);
    }
}
