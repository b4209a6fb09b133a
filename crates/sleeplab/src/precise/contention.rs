//! The contended regimes: a spin that keeps losing its CPU is shortened, one that keeps
//! losing it although shortened is stopped, and a sleeper whose spinning keeps making its
//! wakeups milliseconds late stops spinning.
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
//! had run since the native wakeup when the gap began. Such losses count only once they
//! come often enough to move the quantile the margin covers: the last
//! [`LOSSES`](Contention::LOSSES) (6, one wait in a hundred) within the last
//! [`HOLD_WAITS`](Contention::HOLD_WAITS) waits, or right after a regime ended, when a
//! loss answers the probe (rarer losses sit in the 1 % of waits the p99 leaves out:
//! one host hiccup on an idle machine is not contention). [`Contention`] keeps the last
//! [`EVENTS`](Contention::EVENTS) losses that counted. While at least
//! [`MIN_EVENTS`](Contention::MIN_EVENTS) of them happened within the hold, the spin is
//! *contended*: the margin is capped at half the shortest run-before-preemption among
//! those events, but at least [`MIN_SPIN_NS`](Contention::MIN_SPIN_NS). So the waiter
//! sleeps closer to the deadline (keeping the woken sleeper's preference) and spins only
//! as long as spins recently survived. Without preemptions while spinning (an idle
//! machine, a recorded trace replayed without a preemption model) nothing changes.
//!
//! # Who took the CPU: the scheduler or the host
//!
//! A gap is the *scheduler's* ([`LossCause::Scheduler`]) when the thread's run-queue time
//! (`/proc/thread-self/schedstat`) grew by at least half of it during the wait, or when
//! there are no readings; otherwise it is the *host's* ([`LossCause::Host`]): on a
//! virtual machine the vCPU did not run (the host ran something else), on bare metal the
//! hardware stopped the CPU (SMIs, firmware). The host's counts unless the trade-off says
//! `HostPolicy::Ignore`, and only when the gap is also
//! longer than the wait's margin: it cost the wait more than sleeping through the margin
//! would have, since the margin covers the native wakeup's p99. Why the host's count: a
//! halted vCPU is a sleeping thread to the host's scheduler and is woken with priority,
//! while a spinning one is a CPU hog that a busy host may deschedule for milliseconds.
//! On the project's 2-core KVM guest, one measurement with a busy host had a
//! 300 µs-margin spin p99 1465 µs late where a plain sleep was p99 112 µs; on a quiet
//! host the gaps off the run queue of spins after sleeps were p99 39–83 µs, at most
//! 67–210 µs (`noise_probe`, docs/SIMULATE.md), mostly below the margin they interrupt,
//! so a quiet host keeps the spin.
//!
//! A host also takes a vCPU at random: on a noisy 2-core KVM guest whose halted vCPUs
//! woke p50 124 µs and p99 497 µs late, a spinning thread lost 3.3–3.9 % of each CPU in
//! gaps of p99 about 100 µs, and now and then one of a millisecond or more. When two
//! such gaps longer than the margin within a hold made the spin contended (as they did
//! before losses had to come in one wait of a hundred), its ceiling, half a short run
//! (58–115 µs), fell below the host's typical wakeup: for the next 512 waits most frames
//! were late by the rest of their wakeup, and the sleeper's p50 became the plain sleep's.
//!
//! # Stopped: shortening did not help
//!
//! A shorter spin helps where losses come once a spin has run a while (a slice, a
//! host's fair share). Where they come at any time (a host that deschedules running
//! vCPUs at random), a shorter spin only loses its CPU less often, and each loss still
//! costs milliseconds. So when [`MIN_EVENTS`](Contention::MIN_EVENTS) of the events
//! within the hold happened in waits that already had the contended ceiling, the spin is
//! *stopped*: margin 0 (a plain absolute sleep to the target) for
//! [`STOPPED_HOLD`](Contention::STOPPED_HOLD) waits, the events forgotten. Then it spins
//! again: a host that became quiet gets the spin (and its p99) back within a hold.
//!
//! # Relapses hold longer
//!
//! Each return to a full spin is a probe of whether the host (or the load) still
//! punishes it, and one that does costs a few late waits. So a regime (contended or
//! stopped) that comes back within [`HOLD_WAITS`](Contention::HOLD_WAITS) of its end
//! holds twice as long as the last time, up to
//! [`MAX_HOLD_FACTOR`](Contention::MAX_HOLD_FACTOR) times (≈ 34 s at 60 Hz): a host that
//! keeps punishing is probed about every four holds (two losses at full margin, and for a
//! stopped spin two shortened ones: ≈ 0.2 % of the waits, well below the 1 % a p99
//! allows); one that turned quiet gets the spin back within the hold in force.
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

/// Who took the CPU from a spin: what a gap of at least
/// [`PREEMPT_GAP_NS`](super::SleepReport::PREEMPT_GAP_NS) between two of its clock reads
/// was spent on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossCause {
    /// The thread's own kernel: at least half of the gap on its run queue (or no
    /// run-queue readings to tell).
    Scheduler,
    /// Not this machine's scheduler: on a virtual machine the host (the vCPU did not run),
    /// on bare metal the hardware (SMIs, firmware).
    Host,
}

/// One spin that lost its CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Event {
    /// The wait number.
    at: u64,
    /// How long the spin had run when it lost the CPU, ns.
    run: u64,
    /// Who took it.
    cause: LossCause,
    /// Whether the contended regime's ceiling was in force in that wait.
    backed_off: bool,
}

/// What the contended regimes make of the spin now (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Regime {
    /// Nothing limits the margin.
    Free,
    /// Spins keep losing their CPU: the margin is at most `ceiling_ns`.
    Contended {
        /// The largest margin, ns.
        ceiling_ns: u64,
        /// Of the recent losses, how many the host (or the hardware) took; the rest
        /// were the scheduler's.
        host_events: usize,
    },
    /// Spins kept losing their CPU although they were already shortened: no spin
    /// (margin 0) until the hold ends.
    Stopped {
        /// Who took the CPU from the spin that stopped it.
        by: LossCause,
    },
    /// Native wakeups were starved after spins: no spin (margin 0) until the hold ends.
    Starved,
}

/// Recent preemptions of the spin phase, and the spin ceiling they call for.
#[derive(Debug, Clone, Default)]
pub struct Contention {
    /// Waits observed so far.
    waits: u64,
    /// The last events.
    events: [Option<Event>; Contention::EVENTS],
    /// Where the next event goes in `events`.
    next: usize,
    /// The wait numbers of the last losses (counted or not).
    losses: [Option<u64>; Contention::LOSSES],
    /// Where the next loss goes in `losses`.
    next_loss: usize,
    /// The wait numbers of the last starved wakeups.
    starved: [Option<u64>; Contention::STARVED_EVENTS],
    /// Where the next starved wakeup goes in `starved`.
    next_starved: usize,
    /// The first wait number after the starved regime (0: never entered).
    starved_until: u64,
    /// The first wait number after the stopped regime (0: never entered).
    stopped_until: u64,
    /// Who took the CPU from the spin that last stopped it.
    stopped_by: Option<LossCause>,
    /// The holds' length in units of [`HOLD_WAITS`](Self::HOLD_WAITS) and
    /// [`STOPPED_HOLD`](Self::STOPPED_HOLD): 1, doubled at each relapse up to
    /// [`MAX_HOLD_FACTOR`](Self::MAX_HOLD_FACTOR) (0 in a fresh state: read as 1).
    hold_factor: u64,
    /// Whether the contended or stopped regime held after the last wait.
    in_regime: bool,
    /// The wait number at which it last ended.
    ended_at: Option<u64>,
}

impl Contention {
    /// Events remembered.
    pub const EVENTS: usize = 4;
    /// Events within the hold that make the spin contended, and events in waits already
    /// backed off that stop it.
    pub const MIN_EVENTS: usize = 2;
    /// How many waits an event counts for (512: the estimator's window, ≈ 8.5 s at
    /// 60 Hz).
    pub const HOLD_WAITS: u64 = 512;
    /// Losses within the hold (about 1 % of its waits: the rank of the estimator's p99
    /// in its window) before they count as contention, whoever took the CPU. Losses
    /// rarer than the quantile the margin covers cannot move that quantile, while
    /// shortening the spin for them makes every wait whose wakeup takes longer than the
    /// shortened margin late: a host takes a vCPU at random times too, and an idle
    /// guest's occasional task preempts a spin now and then.
    pub const LOSSES: usize = 6;
    /// The shortest margin the contended regime imposes, ns (20 µs: a loaded machine's
    /// typical wakeup, so most frames still end in a short spin).
    pub const MIN_SPIN_NS: u64 = 20_000;
    /// How many waits the stopped regime lasts (512, ≈ 8.5 s at 60 Hz), after which the
    /// sleeper spins again.
    pub const STOPPED_HOLD: u64 = 512;
    /// A regime that comes back within [`HOLD_WAITS`](Self::HOLD_WAITS) of its end (a
    /// relapse: whatever punished the spin still does) holds twice as long as the last
    /// time, up to this many times its hold (4: ≈ 34 s at 60 Hz); one that comes back
    /// later starts again at one hold.
    pub const MAX_HOLD_FACTOR: u64 = 4;

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

    /// Notes one wait: `lost` is how long its spin had run when it lost the CPU and who
    /// took it, or `None` when it did not; `starved` whether its native wakeup was
    /// starved (see the module docs).
    pub fn observe(&mut self, lost: Option<(u64, LossCause)>, starved: bool) {
        if lost.is_some() {
            self.losses[self.next_loss] = Some(self.waits);
            self.next_loss = (self.next_loss + 1) % Self::LOSSES;
        }
        let lost = lost.filter(|_| self.losses_count());
        if let Some((run, cause)) = lost {
            let backed_off = self.is_contended();
            self.events[self.next] = Some(Event {
                at: self.waits,
                run,
                cause,
                backed_off,
            });
            self.next = (self.next + 1) % Self::EVENTS;
            let punished_anyway = self.recent_events().filter(|e| e.backed_off).count();
            if backed_off && punished_anyway >= Self::MIN_EVENTS {
                self.stopped_until = self.waits + 1 + Self::STOPPED_HOLD * self.factor();
                self.stopped_by = Some(cause);
                self.events = Default::default();
            }
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
        let in_regime = self.is_contended() || self.is_stopped();
        if in_regime && !self.in_regime {
            let relapse = self
                .ended_at
                .is_some_and(|end| self.waits - end <= Self::HOLD_WAITS);
            self.hold_factor = if relapse {
                (self.factor() * 2).min(Self::MAX_HOLD_FACTOR)
            } else {
                1
            };
        }
        if self.in_regime && !in_regime {
            self.ended_at = Some(self.waits);
        }
        self.in_regime = in_regime;
    }

    /// The holds' length now, in units of one hold (see
    /// [`MAX_HOLD_FACTOR`](Self::MAX_HOLD_FACTOR)).
    pub fn hold_factor(&self) -> u64 {
        self.factor()
    }

    fn factor(&self) -> u64 {
        self.hold_factor.max(1)
    }

    /// True while the sleeper is starved: its margin is 0 (see the module docs).
    pub fn is_starved(&self) -> bool {
        self.waits < self.starved_until
    }

    /// True while the spin is stopped because shortened spins kept losing their CPU: its
    /// margin is 0 (see the module docs).
    pub fn is_stopped(&self) -> bool {
        self.waits < self.stopped_until
    }

    /// Whether losses come often enough to count: the last [`LOSSES`](Self::LOSSES)
    /// all within the hold, or a regime ended within a hold.
    fn losses_count(&self) -> bool {
        let hold = Self::HOLD_WAITS * self.factor();
        let often = self
            .losses
            .iter()
            .all(|at| at.is_some_and(|at| self.waits.saturating_sub(at) <= hold));
        // Right after a regime ended, a loss is the probe's answer: whatever punished the
        // spin still does.
        let probing = self
            .ended_at
            .is_some_and(|end| self.waits.saturating_sub(end) <= Self::HOLD_WAITS);
        often || probing
    }

    /// The events still within the hold.
    fn recent_events(&self) -> impl Iterator<Item = &Event> + '_ {
        self.events
            .iter()
            .flatten()
            .filter(|e| self.waits.saturating_sub(e.at) <= Self::HOLD_WAITS * self.factor())
    }

    /// The runs before preemption of the events still within the hold.
    fn recent(&self) -> impl Iterator<Item = u64> + '_ {
        self.recent_events().map(|e| e.run)
    }

    /// True while the spin is contended (see the module docs).
    pub fn is_contended(&self) -> bool {
        self.recent().count() >= Self::MIN_EVENTS
    }

    /// The largest margin: 0 while starved or stopped; while contended, half the
    /// shortest recent run before a preemption, at least
    /// [`MIN_SPIN_NS`](Self::MIN_SPIN_NS); `None` when none of these.
    pub fn spin_ceiling_ns(&self) -> Option<u64> {
        if self.is_starved() || self.is_stopped() {
            return Some(0);
        }
        if !self.is_contended() {
            return None;
        }
        self.recent()
            .min()
            .map(|run| (run / 2).max(Self::MIN_SPIN_NS))
    }

    /// The regime in force for the next wait.
    pub fn regime(&self) -> Regime {
        if self.is_starved() {
            return Regime::Starved;
        }
        if self.is_stopped() {
            return Regime::Stopped {
                by: self.stopped_by.unwrap_or(LossCause::Scheduler),
            };
        }
        match self.spin_ceiling_ns() {
            Some(ceiling_ns) => Regime::Contended {
                ceiling_ns,
                host_events: self
                    .recent_events()
                    .filter(|e| e.cause == LossCause::Host)
                    .count(),
            },
            None => Regime::Free,
        }
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
        losses_so_far(&mut c);
        c.observe(Some((600_000, LossCause::Scheduler)), false);
        assert!(!c.is_contended());
        assert_eq!(c.spin_ceiling_ns(), None);
        for _ in 0..10 {
            c.observe(None, false);
        }
        c.observe(Some((400_000, LossCause::Scheduler)), false);
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

    /// Losses that do not count yet (one short of [`LOSSES`](Contention::LOSSES)): the
    /// next one within the hold counts.
    fn losses_so_far(c: &mut Contention) {
        for _ in 0..Contention::LOSSES - 1 {
            c.observe(Some((900_000, LossCause::Host)), false);
            assert_eq!(c.regime(), Regime::Free);
        }
    }

    #[test]
    fn losses_count_only_when_they_come_in_one_wait_of_a_hundred() {
        let spaced = |gap: u64, losses: usize| {
            let mut c = Contention::default();
            for _ in 0..losses {
                c.observe(Some((400_000, LossCause::Host)), false);
                for _ in 0..gap {
                    c.observe(None, false);
                }
            }
            c
        };
        // Five in a hold are rarer than the p99 can see: nothing changes, however long
        // the runs they cut.
        assert_eq!(spaced(100, Contention::LOSSES - 1).regime(), Regime::Free);
        // Six and seven within a hold: the sixth counts, the seventh makes two events.
        let mut c = spaced(50, Contention::LOSSES);
        assert_eq!(c.regime(), Regime::Free);
        c.observe(Some((400_000, LossCause::Host)), false);
        assert!(c.is_contended(), "{:?}", c.regime());
        // Spread over more than a hold they never count: the oldest has left it.
        assert_eq!(spaced(110, 2 * Contention::LOSSES).regime(), Regime::Free);
        // The scheduler's alike.
        let mut c = Contention::default();
        for _ in 0..Contention::LOSSES {
            c.observe(Some((400_000, LossCause::Scheduler)), false);
        }
        assert!(!c.is_contended(), "the sixth is the first that counts");
        c.observe(Some((400_000, LossCause::Scheduler)), false);
        assert!(c.is_contended());
    }

    #[test]
    fn the_ceiling_has_a_floor() {
        let mut c = Contention::default();
        losses_so_far(&mut c);
        c.observe(Some((1_000, LossCause::Scheduler)), false);
        c.observe(Some((5_000, LossCause::Host)), false);
        assert_eq!(c.spin_ceiling_ns(), Some(Contention::MIN_SPIN_NS));
        assert_eq!(
            c.regime(),
            Regime::Contended {
                ceiling_ns: Contention::MIN_SPIN_NS,
                host_events: 1
            }
        );
    }

    #[test]
    fn losses_in_shortened_spins_stop_the_spin_for_the_hold() {
        let mut c = Contention::default();
        losses_so_far(&mut c);
        c.observe(Some((800_000, LossCause::Host)), false);
        c.observe(Some((600_000, LossCause::Host)), false);
        assert_eq!(c.spin_ceiling_ns(), Some(300_000));
        // One loss while shortened: still contended, at the shorter run's half.
        c.observe(Some((100_000, LossCause::Host)), false);
        assert_eq!(c.spin_ceiling_ns(), Some(50_000));
        assert!(!c.is_stopped());
        for _ in 0..10 {
            c.observe(None, false);
        }
        // A second: backing off did not help, no spin.
        c.observe(Some((30_000, LossCause::Host)), false);
        assert!(c.is_stopped());
        assert_eq!(c.spin_ceiling_ns(), Some(0));
        assert_eq!(
            c.regime(),
            Regime::Stopped {
                by: LossCause::Host
            }
        );
        for _ in 0..Contention::STOPPED_HOLD - 1 {
            c.observe(None, false);
        }
        assert!(c.is_stopped());
        c.observe(None, false);
        assert_eq!(
            c.regime(),
            Regime::Free,
            "the hold is over, the events forgotten"
        );
        // A loss in a wait that was not shortened never stops the spin.
        let mut c = Contention::default();
        for _ in 0..Contention::EVENTS * 4 {
            c.observe(Some((500_000, LossCause::Scheduler)), false);
            for _ in 0..Contention::HOLD_WAITS {
                c.observe(None, false);
            }
        }
        assert_eq!(c.regime(), Regime::Free);
    }

    #[test]
    fn a_relapse_doubles_the_hold_and_a_quiet_hold_resets_it() {
        let mut c = Contention::default();
        let enter = |c: &mut Contention| {
            c.observe(Some((400_000, LossCause::Host)), false);
            c.observe(Some((400_000, LossCause::Host)), false);
            assert!(c.is_contended());
        };
        // Waits until the regime ends, counted (the hold runs from the first of the two
        // losses, one wait before the second).
        let until_free = |c: &mut Contention| {
            let mut n = 0;
            while c.regime() != Regime::Free {
                c.observe(None, false);
                n += 1;
            }
            n
        };
        losses_so_far(&mut c);
        enter(&mut c);
        assert_eq!(c.hold_factor(), 1);
        assert_eq!(until_free(&mut c), Contention::HOLD_WAITS - 1);
        // Back within a hold of the end: twice as long, then four times, no more (the
        // host's losses count at once: each is the probe's answer).
        for factor in [2, 4, 4] {
            c.observe(None, false);
            enter(&mut c);
            assert_eq!(c.hold_factor(), factor);
            assert_eq!(until_free(&mut c), Contention::HOLD_WAITS * factor - 1);
        }
        // Back only after a quiet hold: one hold again, once the host's losses count.
        for _ in 0..=Contention::HOLD_WAITS {
            c.observe(None, false);
        }
        losses_so_far(&mut c);
        enter(&mut c);
        assert_eq!(c.hold_factor(), 1);
    }
}
