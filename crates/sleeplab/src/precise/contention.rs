//! The contended regime: a spin that keeps losing its CPU is shortened.
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

/// Recent preemptions of the spin phase, and the spin ceiling they call for.
#[derive(Debug, Clone, Default)]
pub struct Contention {
    /// Waits observed so far.
    waits: u64,
    /// The last events: (wait number, ns the spin had run when it lost the CPU).
    events: [Option<(u64, u64)>; Contention::EVENTS],
    /// Where the next event goes in `events`.
    next: usize,
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

    /// Notes one wait: `preempted_after_ns` is how long its spin had run when it lost
    /// the CPU, or `None` when it did not.
    pub fn observe(&mut self, preempted_after_ns: Option<u64>) {
        if let Some(run) = preempted_after_ns {
            self.events[self.next] = Some((self.waits, run));
            self.next = (self.next + 1) % Self::EVENTS;
        }
        self.waits = self.waits.saturating_add(1);
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

    /// The largest margin while contended: half the shortest recent run before a
    /// preemption, at least [`MIN_SPIN_NS`](Self::MIN_SPIN_NS); `None` when not
    /// contended.
    pub fn spin_ceiling_ns(&self) -> Option<u64> {
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
        c.observe(Some(600_000));
        assert!(!c.is_contended());
        assert_eq!(c.spin_ceiling_ns(), None);
        for _ in 0..10 {
            c.observe(None);
        }
        c.observe(Some(400_000));
        assert!(c.is_contended());
        assert_eq!(c.spin_ceiling_ns(), Some(200_000), "half the shortest run");
        // The first event leaves the hold first: contention ends with it.
        for _ in 0..Contention::HOLD_WAITS - 12 {
            c.observe(None);
        }
        assert!(c.is_contended());
        c.observe(None);
        assert!(!c.is_contended());
        c.reset();
        assert_eq!(c.recent().count(), 0);
    }

    #[test]
    fn the_ceiling_has_a_floor_and_only_the_last_events_count() {
        let mut c = Contention::default();
        c.observe(Some(1_000));
        c.observe(Some(5_000));
        assert_eq!(c.spin_ceiling_ns(), Some(Contention::MIN_SPIN_NS));
        for _ in 0..Contention::EVENTS {
            c.observe(Some(800_000));
        }
        assert_eq!(
            c.spin_ceiling_ns(),
            Some(400_000),
            "older events overwritten"
        );
    }
}
