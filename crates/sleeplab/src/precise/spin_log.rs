//! A log of the gaps in this thread's spins, kept only while installed: the spin loops
//! of the library (a busy-wait, the final spin of every precise strategy) note each
//! time between two consecutive clock reads at or above a threshold, `(from, to)` in
//! CLOCK_MONOTONIC ns. A tracer lays them beside the kernel's events: a gap in which the
//! guest kernel recorded nothing on the spinner's behalf is time its vCPU did not run.
//!
//! Not installed, a spin pays one thread-local read per call (not per clock read).
//! Installed, the log's buffer is allocated and every page of it written when it is
//! installed or taken, never inside a spin: a page's first write faults, and a fault
//! between two clock reads would read as a gap the guest recorded nothing in.

use std::cell::{Cell, RefCell};

/// One gap between two consecutive clock reads of a spin, CLOCK_MONOTONIC ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpinGap {
    /// The read before the gap.
    pub from_ns: u64,
    /// The read after it.
    pub to_ns: u64,
}

/// What a thread's log holds when taken.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpinGaps {
    /// The gaps, in the order they happened.
    pub gaps: Vec<SpinGap>,
    /// Gaps not kept because the log was full (the spins' account is then incomplete).
    pub dropped: u64,
}

thread_local! {
    /// The threshold while installed, `u64::MAX` when not.
    static THRESHOLD: Cell<u64> = const { Cell::new(u64::MAX) };
    static LOG: RefCell<(SpinGaps, usize)> = RefCell::new((SpinGaps::default(), 0));
}

/// An empty log of `capacity` gaps, its whole buffer written once (so that no note
/// inside a spin takes a page's first-write fault).
fn touched(capacity: usize) -> SpinGaps {
    let mut gaps = Vec::with_capacity(capacity);
    let spare = gaps.spare_capacity_mut();
    for slot in spare.iter_mut() {
        slot.write(SpinGap {
            from_ns: 0,
            to_ns: 0,
        });
    }
    std::hint::black_box(spare);
    SpinGaps { gaps, dropped: 0 }
}

/// Starts logging this thread's spin gaps of at least `threshold_ns` (at least 1 ns),
/// keeping up to `capacity` of them until [`take`] (allocated and touched here, not
/// in a spin).
pub fn install(threshold_ns: u64, capacity: usize) {
    LOG.with_borrow_mut(|(log, cap)| {
        *log = touched(capacity);
        *cap = capacity;
    });
    THRESHOLD.set(threshold_ns.max(1));
}

/// Whether this thread's spin gaps are being logged.
pub fn installed() -> bool {
    THRESHOLD.get() != u64::MAX
}

/// The gaps logged since [`install`] or the last take; logging goes on (into a fresh
/// buffer, touched here).
pub fn take() -> SpinGaps {
    LOG.with_borrow_mut(|(log, cap)| std::mem::replace(log, touched(*cap)))
}

/// Stops logging; the gaps not taken yet.
pub fn uninstall() -> SpinGaps {
    THRESHOLD.set(u64::MAX);
    LOG.with_borrow_mut(|(log, cap)| {
        *cap = 0;
        std::mem::take(log)
    })
}

/// The threshold a spin compares its gaps with (`u64::MAX`: not logging). Read once
/// per spin.
#[inline]
pub(crate) fn threshold() -> u64 {
    THRESHOLD.get()
}

/// Notes a gap (a spin calls it only for a gap at or above [`threshold`]).
#[cold]
pub(crate) fn note(from_ns: u64, to_ns: u64) {
    if !installed() {
        return;
    }
    LOG.with_borrow_mut(|(log, cap)| {
        if log.gaps.len() < *cap {
            log.gaps.push(SpinGap { from_ns, to_ns });
        } else {
            log.dropped += 1;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_kept_only_while_installed_and_up_to_the_capacity() {
        assert!(!installed());
        note(1, 2);
        assert_eq!(take(), SpinGaps::default());
        install(0, 2);
        assert!(installed() && threshold() == 1);
        note(10, 20);
        note(30, 45);
        note(50, 60);
        let t = take();
        assert_eq!(
            t.gaps,
            vec![
                SpinGap {
                    from_ns: 10,
                    to_ns: 20
                },
                SpinGap {
                    from_ns: 30,
                    to_ns: 45
                }
            ]
        );
        assert_eq!(t.dropped, 1);
        note(70, 80);
        assert_eq!(uninstall().gaps.len(), 1);
        assert!(!installed() && threshold() == u64::MAX);
    }

    /// This thread's minor page faults so far.
    fn minor_faults() -> i64 {
        // SAFETY: rusage is plain integers, all-zero valid.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `u` is a valid rusage for the call to fill.
        assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) }, 0);
        u.ru_minflt
    }

    /// Noting gaps into an installed (or freshly taken) log takes no page fault: its
    /// 1 MiB buffer was touched when installed, not at its first note in a spin (a
    /// fault there would read as a gap the guest recorded nothing in). Untouched, the
    /// notes would fault once per page (256 pages).
    #[test]
    fn notes_take_no_page_fault() {
        const CAP: usize = (1 << 20) / std::mem::size_of::<SpinGap>();
        for fresh in [false, true] {
            install(1, CAP);
            if fresh {
                let _ = take();
            }
            let before = minor_faults();
            for i in 0..CAP as u64 {
                note(i, i + 1);
            }
            let faults = minor_faults() - before;
            let log = uninstall();
            assert_eq!(log.gaps.len(), CAP);
            assert!(
                faults < 16,
                "{faults} page faults noting into a touched log"
            );
        }
    }

    /// A real spin of the library logs its gaps when installed: each one at least the
    /// threshold, in order, inside the spin.
    #[test]
    fn a_spin_logs_its_gaps() {
        install(1, 1 << 16);
        let from = crate::clock::monotonic_ns();
        let to = crate::wait::oneshot::spin_until(from + 5_000_000);
        let log = uninstall();
        assert!(!log.gaps.is_empty(), "a 1 ns threshold sees every read");
        for w in log.gaps.windows(2) {
            assert!(w[0].to_ns <= w[1].from_ns);
        }
        assert!(
            log.gaps
                .iter()
                .all(|g| g.from_ns >= from && g.to_ns <= to && g.to_ns > g.from_ns)
        );
    }
}
