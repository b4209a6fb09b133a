//! The timer thread's loop, generic over the environment it sleeps in: take what is
//! due, wake it, then one precise sleep to the earliest deadline left (or a park when
//! there is none). A registration of an earlier deadline rings the bell, which cuts the
//! native phase of that sleep short; the loop then starts over.

use super::queue::{Due, Shared};
use crate::clock::{Env, RealEnv};
use crate::precise::PreciseSleeper;
use crate::sys;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// An [`Env`] whose native sleeps the timer's bell can cut short.
pub(crate) trait TimerEnv: Env {
    /// Whether the bell rang since the last call (and forget that it did).
    fn take_ring(&mut self) -> bool;
    /// Waits, with no deadline, until the bell rings.
    fn park(&mut self);
}

/// What one turn of the loop did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Turn {
    /// The clock read that decided what was due, ns.
    pub(crate) now_ns: u64,
    /// Sleeps woken at it.
    pub(crate) woken: usize,
    /// The earliest deadline left, which it sleeps to next (`None`: it parks).
    pub(crate) next_ns: Option<u64>,
}

/// The timer: its sleeper over a [`TimerEnv`] and the shared queue.
pub(crate) struct Core<E: TimerEnv> {
    pub(crate) sleeper: PreciseSleeper<E>,
    shared: Arc<Shared>,
    due: Due,
}

impl<E: TimerEnv> Core<E> {
    pub(crate) fn new(sleeper: PreciseSleeper<E>, shared: Arc<Shared>) -> Self {
        Self {
            sleeper,
            shared,
            due: Due::default(),
        }
    }

    /// The first half of a turn: forgets rings that came before it looks at the queue
    /// (what they registered is in it now), wakes everything due, and says what is next.
    pub(crate) fn wake_due(&mut self) -> Turn {
        self.sleeper.env_mut().take_ring();
        let now_ns = self.sleeper.now_ns();
        self.shared.take_due(now_ns, &mut self.due);
        let woken = self.due.wakers.len();
        for w in self.due.wakers.drain(..) {
            w.wake();
        }
        Turn {
            now_ns,
            woken,
            next_ns: self.due.next_ns,
        }
    }

    /// The second half: one precise sleep to `next_ns`, its native phase cut short by a
    /// ring; or, with nothing queued, a park until a ring.
    pub(crate) fn wait_for(&mut self, next_ns: Option<u64>) {
        match next_ns {
            Some(deadline) => {
                let _ = self
                    .sleeper
                    .sleep_until_ns_or(deadline, |env| env.take_ring());
            }
            None => self.sleeper.env_mut().park(),
        }
    }

    /// Turns until the shared state says stop.
    pub(crate) fn run(mut self) {
        loop {
            let turn = self.wake_due();
            if self.shared.shutdown.load(Ordering::Acquire) {
                return;
            }
            self.wait_for(turn.next_ns);
        }
    }
}

/// The real machine: CLOCK_MONOTONIC, native sleeps on the bell's futex word with an
/// absolute deadline (a ring wakes them), the spin of [`RealEnv`].
pub(crate) struct BellEnv {
    shared: Arc<Shared>,
    /// The bell's value when last looked at.
    seen: u32,
}

impl BellEnv {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        let seen = shared.bell.load(Ordering::Acquire);
        Self { shared, seen }
    }
}

impl Env for BellEnv {
    #[inline]
    fn now(&mut self) -> u64 {
        RealEnv.now()
    }

    /// `FUTEX_WAIT_BITSET` on the bell while it holds the value last seen, to the
    /// absolute deadline: returns at once when it rang since.
    fn sleep_until(&mut self, deadline: u64) {
        sys::futex_wait_until(&self.shared.bell, self.seen, Some(deadline));
    }

    fn sleep_for(&mut self, ns: u64) {
        let deadline = self.now().saturating_add(ns);
        self.sleep_until(deadline);
    }

    #[inline]
    fn spin_pause(&mut self) {
        RealEnv.spin_pause();
    }

    fn yield_now(&mut self) {
        RealEnv.yield_now();
    }

    fn run_queue_ns(&mut self) -> Option<u64> {
        RealEnv.run_queue_ns()
    }
}

impl TimerEnv for BellEnv {
    fn take_ring(&mut self) -> bool {
        let now = self.shared.bell.load(Ordering::Acquire);
        let rang = now != self.seen;
        self.seen = now;
        rang
    }

    fn park(&mut self) {
        sys::futex_wait_until(&self.shared.bell, self.seen, None);
    }
}

/// Rings the bell: the timer thread's native sleep or park ends.
pub(crate) fn ring(shared: &Shared) {
    shared.bell.fetch_add(1, Ordering::AcqRel);
    sys::futex_wake_all(&shared.bell, true);
}
