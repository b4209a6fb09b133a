//! The pure part of a probe: [`GapRecorder`], and the spin that feeds it from an
//! [`Env`].

use super::{Noise, NoiseConfig};
use crate::clock::Env;

/// The pure part of a probe: fed one clock read at a time, it keeps the gaps. Reads come
/// in *segments* of back-to-back reads (one for `probe`; one per spin after a sleep for
/// `probe_after_sleeps`): the time between segments is not probed, nor is time the
/// probe spends on itself ([`skip_to`](Self::skip_to)). Allocates only in
/// [`new`](Self::new).
#[derive(Debug, Clone)]
pub struct GapRecorder {
    threshold_ns: u64,
    seg_start: u64,
    prev: u64,
    probed_before: u64,
    skipped_ns: u64,
    reads: u64,
    gaps: u64,
    lost_ns: u64,
    max_gap_ns: u64,
    queued_ns: Option<u64>,
    kept_ns: Vec<u64>,
    kept_at_ns: Vec<u64>,
    kept_queued_ns: Vec<u64>,
    max_kept: usize,
}

impl GapRecorder {
    /// A recorder for `config` whose first clock read (of its first segment) is
    /// `first_ns`.
    pub fn new(config: &NoiseConfig, first_ns: u64) -> Self {
        Self {
            threshold_ns: config.threshold_ns.max(1),
            seg_start: first_ns,
            prev: first_ns,
            probed_before: 0,
            skipped_ns: 0,
            reads: 1,
            gaps: 0,
            lost_ns: 0,
            max_gap_ns: 0,
            queued_ns: None,
            kept_ns: Vec::with_capacity(config.max_kept),
            kept_at_ns: Vec::with_capacity(config.max_kept),
            kept_queued_ns: Vec::with_capacity(config.max_kept),
            max_kept: config.max_kept,
        }
    }

    /// Notes the next clock read (a read earlier than the last counts as no time);
    /// returns whether the time since the last read was a gap.
    #[inline]
    pub fn read(&mut self, now_ns: u64) -> bool {
        let gap = now_ns.saturating_sub(self.prev);
        let at = self.prev - self.seg_start;
        self.prev = self.prev.max(now_ns);
        self.reads += 1;
        if gap < self.threshold_ns {
            return false;
        }
        self.gaps += 1;
        self.lost_ns = self.lost_ns.saturating_add(gap);
        self.max_gap_ns = self.max_gap_ns.max(gap);
        if self.kept_ns.len() < self.max_kept {
            self.kept_ns.push(gap);
            self.kept_at_ns.push(at);
        }
        true
    }

    /// How much of the gap just read the thread spent on its kernel's run queue, ns
    /// (call it after every gap, or never: a probe whose environment does not say;
    /// `queued(0)` before any gap says the environment reports it).
    pub fn queued(&mut self, ns: u64) {
        self.queued_ns = Some(self.queued_ns.unwrap_or(0).saturating_add(ns));
        if self.kept_queued_ns.len() < self.kept_ns.len() {
            self.kept_queued_ns.push(ns);
        }
    }

    /// The probe's own work from the last read to the read `now_ns` (reading the run
    /// queue after a gap): neither a gap nor probed time.
    pub fn skip_to(&mut self, now_ns: u64) {
        self.skipped_ns += now_ns.saturating_sub(self.prev);
        self.prev = self.prev.max(now_ns);
        self.reads += 1;
    }

    /// Starts a new segment at the read `now_ns`: the time since the last read is not a
    /// gap (the thread slept on purpose).
    pub fn resume(&mut self, now_ns: u64) {
        self.probed_before += self.prev - self.seg_start;
        self.seg_start = now_ns.max(self.prev);
        self.prev = self.seg_start;
        self.reads += 1;
    }

    /// The last read so far.
    pub fn last_ns(&self) -> u64 {
        self.prev
    }

    /// The probe's result.
    pub fn finish(self, cpu: Option<usize>) -> Noise {
        let queued_per_gap =
            self.queued_ns.is_some() && self.kept_queued_ns.len() == self.kept_ns.len();
        Noise {
            cpu,
            wall_ns: (self.probed_before + (self.prev - self.seg_start))
                .saturating_sub(self.skipped_ns),
            threshold_ns: self.threshold_ns,
            reads: self.reads,
            gaps: self.gaps,
            lost_ns: self.lost_ns,
            max_gap_ns: self.max_gap_ns,
            run_queue_ns: self.queued_ns,
            kept_ns: self.kept_ns,
            kept_at_ns: self.kept_at_ns,
            kept_queued_ns: if queued_per_gap {
                self.kept_queued_ns
            } else {
                Vec::new()
            },
        }
    }
}

/// Spins on `env` from its next clock read `start` until `until(start)`, into `r` (a new
/// recorder when `None`): a pause between reads when `pause` says so, and after every
/// gap the run queue read (when `env` reports it) and skipped.
pub(super) fn spin_segment<E: Env>(
    env: &mut E,
    r: &mut Option<GapRecorder>,
    config: &NoiseConfig,
    until: impl FnOnce(u64) -> u64,
    pause: bool,
) {
    let mut queue = env.run_queue_ns();
    let start = env.now();
    let end_ns = until(start);
    let r = match r {
        Some(r) => {
            r.resume(start);
            r
        }
        None => r.insert(GapRecorder::new(config, start)),
    };
    if queue.is_some() {
        r.queued(0);
    }
    while r.last_ns() < end_ns {
        if pause {
            env.spin_pause();
        }
        if r.read(env.now())
            && let Some(before) = queue
        {
            let after = env.run_queue_ns().unwrap_or(before);
            r.queued(after.saturating_sub(before));
            queue = Some(after);
            r.skip_to(env.now());
        }
    }
}
