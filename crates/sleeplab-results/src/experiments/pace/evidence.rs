//! Why a frame was late: per-frame evidence taken around each wait (involuntary context
//! switches, time spent runnable on a run queue, the spin phase's longest gap between
//! clock reads, whether the native sleep itself woke after the deadline), aggregated per
//! contender and load level.
//!
//! The snapshots are taken outside the measured wait (right before and right after
//! `sleep_until`); their own CPU time is measured and taken out of the contender's CPU.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab::clock::thread_cpu_ns;
use sleeplab::precise::SleepReport;
use sleeplab::wait::ThreadUsage;

/// A frame later than this is "late" for the evidence, ns (100 µs: above an idle VM's
/// ordinary wakeup, far below a scheduler slice).
pub const LATE_FRAME_NS: u64 = 100_000;

/// The worst late frames kept per contender and load level.
pub const LATE_FRAMES_KEPT: usize = 16;

/// What happened during one late frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LateFrame {
    /// 0-based frame number of the contender at this load level, in measurement order.
    pub frame: u64,
    /// How late it woke, ns.
    pub lateness_ns: u64,
    /// Involuntary context switches of the measuring thread during the wait.
    pub involuntary_csw: u64,
    /// Time the thread spent runnable but waiting for a CPU during the wait
    /// (`/proc/thread-self/schedstat`), ns; absent where the kernel does not report it.
    pub runqueue_wait_ns: Option<u64>,
    /// The spin phase's longest gap between consecutive clock reads, ns.
    pub max_spin_gap_ns: u64,
    /// How far the last native sleep overslept its own target, ns (absent: no native
    /// phase).
    pub native_oversleep_ns: Option<u64>,
    /// The native phase itself ended after the deadline.
    pub woken_late: bool,
    /// The wait began at or after its deadline (an earlier frame overran the schedule).
    #[serde(default)]
    pub started_late: bool,
    /// The margin the strategy planned to spin, ns.
    pub margin_ns: u64,
}

impl LateFrame {
    /// The spin phase lost its CPU (a gap of at least
    /// [`SleepReport::PREEMPT_GAP_NS`]).
    pub fn preempted_while_spinning(&self) -> bool {
        self.max_spin_gap_ns >= SleepReport::PREEMPT_GAP_NS
    }

    /// The thread waited on a run queue for at least half its lateness: the scheduler,
    /// not the timer or the host, kept it from running. `None` without schedstat.
    pub fn waited_on_runqueue(&self) -> Option<bool> {
        self.runqueue_wait_ns
            .map(|w| w.saturating_mul(2) >= self.lateness_ns)
    }
}

/// Why the frames of one contender at one load level were late (counts of frames).
///
/// Late frames are those more than [`late_threshold_ns`](Self::late_threshold_ns) late;
/// each is *started late* (the wait began at or after its deadline: an earlier frame
/// overran the schedule), else *preempted while spinning* (its spin phase had a gap
/// between clock reads of at least 100 µs), else *woken late* (its native sleep ended
/// after the deadline), else *other*: `late_frames = late_started_late +
/// late_preempted_while_spinning + late_woken_late + late_other`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Evidence {
    /// Frames observed.
    pub frames: u64,
    /// The lateness above which a frame counts as late, ns.
    pub late_threshold_ns: u64,
    /// Frames more than the threshold late.
    pub late_frames: u64,
    /// Late frames whose wait began at or after the deadline.
    #[serde(default)]
    pub late_started_late: u64,
    /// Late frames (not started late) whose spin phase lost its CPU.
    pub late_preempted_while_spinning: u64,
    /// Late frames (neither of the above) whose native sleep woke after the
    /// deadline.
    pub late_woken_late: u64,
    /// Late frames with neither.
    pub late_other: u64,
    /// Late frames with at least one involuntary context switch during the wait.
    pub late_involuntary_switched: u64,
    /// Late frames that waited on a run queue for at least half their lateness (absent
    /// where the kernel does not report run-queue time).
    pub late_runqueue_wait: Option<u64>,
    /// All frames (late or not) whose spin phase lost its CPU.
    pub preempted_while_spinning: u64,
    /// All frames whose native sleep woke after the deadline.
    pub woken_late: u64,
    /// All frames with at least one involuntary context switch during the wait.
    pub involuntary_switched: u64,
    /// The longest spin gap of any frame, ns.
    pub max_spin_gap_ns: u64,
    /// The worst late frames (at most 16), in frame order.
    pub worst: Vec<LateFrame>,
}

impl Evidence {
    /// Empty evidence with the default threshold.
    pub fn new() -> Self {
        Self {
            late_threshold_ns: LATE_FRAME_NS,
            ..Self::default()
        }
    }

    /// True when no frame was observed (a result written before the evidence existed).
    pub fn is_empty(&self) -> bool {
        self.frames == 0
    }

    /// Adds one frame.
    pub fn record(&mut self, frame: LateFrame) {
        self.frames += 1;
        let preempted = frame.preempted_while_spinning();
        self.preempted_while_spinning += u64::from(preempted);
        self.woken_late += u64::from(frame.woken_late);
        self.involuntary_switched += u64::from(frame.involuntary_csw > 0);
        self.max_spin_gap_ns = self.max_spin_gap_ns.max(frame.max_spin_gap_ns);
        if frame.lateness_ns <= self.late_threshold_ns {
            return;
        }
        self.late_frames += 1;
        if frame.started_late {
            self.late_started_late += 1;
        } else if preempted {
            self.late_preempted_while_spinning += 1;
        } else if frame.woken_late {
            self.late_woken_late += 1;
        } else {
            self.late_other += 1;
        }
        self.late_involuntary_switched += u64::from(frame.involuntary_csw > 0);
        if let Some(waited) = frame.waited_on_runqueue() {
            *self.late_runqueue_wait.get_or_insert(0) += u64::from(waited);
        }
        self.keep_worst(frame);
    }

    fn keep_worst(&mut self, frame: LateFrame) {
        if self.worst.len() == LATE_FRAMES_KEPT {
            let (i, least) = self
                .worst
                .iter()
                .enumerate()
                .min_by_key(|(_, f)| f.lateness_ns)
                .map(|(i, f)| (i, f.lateness_ns))
                .unwrap_or((0, 0));
            if frame.lateness_ns <= least {
                return;
            }
            self.worst.remove(i);
        }
        // Frames arrive in order, so pushing keeps frame order.
        self.worst.push(frame);
    }
}

/// Reads the measuring thread's context switches and run-queue time around a wait.
pub struct Probe {
    /// CPU time spent taking snapshots, ns (taken out of the contender's CPU).
    pub cost_ns: u64,
}

/// The counters at one instant.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot {
    involuntary_csw: u64,
    runqueue_ns: Option<u64>,
}

impl Probe {
    /// A probe for the calling thread (the measuring thread: build it there).
    pub fn for_this_thread() -> Self {
        Self { cost_ns: 0 }
    }

    /// The calling thread's counters now.
    pub fn snapshot(&mut self) -> Snapshot {
        let usage = ThreadUsage::now();
        let runqueue_ns = sleeplab::system::run_queue_ns();
        self.cost_ns += thread_cpu_ns().saturating_sub(usage.cpu_ns);
        Snapshot {
            involuntary_csw: usage.involuntary_csw,
            runqueue_ns,
        }
    }

    /// The evidence of the frame `frame` waited between `before` and `after`.
    pub fn frame(frame: u64, before: Snapshot, after: Snapshot, r: &SleepReport) -> LateFrame {
        LateFrame {
            frame,
            lateness_ns: r.lateness_ns,
            involuntary_csw: after.involuntary_csw.saturating_sub(before.involuntary_csw),
            runqueue_wait_ns: before
                .runqueue_ns
                .zip(after.runqueue_ns)
                .map(|(b, a)| a.saturating_sub(b)),
            max_spin_gap_ns: r.max_spin_gap_ns,
            native_oversleep_ns: r.native_oversleep_ns,
            woken_late: r.woken_late(),
            started_late: r.start_ns >= r.deadline_ns,
            margin_ns: r.margin_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(frame: u64, lateness_ns: u64, gap: u64, woken_late: bool, csw: u64) -> LateFrame {
        LateFrame {
            frame,
            lateness_ns,
            involuntary_csw: csw,
            runqueue_wait_ns: Some(lateness_ns / 3),
            max_spin_gap_ns: gap,
            native_oversleep_ns: Some(0),
            woken_late,
            started_late: false,
            margin_ns: 0,
        }
    }

    #[test]
    fn counts_add_up_and_causes_are_exclusive() {
        let mut e = Evidence::new();
        e.record(frame(0, 50, 30, false, 0)); // on time enough
        e.record(frame(1, 3_000_000, 2_900_000, false, 1)); // preempted while spinning
        e.record(frame(2, 400_000, 40, true, 0)); // woken late
        e.record(frame(3, 200_000, 40, false, 0)); // other
        e.record(frame(4, 90_000, 150_000, false, 1)); // preempted, not late
        e.record(frame(5, 90_000, 0, true, 0)); // woken late, not late
        let mut overrun = frame(6, 5_000_000, 0, false, 0);
        overrun.started_late = true;
        e.record(overrun);
        assert_eq!(e.frames, 7);
        assert_eq!(e.late_frames, 4);
        assert_eq!(
            e.late_started_late
                + e.late_preempted_while_spinning
                + e.late_woken_late
                + e.late_other,
            e.late_frames
        );
        assert_eq!(
            (
                e.late_started_late,
                e.late_preempted_while_spinning,
                e.late_woken_late,
                e.late_other
            ),
            (1, 1, 1, 1)
        );
        assert_eq!(e.preempted_while_spinning, 2);
        assert_eq!(e.woken_late, 2);
        assert_eq!(e.involuntary_switched, 2);
        assert_eq!(e.late_involuntary_switched, 1);
        // A third of the lateness on a run queue is less than half.
        assert_eq!(e.late_runqueue_wait, Some(0));
        assert_eq!(e.max_spin_gap_ns, 2_900_000);
        let kept: Vec<u64> = e.worst.iter().map(|f| f.frame).collect();
        assert_eq!(kept, [1, 2, 3, 6]);
    }

    #[test]
    fn only_the_worst_late_frames_are_kept_in_frame_order() {
        let mut e = Evidence::new();
        for k in 0..100u64 {
            // Lateness rises and falls: the 16 worst are frames 42..58.
            let late = 200_000 + 1_000 * (50 - (k as i64 - 50).abs()) as u64;
            e.record(frame(k, late, 0, true, 0));
        }
        assert_eq!(e.late_frames, 100);
        assert_eq!(e.worst.len(), LATE_FRAMES_KEPT);
        let kept: Vec<u64> = e.worst.iter().map(|f| f.frame).collect();
        assert!(kept.windows(2).all(|w| w[0] < w[1]), "{kept:?}");
        let least_kept = e.worst.iter().map(|f| f.lateness_ns).min().unwrap();
        let dropped_max = (0..100u64)
            .filter(|k| !kept.contains(k))
            .map(|k| 200_000 + 1_000 * (50 - (k as i64 - 50).abs()) as u64)
            .max()
            .unwrap();
        assert!(least_kept >= dropped_max);
    }

    #[test]
    fn the_measuring_thread_reads_its_own_run_queue_time() {
        let mut p = Probe::for_this_thread();
        let s = p.snapshot();
        assert_eq!(
            s.runqueue_ns.is_some(),
            sleeplab::system::run_queue_ns().is_some()
        );
    }
}
