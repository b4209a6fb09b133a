//! The margin estimator: how long before a deadline the native sleep must end so that
//! its wakeup is (almost always) not late.

use super::window::{MAX_WINDOW, Window, bucket_of};

/// Parameters of the [`MarginEstimator`]. Out-of-range values are clamped when the
/// estimator is built (see each field).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EstimatorConfig {
    /// The estimate before any data, ns (default 200 µs). Clamped to `cap_ns`.
    pub prior_ns: u64,
    /// Largest oversleep that is learned and largest margin, ns (default 500 µs).
    /// Larger samples are counted as stalls. At least 1.
    pub cap_ns: u64,
    /// Number of recent waits in the quantile window (default 256; 1..=4096).
    pub window: usize,
    /// The quantile of a full window used as the baseline (default 0.99; 0.5..=1.0).
    pub quantile: f64,
    /// Waits for the excess over the baseline to halve (default 32; at least 1).
    pub half_life: u32,
    /// Added to the estimate to form the margin, ns (default 10 µs).
    pub headroom_ns: u64,
}

impl Default for EstimatorConfig {
    fn default() -> Self {
        Self {
            prior_ns: 200_000,
            cap_ns: 500_000,
            window: 256,
            quantile: 0.99,
            half_life: 32,
            headroom_ns: 10_000,
        }
    }
}

impl EstimatorConfig {
    /// The same configuration with every field brought into its documented range.
    pub fn normalized(self) -> Self {
        let cap_ns = self.cap_ns.max(1);
        let quantile = if self.quantile.is_nan() {
            0.99
        } else {
            self.quantile.clamp(0.5, 1.0)
        };
        Self {
            prior_ns: self.prior_ns.min(cap_ns),
            cap_ns,
            window: self.window.clamp(1, MAX_WINDOW),
            quantile,
            half_life: self.half_life.max(1),
            headroom_ns: self.headroom_ns,
        }
    }
}

/// What [`MarginEstimator::observe`] did with a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observation {
    /// The sample was within the cap and was learned.
    Learned,
    /// The sample exceeded the cap: counted as a stall, not learned.
    Stall,
}

/// Learns the native-phase margin online from observed oversleeps. A pure, deterministic
/// state machine: no clock, no globals.
///
/// # Design
///
/// The input is the *oversleep* of each native phase: wake time − target of the absolute
/// native sleep. The output is the margin: the native phase targets `deadline − margin`
/// and the remaining `margin − oversleep` is spun. A miss (oversleep > margin) makes the
/// wait late; a margin too large burns CPU. The estimate is a robust high quantile with
/// fast attack and slow release:
///
/// 1. **Window quantile (the baseline).** The last [`window`](EstimatorConfig::window)
///    waits (default 256) are kept in a log-linear histogram (8 sub-buckets per octave,
///    ≤ 12.5 % wide, reported by upper edge). The baseline is their
///    [`quantile`](EstimatorConfig::quantile) (default p99), taken as the `k`-th largest
///    sample with `k = ⌈(1 − quantile) · window⌉` (3 for the defaults). While the window
///    holds fewer than `k` samples the prior stands in. Fixing `k` (rather than taking
///    the p99 of however many samples there are, which is the maximum below 100) keeps
///    one early spike from setting the baseline for a whole window. A high quantile,
///    unlike mean + k·σ, is not dragged around by one huge sample, and it is a
///    statement about *most* wakeups (the mean of a right-skewed wake-latency
///    distribution sits below half of them).
/// 2. **Instant rise.** A sample above the current estimate becomes the estimate at
///    once: a bad wakeup is usually followed by more (host contention comes in bursts),
///    so the very next wait is protected.
/// 3. **Slow exponential release.** Otherwise the excess of the estimate over the
///    baseline decays by a factor `2^(−1/half_life)` per wait: with the default
///    half-life of 32 waits (≈ 0.5 s at 60 Hz) a single spike costs a bounded amount of
///    extra spinning (≈ excess × 46 waits) rather than raising the margin for good.
/// 4. **Cap.** Samples above [`cap_ns`](EstimatorConfig::cap_ns) (default 500 µs) are
///    host stalls no margin could reasonably cover: they are counted ([`stalls`]) and
///    *not* learned, so one multi-ms stall cannot make the sleeper spin for milliseconds.
///    The margin never exceeds the cap either, so no wait spins longer than 500 µs
///    (3 % of a 60 Hz frame). The value comes from replaying recorded 60 Hz oversleep
///    traces of the 2-core reference VM through this estimator: raising the cap to 1 ms
///    cut late frames only from 1.28 % to 1.00 % (the rest are stalls of several ms)
///    while nearly doubling the spin CPU (0.8 % → 1.4 % of a core), and under heavy load
///    (13 % of wakeups > 1 ms) it cost 4.3 % instead of 1.7 %. A machine whose ordinary
///    wakeups exceed 500 µs shows it as a high [`stalls`] count: raise the cap there.
/// 5. **Prior.** Before any data the estimate is [`prior_ns`](EstimatorConfig::prior_ns)
///    (default 200 µs). On Linux with 1 ns timer slack an idle bare-metal machine wakes
///    within ~5–60 µs, but a virtual machine whose vCPU halted while idle takes longer:
///    on the project's 2-core reference VM a 16 ms absolute sleep overslept 108 µs
///    (median) and 140 µs (p90), and 170–330 µs with the default 50 µs slack. 200 µs
///    covers the common cases on the first wait; the instant rise handles the rest, and
///    the release brings it down within a few half-lives on a quieter machine.
/// 6. **Forgetting.** A wait with no native phase (the remaining time was within the
///    margin) pushes an *empty* slot and decays too. So if the margin ever grows beyond
///    the typical wait (say a 2 kHz loop after a burst of 500 µs oversleeps), the bad
///    samples leave the window within `window` waits, the baseline falls back to the
///    prior, and native sleeping resumes instead of spinning forever.
/// 7. **Coarse schedulers.** A stall is rare by definition. When more than a quarter
///    ([`COARSE_SHARE`](Self::COARSE_SHARE)) of the recent native wakeups (at least
///    [`COARSE_MIN_SAMPLES`](Self::COARSE_MIN_SAMPLES) of them, within the last `window`
///    waits) overslept beyond the cap's histogram bucket but within
///    [`COARSE_CAP_NS`](Self::COARSE_CAP_NS) (50 ms), the cap is below this machine's
///    *ordinary* wakeup, not its stalls: a tick-driven scheduler (old Windows at
///    15.6 ms, some VMs and phones at 4–10 ms). The estimator then enters *coarse mode*:
///    the cap rises to 50 ms, and the baseline becomes the same order statistic of *all*
///    recent oversleeps up to 50 ms (a second window that also keeps the samples above
///    the cap). Such samples are learned (instant rise included) instead of counted as
///    stalls; oversleeps beyond 50 ms stay stalls. Without it, on a scheduler of period
///    `P` ≫ cap nearly every wait overslept by `U(0, P)` and the sleeper was about as
///    late as a plain sleep (`sleeplab simulate`, seed 002's model: mean error 54 % of
///    a 10 ms request at a 10 ms period, 0.45 % with coarse mode); with it the margin
///    covers the p99 of the oversleep (≈ 1.85 P under that model) at the price of
///    spinning that long (docs/SIMULATE.md has the before/after heatmaps). The mode
///    ends by itself once the share falls to a quarter or below (the machine calmed
///    down, or the waits became too short for a native phase): the cap drops back at
///    once. A loaded VM (rule 4 quotes 13 % of wakeups > 1 ms under heavy load) stays
///    in the classic mode as long as at most a quarter of its wakeups exceed the cap,
///    so the cap and its CPU bound hold there.
///
/// The margin is `min(estimate + headroom, cap)` (the coarse cap in coarse mode); the
/// headroom (default 10 µs) absorbs the cost of the clock reads and the wakeup path that
/// the oversleep sample itself does not see. Per update: O(1) to insert, ≤ 240 bucket
/// reads for each order statistic and the coarse share; memory: two bytes per window
/// slot plus 960 bytes. No globals, no allocation after construction.
///
/// [`stalls`]: MarginEstimator::stalls
#[derive(Debug, Clone)]
pub struct MarginEstimator {
    cfg: EstimatorConfig,
    window: Window,
    /// Current estimate, ns (fractional so slow decay is smooth).
    estimate: f64,
    /// Per-wait decay factor of the excess over the baseline, `2^(-1/half_life)`.
    decay: f64,
    /// The baseline is the `rank`-th largest sample in the window.
    rank: usize,
    /// Every native-phase oversleep of the last `window` waits, stalls included (and empty
    /// slots for waits without a native phase): the coarse-mode share and baseline.
    tail: Window,
    /// Whether coarse mode is on (see rule 7 in the type docs).
    coarse: bool,
    samples: u64,
    stalls: u64,
}

impl Default for MarginEstimator {
    fn default() -> Self {
        Self::new(EstimatorConfig::default())
    }
}

impl MarginEstimator {
    /// The cap in coarse mode, ns (50 ms): oversleeps above it are always stalls.
    pub const COARSE_CAP_NS: u64 = 50_000_000;
    /// Coarse mode is on while more than this share of the recent native wakeups
    /// overslept beyond the cap (but within [`COARSE_CAP_NS`](Self::COARSE_CAP_NS)).
    pub const COARSE_SHARE: f64 = 0.25;
    /// Coarse mode needs at least this many native wakeups in the window.
    pub const COARSE_MIN_SAMPLES: usize = 8;

    /// A fresh estimator at the prior.
    pub fn new(cfg: EstimatorConfig) -> Self {
        let cfg = cfg.normalized();
        Self {
            window: Window::new(cfg.window),
            tail: Window::new(cfg.window),
            coarse: false,
            estimate: cfg.prior_ns as f64,
            decay: 0.5f64.powf(1.0 / f64::from(cfg.half_life)),
            rank: (((1.0 - cfg.quantile) * cfg.window as f64).ceil() as usize).max(1),
            samples: 0,
            stalls: 0,
            cfg,
        }
    }

    /// The (normalized) configuration.
    pub fn config(&self) -> &EstimatorConfig {
        &self.cfg
    }

    /// The margin to use for the next wait: `min(estimate + headroom, cap)`, ns, where
    /// the cap is [`ceiling_ns`](Self::ceiling_ns).
    pub fn margin_ns(&self) -> u64 {
        self.estimate_ns()
            .saturating_add(self.cfg.headroom_ns)
            .min(self.ceiling_ns())
    }

    /// The cap in force: the configured cap, or in coarse mode
    /// [`COARSE_CAP_NS`](Self::COARSE_CAP_NS) (if that is larger).
    pub fn ceiling_ns(&self) -> u64 {
        if self.coarse {
            self.cfg.cap_ns.max(Self::COARSE_CAP_NS)
        } else {
            self.cfg.cap_ns
        }
    }

    /// Whether coarse mode is on (see rule 7 in the type docs).
    pub fn is_coarse(&self) -> bool {
        self.coarse
    }

    /// Share of the recent native wakeups that overslept beyond the cap's bucket but
    /// within [`COARSE_CAP_NS`](Self::COARSE_CAP_NS) (0 with no native wakeup).
    pub fn coarse_share(&self) -> f64 {
        let n = self.tail.filled();
        if n == 0 {
            return 0.0;
        }
        let above = self.tail.count_between(
            bucket_of(self.cfg.cap_ns).saturating_add(1),
            bucket_of(Self::COARSE_CAP_NS),
        );
        above as f64 / n as f64
    }

    /// The current oversleep estimate (without headroom), ns, rounded up.
    pub fn estimate_ns(&self) -> u64 {
        // `as` saturates for f64 -> u64; the estimate is never negative or NaN.
        self.estimate.ceil() as u64
    }

    /// The window baseline: the `k`-th largest recent sample, `k = ⌈(1 − quantile) ·
    /// window⌉` (bucket upper edge, at most the cap), or the prior while the window holds
    /// fewer than `k` samples.
    ///
    /// In coarse mode: the same order statistic of every recent oversleep up to the coarse
    /// cap, stalls below it included.
    pub fn baseline_ns(&self) -> u64 {
        if self.coarse {
            let ceiling = self.ceiling_ns();
            return self
                .tail
                .kth_largest_at_most(self.rank, bucket_of(ceiling))
                .map_or(self.cfg.prior_ns, |q| q.min(ceiling));
        }
        self.window
            .kth_largest(self.rank)
            .map_or(self.cfg.prior_ns, |q| q.min(self.cfg.cap_ns))
    }

    /// `k`: the baseline is the `k`-th largest sample in the window.
    pub fn baseline_rank(&self) -> usize {
        self.rank
    }

    /// Learns the oversleep of one native phase (wake − target, ns).
    pub fn observe(&mut self, oversleep_ns: u64) -> Observation {
        self.tail.push(Some(oversleep_ns));
        self.update_mode();
        if oversleep_ns > self.ceiling_ns() {
            self.stalls = self.stalls.saturating_add(1);
            return Observation::Stall;
        }
        self.samples = self.samples.saturating_add(1);
        self.window.push(Some(oversleep_ns));
        let x = oversleep_ns as f64;
        if x >= self.estimate {
            self.estimate = x;
        } else {
            self.release();
        }
        self.estimate = self.estimate.max(self.baseline_ns() as f64);
        Observation::Learned
    }

    /// Recomputes coarse mode after a push into the tail window; leaving it brings the
    /// estimate back under the configured cap at once.
    fn update_mode(&mut self) {
        let n = self.tail.filled();
        self.coarse = self.cfg.cap_ns < Self::COARSE_CAP_NS
            && n >= Self::COARSE_MIN_SAMPLES
            && self.coarse_share() > Self::COARSE_SHARE;
        if !self.coarse {
            self.estimate = self.estimate.min(self.cfg.cap_ns as f64);
        }
    }

    /// Records a wait that had no native phase: it pushes an empty slot into the window
    /// and lets the estimate release one step (see "Forgetting" in the type docs).
    pub fn observe_none(&mut self) {
        self.tail.push(None);
        self.update_mode();
        self.window.push(None);
        self.release();
        self.estimate = self.estimate.max(self.baseline_ns() as f64);
    }

    fn release(&mut self) {
        let base = self.baseline_ns() as f64;
        if self.estimate > base {
            let excess = (self.estimate - base) * self.decay;
            // Snap once within half a nanosecond, so the estimate settles exactly.
            self.estimate = if excess < 0.5 { base } else { base + excess };
        }
    }

    /// Samples learned so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Samples rejected as stalls (above the cap) so far.
    pub fn stalls(&self) -> u64 {
        self.stalls
    }

    /// Samples currently in the window.
    pub fn window_samples(&self) -> usize {
        self.window.filled()
    }

    /// The window length in waits.
    pub fn window_len(&self) -> usize {
        self.window.len()
    }

    /// Forgets everything and returns to the prior.
    pub fn reset(&mut self) {
        self.window.clear();
        self.tail.clear();
        self.coarse = false;
        self.estimate = self.cfg.prior_ns as f64;
        self.samples = 0;
        self.stalls = 0;
    }
}
