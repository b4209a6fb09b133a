//! What a traced run keeps per cell: a [`WakeLog`] of its wakes' windows, split into
//! components once the run is over, and what it reads around each wait ([`Before`]):
//! the voluntary context switches (the trace's independent witness of whether the wait
//! blocked) or, without the kernel's events, the run-queue time for the partial
//! account.

use super::analysis::account::{WakeAccount, Window, account};
use super::analysis::explanation::{Explanation, WakeRecord};
use super::analysis::fallback::partial_account;
use super::analysis::timeline::Timeline;
use sleeplab::system::run_queue_ns;
use sleeplab::wait::ThreadUsage;

/// What a traced run reads before each wait, for what it reads after: the voluntary
/// context switches (the trace's independent witness of whether the wait blocked), and,
/// without the kernel's events, the run-queue time for the partial account.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Before {
    voluntary_switches: Option<u64>,
    run_queue_ns: Option<u64>,
}

impl Before {
    /// The calling thread's voluntary context switches now.
    pub fn switches() -> Self {
        Self {
            voluntary_switches: Some(ThreadUsage::now().voluntary_csw),
            run_queue_ns: None,
        }
    }

    /// The calling thread's run-queue time now (`/proc/thread-self/schedstat`).
    pub fn run_queue() -> Self {
        Self {
            voluntary_switches: None,
            run_queue_ns: run_queue_ns(),
        }
    }
}

/// One cell's wakes as a traced run logs them.
#[derive(Debug, Clone, Default)]
pub struct WakeLog {
    windows: Vec<Window>,
    /// Per wake, its run-queue time from /proc (the partial account only; `None` where a
    /// read failed: that wake is then unexplained, never another wake's time).
    run_queue: Vec<Option<u64>>,
    lost: u64,
}

impl WakeLog {
    /// Logs a wake: its window, and `before` (what the recording read before it),
    /// read again now (on the waiting thread, after its clock read).
    #[inline]
    pub fn push(&mut self, w: Window, before: Before) {
        let after = before
            .run_queue_ns
            .and_then(|a| Some(run_queue_ns()?.saturating_sub(a)));
        self.run_queue.push(after);
        let w = match before.voluntary_switches {
            Some(a) => w.with_switches(ThreadUsage::now().voluntary_csw.saturating_sub(a)),
            None => w,
        };
        self.windows.push(w);
    }

    /// Counts events the kernel lost while this cell ran.
    pub fn add_lost(&mut self, n: u64) {
        self.lost += n;
    }

    /// Whether no wake was logged.
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    /// Every wake split: on `timeline` when the kernel was traced, else the partial
    /// account (run queue, then `slack_ns` where slack applies).
    pub fn accounts(&self, timeline: Option<&Timeline>, slack_ns: Option<u64>) -> Vec<WakeAccount> {
        match timeline {
            Some(tl) => self.windows.iter().map(|w| account(tl, w)).collect(),
            None => self
                .windows
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    let late = w.end_ns as i64 - w.deadline_ns as i64;
                    match self.run_queue.get(i).copied().flatten() {
                        Some(rq) => partial_account(late, rq, slack_ns),
                        // Its run queue unknown: nothing of it is told apart.
                        None => partial_account(late, 0, None),
                    }
                })
                .collect(),
        }
    }

    /// The cell's explanation ([`WakeLog::accounts`] summarised).
    pub fn explain(&self, timeline: Option<&Timeline>, slack_ns: Option<u64>) -> Explanation {
        Explanation::of(
            &self.accounts(timeline, slack_ns),
            self.lost,
            timeline.is_none(),
        )
    }

    /// The cell's explanation with its wakes more than `late_ns` late set apart.
    pub fn explain_late(
        &self,
        timeline: Option<&Timeline>,
        slack_ns: Option<u64>,
        late_ns: u64,
    ) -> Explanation {
        let accounts = self.accounts(timeline, slack_ns);
        Explanation::of(&accounts, self.lost, timeline.is_none()).with_late(&accounts, late_ns)
    }

    /// The explanation and every wake's record.
    pub fn explain_with_records(
        &self,
        timeline: Option<&Timeline>,
        slack_ns: Option<u64>,
    ) -> (Explanation, Vec<WakeRecord>) {
        let accounts = self.accounts(timeline, slack_ns);
        (
            Explanation::of(&accounts, self.lost, timeline.is_none()),
            self.windows
                .iter()
                .zip(&accounts)
                .map(|(w, a)| WakeRecord::of(w, a))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Component;

    #[test]
    fn without_the_kernel_the_log_is_the_partial_account() {
        let mut log = WakeLog::default();
        // A run-queue read before the wait (far ahead of any reading after: none added).
        let read = Before {
            voluntary_switches: None,
            run_queue_ns: Some(u64::MAX),
        };
        log.push(Window::relative(1, 1_000, 1_000, 2_080), read);
        log.add_lost(2);
        assert!(!log.is_empty());
        let x = log.explain(None, Some(50));
        assert!(x.partial);
        assert_eq!((x.wakes, x.lost_events), (1, 2));
        let s = x.component(Component::Slack).unwrap();
        assert_eq!(s.median_ns, 50.0);
        assert_eq!(x.component(Component::Unexplained).unwrap().median_ns, 30.0);
        let (x2, records) = log.explain_with_records(Some(&Timeline::default()), None);
        assert!(!x2.partial);
        assert_eq!(records.len(), 1);
        // No events at all for a wait that can block: nothing explains it.
        assert_eq!(records[0].components[&Component::Unexplained], 80);
        assert!(!records[0].traced);
    }

    /// A wake whose run-queue read failed is unexplained whole (no slack guessed into
    /// it), and the next wake keeps its own reading: the two never misalign.
    #[test]
    fn a_failed_run_queue_read_leaves_its_own_wake_unexplained() {
        let mut log = WakeLog::default();
        log.push(Window::relative(1, 1_000, 1_000, 2_080), Before::default());
        let read = Before {
            voluntary_switches: None,
            run_queue_ns: Some(u64::MAX),
        };
        log.push(Window::relative(1, 3_000, 1_000, 4_080), read);
        let a = log.accounts(None, Some(50));
        assert_eq!(a[0].parts.get(Component::Unexplained), 80);
        assert_eq!(a[0].parts.get(Component::Slack), 0);
        assert_eq!(a[1].parts.get(Component::Slack), 50);
    }
}
