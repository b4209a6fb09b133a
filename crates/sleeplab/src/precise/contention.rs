//! The contended regimes: a spin that keeps losing its CPU is shortened, and a sleeper
//! whose spinning keeps making its wakeups milliseconds late stops spinning.
//!
//! # The mechanism
//!
//! On a machine with a busy thread per CPU, Linux's EEVDF scheduler lets a thread that
//! wakes from a sleep run soon (it has not used its share, so it is eligible and its
//! virtual deadline is early): a *sleeping* waiter wakes within tens of µs. A *spinning*
//! waiter uses up that advantage: once it has run for about its slice, or at a tick
//! where the busy thread is the better pick, it is preempted, and the busy thread runs a
//! whole slice (milliseconds) before the spinner gets its CPU back. A precise sleeper
//! that spins long under load therefore turns a wakeup that was tens of µs late into a
//! frame that is milliseconds late, and spends CPU doing so.
//!
//! # The rule
//!
//! The strategy sees this in its own clock reads: a gap of at least
//! [`SleepReport::PREEMPT_GAP_NS`](super::SleepReport::PREEMPT_GAP_NS) between two
//! consecutive reads of the spin ("preempted while spinning"), and how long the spin
//! had run since the native wakeup when the gap began. [`Contention`] keeps the last
//! [`EVENTS`](Contention::EVENTS) such events. While at least
//! [`MIN_EVENTS`](Contention::MIN_EVENTS) of them happened within the last
//! [`HOLD_WAITS`](Contention::HOLD_WAITS) waits (one host hiccup on an idle machine is
//! not contention), the spin is *contended*: the margin is capped at half the shortest
//! run-before-preemption among those events, but at least
//! [`MIN_SPIN_NS`](Contention::MIN_SPIN_NS). So the waiter sleeps closer to the deadline
//! (keeping the woken sleeper's preference) and spins only as long as spins recently
//! survived. Without preemptions while spinning (an idle machine, a recorded trace
//! replayed without a preemption model) nothing changes.
//!
//! # Starved wakeups
//!
//! EEVDF runs a woken thread at once only while it is owed CPU time (positive *lag*):
//! time spent runnable but not running earns lag, time running spends it. A plain sleeper
//! runs a few µs per wait and stays owed. A sleeper that spins spends lag on every wait,
//! and on an oversubscribed machine (more busy threads than CPUs) it earns too little
//! back: once its lag is gone its next wakeup waits behind the busy threads for a slice,
//! milliseconds. Measured on the project's 2-core VM with five busy threads, 60 Hz, with
//! a 100 µs scheduler slice (`scripts/eevdf-lag.c`, docs/BENCHMARKS.md): a plain
//! absolute sleep was p99 30.5 µs late; the same sleep followed by 100 µs of CPU, or
//! ending in a 200 µs spin, p99 3.8 ms. No margin helps there: the precise wait is the
//! plain sleep.
//!
//! So a native wakeup that ends [`STARVED_NS`](Contention::STARVED_NS) or more after the
//! wait's target, in a wait that planned to spin, having spent at least half of that
//! lateness on a run queue (`/proc/thread-self/schedstat`: the scheduler kept it waiting,
//! not a timer tick or the host), is a *starved* wakeup. When
//! [`STARVED_EVENTS`](Contention::STARVED_EVENTS) of them fall within
//! [`STARVED_SPAN`](Contention::STARVED_SPAN) waits, the sleeper is *starved*: its margin is 0 (a plain absolute sleep to the
//! target, still never early) for the next [`STARVED_HOLD`](Contention::STARVED_HOLD)
//! waits, after which it tries spinning again.

/// Recent preemptions of the spin phase, and the spin ceiling they call for.
#[derive(Debug, Clone, Default)]
pub struct Contention {
    /// Waits observed so far.
    waits: u64,
    /// The last events: (wait number, ns the spin had run when it lost the CPU).
    events: [Option<(u64, u64)>; Contention::EVENTS],
    /// Where the next event goes in `events`.
    next: usize,
    /// The wait numbers of the last starved wakeups.
    starved: [Option<u64>; Contention::STARVED_EVENTS],
    /// Where the next starved wakeup goes in `starved`.
    next_starved: usize,
    /// The first wait number after the starved regime (0: never entered).
    starved_until: u64,
}

impl Contention {
    /// Events remembered.
    pub const EVENTS: usize = 4;
    /// Events within the hold that make the spin contended.
    pub const MIN_EVENTS: usize = 2;
    /// How many waits an event counts for (512: the estimator's window, ≈ 8.5 s at
    /// 60 Hz).
    pub const HOLD_WAITS: u64 = 512;
    /// The shortest margin the contended regime imposes, ns (20 µs: a loaded machine's
    /// typical wakeup, so most frames still end in a short spin).
    pub const MIN_SPIN_NS: u64 = 20_000;

    /// A native wakeup this late after the wait's target, in a wait that planned to spin,
    /// is starved, ns (1 ms: beyond any wakeup a runnable thread gets without waiting for
    /// a slice; the 2-core VM's loaded wakeups were p99 85–470 µs when owed CPU).
    pub const STARVED_NS: u64 = 1_000_000;
    /// Starved wakeups within [`STARVED_SPAN`](Self::STARVED_SPAN) waits that make the
    /// sleeper starved.
    pub const STARVED_EVENTS: usize = 4;
    /// The span, in waits (128: 3 % of the waits; an occasional starved wakeup on a
    /// machine that is only busy now and then does not stop the spin).
    pub const STARVED_SPAN: u64 = 128;
    /// How many waits the starved regime lasts (512, ≈ 8.5 s at 60 Hz).
    pub const STARVED_HOLD: u64 = 512;

    /// Notes one wait: `preempted_after_ns` is how long its spin had run when it lost
    /// the CPU, or `None` when it did not; `starved` whether its native wakeup was
    /// starved (see the module docs).
    pub fn observe(&mut self, preempted_after_ns: Option<u64>, starved: bool) {
        if let Some(run) = preempted_after_ns {
            self.events[self.next] = Some((self.waits, run));
            self.next = (self.next + 1) % Self::EVENTS;
        }
        if starved {
            self.starved[self.next_starved] = Some(self.waits);
            self.next_starved = (self.next_starved + 1) % Self::STARVED_EVENTS;
            let within = self
                .starved
                .iter()
                .flatten()
                .filter(|&&at| self.waits - at < Self::STARVED_SPAN)
                .count();
            if within >= Self::STARVED_EVENTS {
                self.starved_until = self.waits + 1 + Self::STARVED_HOLD;
                self.starved = Default::default();
            }
        }
        self.waits = self.waits.saturating_add(1);
    }

    /// True while the sleeper is starved: its margin is 0 (see the module docs).
    pub fn is_starved(&self) -> bool {
        self.waits < self.starved_until
    }

    /// The events still within the hold: (wait number, run before preemption).
    fn recent(&self) -> impl Iterator<Item = u64> + '_ {
        self.events
            .iter()
            .flatten()
            .filter(|(at, _)| self.waits.saturating_sub(*at) <= Self::HOLD_WAITS)
            .map(|&(_, run)| run)
    }

    /// True while the spin is contended (see the module docs).
    pub fn is_contended(&self) -> bool {
        self.recent().count() >= Self::MIN_EVENTS
    }

    /// The largest margin: 0 while starved; while contended, half the shortest recent run
    /// before a preemption, at least [`MIN_SPIN_NS`](Self::MIN_SPIN_NS); `None` when
    /// neither.
    pub fn spin_ceiling_ns(&self) -> Option<u64> {
        if self.is_starved() {
            return Some(0);
        }
        if !self.is_contended() {
            return None;
        }
        self.recent()
            .min()
            .map(|run| (run / 2).max(Self::MIN_SPIN_NS))
    }

    /// Forgets every event.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_event_is_not_contention_two_are_and_they_expire() {
        let mut c = Contention::default();
        c.observe(Some(600_000), false);
        assert!(!c.is_contended());
        assert_eq!(c.spin_ceiling_ns(), None);
        for _ in 0..10 {
            c.observe(None, false);
        }
        c.observe(Some(400_000), false);
        assert!(c.is_contended());
        assert_eq!(c.spin_ceiling_ns(), Some(200_000), "half the shortest run");
        // The first event leaves the hold first: contention ends with it.
        for _ in 0..Contention::HOLD_WAITS - 12 {
            c.observe(None, false);
        }
        assert!(c.is_contended());
        c.observe(None, false);
        assert!(!c.is_contended());
        c.reset();
        assert_eq!(c.recent().count(), 0);
    }

    #[test]
    fn four_starved_wakeups_within_the_span_stop_the_spin_for_the_hold() {
        let mut c = Contention::default();
        // Three starved wakeups, then the fourth just outside the span of the first.
        for _ in 0..3 {
            c.observe(None, true);
        }
        for _ in 0..Contention::STARVED_SPAN - 3 {
            c.observe(None, false);
        }
        c.observe(None, true);
        assert!(
            !c.is_starved(),
            "the first is {} waits old",
            Contention::STARVED_SPAN
        );
        assert_eq!(c.spin_ceiling_ns(), None);
        // Waits 129 and 130 push out waits 0 and 1, and wait 2 is 128 waits old at 130.
        c.observe(None, true);
        c.observe(None, true);
        assert!(!c.is_starved());
        // Wait 131: four within the span (128 to 131): starved.
        c.observe(None, true);
        assert!(c.is_starved());
        assert_eq!(c.spin_ceiling_ns(), Some(0));
        for _ in 0..Contention::STARVED_HOLD - 1 {
            c.observe(None, false);
        }
        assert!(c.is_starved());
        c.observe(None, false);
        assert!(!c.is_starved(), "the hold is over");
        // The events that started it were forgotten: one more does not restart it.
        c.observe(None, true);
        assert!(!c.is_starved());
    }

    #[test]
    fn the_ceiling_has_a_floor_and_only_the_last_events_count() {
        let mut c = Contention::default();
        c.observe(Some(1_000), false);
        c.observe(Some(5_000), false);
        assert_eq!(c.spin_ceiling_ns(), Some(Contention::MIN_SPIN_NS));
        for _ in 0..Contention::EVENTS {
            c.observe(Some(800_000), false);
        }
        assert_eq!(
            c.spin_ceiling_ns(),
            Some(400_000),
            "older events overwritten"
        );
    }
}
