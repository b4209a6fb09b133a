//! The timer's state shared with the sleeps: the deadlines in order, each sleep's slot
//! (its waker, whether it fired), the doorbell a registration rings, and the counts.
//! No clock is read here.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;

/// One sleep's meeting point with the timer thread.
#[derive(Debug, Default)]
pub(crate) struct Slot {
    waker: Mutex<Option<Waker>>,
    fired: AtomicBool,
    cancelled: AtomicBool,
}

impl Slot {
    /// Whether the timer fired it; otherwise keeps `waker` to be woken when it does.
    /// The check and the store happen under the slot's lock, which [`fire`](Self::fire)
    /// takes after marking the slot, so a fire is never missed.
    pub(crate) fn ready_or_keep(&self, waker: &Waker) -> bool {
        if self.fired.load(Ordering::Acquire) {
            return true;
        }
        let mut kept = lock(&self.waker);
        if self.fired.load(Ordering::Acquire) {
            return true;
        }
        match kept.as_mut() {
            Some(w) if w.will_wake(waker) => {}
            _ => *kept = Some(waker.clone()),
        }
        false
    }

    /// Marks it fired; the waker to wake, if a poll left one.
    fn fire(&self) -> Option<Waker> {
        self.fired.store(true, Ordering::Release);
        lock(&self.waker).take()
    }

    /// The sleep was dropped before it fired: the timer forgets it when it comes, and
    /// the waker (with the task it keeps alive) is let go now, not at the deadline.
    pub(crate) fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        drop(lock(&self.waker).take());
    }

    /// Whether the timer fired it.
    pub(crate) fn is_fired(&self) -> bool {
        self.fired.load(Ordering::Acquire)
    }

    fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }
}

/// The deadlines not yet fired, earliest first (then in registration order); the timer
/// thread's and the reactor timer's alike.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    /// (deadline, registration number) → the sleep's slot.
    map: BTreeMap<(u64, u64), Arc<Slot>>,
    seq: u64,
    /// Sleeps dropped before they fired that may still be in the map.
    cancelled: usize,
}

impl Queue {
    /// Queues a sleep to `deadline_ns`.
    pub(crate) fn push(&mut self, deadline_ns: u64, slot: Arc<Slot>) {
        // Dropped sleeps leave their entries until their deadline comes; when they are
        // most of a large queue, it is rebuilt without them.
        if self.cancelled > 1024 && self.cancelled > self.map.len() / 2 {
            self.map.retain(|_, s| !s.is_cancelled());
            self.cancelled = 0;
        }
        self.seq += 1;
        self.map.insert((deadline_ns, self.seq), slot);
    }

    /// Fires every sleep due at `now_ns` (cancelled ones are dropped), counting each in
    /// `counts`; their wakers go to `due.wakers` and the earliest deadline left to
    /// `due.next_ns`.
    pub(crate) fn take_due(&mut self, now_ns: u64, due: &mut Due, counts: &Counts) {
        while self.next_ns().is_some_and(|next| next <= now_ns) {
            let ((deadline_ns, _), slot) = self.map.pop_first().expect("a next deadline");
            counts.note_fired(now_ns - deadline_ns);
            if let Some(w) = slot.fire() {
                due.wakers.push(w);
            }
        }
        due.next_ns = self.next_ns();
    }

    /// The earliest deadline queued (cancelled sleeps at the front are dropped).
    pub(crate) fn next_ns(&mut self) -> Option<u64> {
        while let Some(first) = self.map.first_entry() {
            if !first.get().is_cancelled() {
                return Some(first.key().0);
            }
            first.remove();
            self.cancelled = self.cancelled.saturating_sub(1);
        }
        None
    }

    /// The earliest deadline queued after `after_ns` (cancelled sleeps passed over); only
    /// the reactor timer, which arms its second timerfd for it, asks.
    #[cfg(feature = "tokio")]
    pub(crate) fn next_after_ns(&self, after_ns: u64) -> Option<u64> {
        let from = (after_ns.checked_add(1)?, 0);
        self.map
            .range(from..)
            .find(|(_, slot)| !slot.is_cancelled())
            .map(|(&(deadline_ns, _), _)| deadline_ns)
    }

    /// A registered sleep was dropped before it fired ([`Slot::cancel`] first).
    pub(crate) fn note_cancelled(&mut self) {
        self.cancelled += 1;
    }

    /// Sleeps queued and not yet fired (cancelled ones until their deadline comes).
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

/// Sleeps fired, and the sum and maximum of their lateness as the timer saw it (its
/// clock read when it fired them − their deadline), ns.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    pub(crate) fired: AtomicU64,
    pub(crate) late_sum_ns: AtomicU64,
    pub(crate) late_max_ns: AtomicU64,
}

impl Counts {
    fn note_fired(&self, late_ns: u64) {
        self.fired.fetch_add(1, Ordering::Relaxed);
        self.late_sum_ns.fetch_add(late_ns, Ordering::Relaxed);
        self.late_max_ns.fetch_max(late_ns, Ordering::Relaxed);
    }

    /// The counts with `pending` sleeps queued and `cpu_ns` spent.
    pub(crate) fn stats(&self, pending: usize, cpu_ns: u64) -> super::TimerStats {
        let fired = self.fired.load(Ordering::Relaxed);
        super::TimerStats {
            fired,
            mean_late_ns: self.late_sum_ns.load(Ordering::Relaxed) / fired.max(1),
            max_late_ns: self.late_max_ns.load(Ordering::Relaxed),
            pending,
            cpu_ns,
        }
    }
}

/// Nothing to sleep to: the timer parks.
pub(crate) const PARKED: u64 = u64::MAX;

/// Everything the timer thread and the sleeps share.
#[derive(Debug)]
pub(crate) struct Shared {
    queue: Mutex<Queue>,
    /// Rung (incremented, then futex-woken) when a registration comes before the
    /// deadline the timer is sleeping to, or at shutdown.
    pub(crate) bell: AtomicU32,
    /// The deadline the timer thread sleeps to ([`PARKED`] when none), set under the
    /// queue's lock.
    target: AtomicU64,
    /// Set when the last handle goes: the timer thread ends.
    pub(crate) shutdown: AtomicBool,
    /// What it fired.
    pub(crate) counts: Counts,
    /// The timer thread's id (0 until it starts).
    pub(crate) tid: AtomicI32,
}

impl Default for Shared {
    fn default() -> Self {
        Self {
            queue: Mutex::default(),
            bell: AtomicU32::new(0),
            target: AtomicU64::new(PARKED),
            shutdown: AtomicBool::new(false),
            counts: Counts::default(),
            tid: AtomicI32::new(0),
        }
    }
}

/// What one pass over the queue found.
#[derive(Debug, Default)]
pub(crate) struct Due {
    /// The wakers of the sleeps whose deadline had come, to wake outside the lock.
    pub(crate) wakers: Vec<Waker>,
    /// The earliest deadline still ahead, if any.
    pub(crate) next_ns: Option<u64>,
}

impl Shared {
    /// Queues a sleep to `deadline_ns`; true when it comes before the deadline the
    /// timer sleeps to (the caller rings the bell).
    pub(crate) fn register(&self, deadline_ns: u64, slot: Arc<Slot>) -> bool {
        let mut q = lock(&self.queue);
        q.push(deadline_ns, slot);
        // Read under the lock, which `take_due` holds while it sets the target.
        deadline_ns < self.target.load(Ordering::Acquire)
    }

    /// Takes every sleep due at `now_ns` (cancelled ones are dropped) and sets the
    /// timer's next target to the earliest deadline left.
    pub(crate) fn take_due(&self, now_ns: u64, due: &mut Due) {
        let mut q = lock(&self.queue);
        q.take_due(now_ns, due, &self.counts);
        self.target
            .store(due.next_ns.unwrap_or(PARKED), Ordering::Release);
    }

    /// A registered sleep was dropped before it fired ([`Slot::cancel`] first).
    pub(crate) fn note_cancelled(&self) {
        lock(&self.queue).note_cancelled();
    }

    /// Sleeps queued and not yet fired (cancelled ones until the timer reaches them).
    pub(crate) fn pending(&self) -> usize {
        lock(&self.queue).len()
    }
}

/// Locks `m`, ignoring poisoning (no code here panics while holding a lock).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
