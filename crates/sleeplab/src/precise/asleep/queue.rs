//! The timer's state shared with the sleeps: the deadlines in order, each sleep's slot
//! (its waker, whether it fired), the doorbell a registration rings, and the counts.
//! No clock is read here.

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
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

/// A deadline in the queue: earliest first, then in registration order.
#[derive(Debug)]
struct Entry {
    deadline_ns: u64,
    seq: u64,
    slot: Arc<Slot>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.deadline_ns, self.seq) == (other.deadline_ns, other.seq)
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    /// Reversed, so the max-heap pops the earliest deadline.
    fn cmp(&self, other: &Self) -> CmpOrdering {
        (other.deadline_ns, other.seq).cmp(&(self.deadline_ns, self.seq))
    }
}

/// The deadlines not yet fired, earliest first; the timer thread's and the reactor
/// timer's alike.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    /// Sleeps dropped before they fired that may still be in the heap.
    cancelled: usize,
}

impl Queue {
    /// Queues a sleep to `deadline_ns`.
    pub(crate) fn push(&mut self, deadline_ns: u64, slot: Arc<Slot>) {
        // Dropped sleeps leave their entries until their deadline comes; when they are
        // most of a large heap, it is rebuilt without them.
        if self.cancelled > 1024 && self.cancelled > self.heap.len() / 2 {
            self.heap.retain(|e| !e.slot.is_cancelled());
            self.cancelled = 0;
        }
        self.seq += 1;
        self.heap.push(Entry {
            deadline_ns,
            seq: self.seq,
            slot,
        });
    }

    /// Fires every sleep due at `now_ns` (cancelled ones are dropped), counting each in
    /// `counts`; their wakers go to `due.wakers` and the earliest deadline left to
    /// `due.next_ns`.
    pub(crate) fn take_due(&mut self, now_ns: u64, due: &mut Due, counts: &Counts) {
        while self.next_ns().is_some_and(|next| next <= now_ns) {
            let e = self.heap.pop().expect("peeked");
            counts.note_fired(now_ns - e.deadline_ns);
            if let Some(w) = e.slot.fire() {
                due.wakers.push(w);
            }
        }
        due.next_ns = self.next_ns();
    }

    /// The earliest deadline queued (cancelled sleeps at the front are dropped).
    pub(crate) fn next_ns(&mut self) -> Option<u64> {
        while self.heap.peek().is_some_and(|e| e.slot.is_cancelled()) {
            self.heap.pop();
            self.cancelled = self.cancelled.saturating_sub(1);
        }
        self.heap.peek().map(|e| e.deadline_ns)
    }

    /// A registered sleep was dropped before it fired ([`Slot::cancel`] first).
    pub(crate) fn note_cancelled(&mut self) {
        self.cancelled += 1;
    }

    /// Sleeps queued and not yet fired (cancelled ones until their deadline comes).
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
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
