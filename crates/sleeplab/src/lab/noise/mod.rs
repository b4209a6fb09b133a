//! The noise a thread that never sleeps sees, measured from user space: spin on the
//! calling thread for a while reading `CLOCK_MONOTONIC` back to back (as the kernel's
//! `osnoise` tracer does in the kernel) and record every gap between two consecutive
//! reads above a threshold: time the thread did not run. No tracing, no root.
//!
//! What it reports ([`Noise`]): the share of the time lost, the largest gap, gaps per
//! second, the gaps' quantiles (only where `n·(1 − q) ≥ 1`), and how much of the lost
//! time the guest's own scheduler accounts as waiting on a run queue
//! (`/proc/thread-self/schedstat`): the rest is interrupts and, on a virtual machine, the
//! **host** (the vCPU was not running), or on bare metal the **hardware** (SMIs,
//! firmware): [`NoiseSource`] names it.
//!
//! The statistics are pure: [`GapRecorder`] takes the clock reads, so tests inject them;
//! [`probe`] feeds it the real clock on the calling thread, [`probe_cpus`] on a thread
//! pinned to each of a set of CPUs, in turn or at once ([`Schedule`]).

mod recorder;
/// The gaps of this thread's spins (kept by the precise sleeper's spin loops, which own it).
pub use crate::precise::spin_log;

pub use recorder::GapRecorder;
use recorder::spin_segment;

use super::summary::quantile_ns;
use crate::clock::{Env, RealEnv};
use crate::system::{SystemError, hypervisor, pin_to_cpu};

/// What interrupts a spinning thread besides its own kernel: on a virtual machine the
/// host (the hypervisor descheduled the vCPU or handled an exit), on bare metal the
/// hardware (system management interrupts, firmware). A result names it from its own
/// fingerprint ([`NoiseSource::of`]), never from the machine that reads it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NoiseSource {
    /// A hypervisor is present: gaps not on the guest's run queue are mostly the host's.
    #[default]
    Host,
    /// No hypervisor was detected: such gaps are interrupts, SMIs and firmware.
    Hardware,
}

impl NoiseSource {
    /// This machine's: [`Host`](Self::Host) when
    /// [`system::hypervisor`](crate::system::hypervisor) finds one.
    pub fn detect() -> Self {
        Self::from_hypervisor(hypervisor().as_deref())
    }

    /// The source for a machine whose hypervisor is `hypervisor` (`None`: bare metal).
    pub fn from_hypervisor(hypervisor: Option<&str>) -> Self {
        Self::with_hypervisor(hypervisor.is_some())
    }

    /// The source for a machine with (`true`) or without a hypervisor.
    pub fn with_hypervisor(hypervisor: bool) -> Self {
        if hypervisor {
            Self::Host
        } else {
            Self::Hardware
        }
    }

    /// The source of the machine a result with fingerprint `fp` was measured on.
    pub fn of(fp: &crate::system::Fingerprint) -> Self {
        Self::with_hypervisor(fp.virtualization.is_some())
    }

    /// `host` or `hardware`, the word every report uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::Host => "host",
            Self::Hardware => "hardware",
        }
    }
}

/// How long to probe and what counts as a gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoiseConfig {
    /// How long to spin, ns (default 1 s).
    pub duration_ns: u64,
    /// A gap between two consecutive clock reads at least this long is recorded, ns
    /// (default 5 µs, `osnoise`'s default threshold; a clock read takes 20–40 ns).
    pub threshold_ns: u64,
    /// The most gaps kept for quantiles (default 262 144, 2 MiB, allocated before the
    /// spin); beyond it gaps are still counted, summed and compared with the largest.
    pub max_kept: usize,
}

impl Default for NoiseConfig {
    fn default() -> Self {
        Self {
            duration_ns: 1_000_000_000,
            threshold_ns: 5_000,
            max_kept: 1 << 18,
        }
    }
}

impl NoiseConfig {
    /// The default configuration spinning for `duration_ns`.
    pub fn for_ns(duration_ns: u64) -> Self {
        Self {
            duration_ns,
            ..Self::default()
        }
    }
}

/// What one probe saw. Times in ns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Noise {
    /// The CPU the probing thread was pinned to, `None` when it was not pinned.
    pub cpu: Option<usize>,
    /// From the first to the last clock read.
    pub wall_ns: u64,
    /// The threshold a gap had to reach.
    pub threshold_ns: u64,
    /// Clock reads, the first included.
    pub reads: u64,
    /// Gaps at or above the threshold.
    pub gaps: u64,
    /// Their total: time the thread did not run (as far as its reads tell).
    pub lost_ns: u64,
    /// The largest gap (0 without gaps).
    pub max_gap_ns: u64,
    /// Of the lost time, how much the thread spent on its kernel's run queue (another
    /// task of this machine ran); `None` where the kernel does not say.
    pub run_queue_ns: Option<u64>,
    /// The gaps in the order they happened, up to [`NoiseConfig::max_kept`].
    pub kept_ns: Vec<u64>,
    /// When each kept gap began: ns since the start of its segment (the probe's start,
    /// or for [`probe_after_sleeps`] the wake that began the spin).
    pub kept_at_ns: Vec<u64>,
    /// How much of each kept gap the thread spent on its kernel's run queue (empty where
    /// the kernel does not say).
    pub kept_queued_ns: Vec<u64>,
}

impl Noise {
    /// The share of the probe's time lost in gaps, 0–1 (0 for an empty probe).
    pub fn lost_share(&self) -> f64 {
        if self.wall_ns == 0 {
            0.0
        } else {
            self.lost_ns as f64 / self.wall_ns as f64
        }
    }

    /// Gaps per second of probing (0 for an empty probe).
    pub fn gaps_per_second(&self) -> f64 {
        if self.wall_ns == 0 {
            0.0
        } else {
            self.gaps as f64 * 1e9 / self.wall_ns as f64
        }
    }

    /// The `q` quantile of the gaps' lengths, ns: linear between closest ranks, and only
    /// where `n·(1 − q) ≥ 1` ([`quantile_ns`]); `None` too when gaps
    /// beyond [`NoiseConfig::max_kept`] were not kept (a quantile of the first ones
    /// only would describe the start of the probe).
    pub fn gap_quantile(&self, q: f64) -> Option<u64> {
        if self.kept_ns.len() as u64 != self.gaps {
            return None;
        }
        let mut sorted = self.kept_ns.clone();
        sorted.sort_unstable();
        quantile_ns(&sorted, q)
    }

    /// The lost time the guest's scheduler does not account as run-queue time, ns:
    /// interrupts, and the host or the hardware ([`NoiseSource`]). `None` where the
    /// kernel reports no run-queue time.
    pub fn off_run_queue_ns(&self) -> Option<u64> {
        self.run_queue_ns.map(|q| self.lost_ns.saturating_sub(q))
    }

    /// The same probe with only the gaps spent mostly off the run queue (less than half
    /// of each on it): interrupts and the host or the hardware, not this machine's other
    /// tasks. `None` without each gap's run-queue time (or when not every gap was kept).
    pub fn off_run_queue(&self) -> Option<Noise> {
        if self.run_queue_ns.is_none()
            || self.kept_queued_ns.len() != self.kept_ns.len()
            || self.kept_ns.len() as u64 != self.gaps
        {
            return None;
        }
        let mut out = Noise {
            kept_ns: Vec::new(),
            kept_at_ns: Vec::new(),
            kept_queued_ns: Vec::new(),
            gaps: 0,
            lost_ns: 0,
            max_gap_ns: 0,
            run_queue_ns: Some(0),
            ..self.clone()
        };
        for ((&gap, &at), &queued) in self
            .kept_ns
            .iter()
            .zip(&self.kept_at_ns)
            .zip(&self.kept_queued_ns)
        {
            if queued < gap.div_ceil(2) {
                out.gaps += 1;
                out.lost_ns += gap;
                out.max_gap_ns = out.max_gap_ns.max(gap);
                out.run_queue_ns = out.run_queue_ns.map(|q| q + queued);
                out.kept_ns.push(gap);
                out.kept_at_ns.push(at);
                out.kept_queued_ns.push(queued);
            }
        }
        Some(out)
    }

    /// The mean time between two clock reads, ns (the probe's resolution).
    pub fn mean_read_ns(&self) -> f64 {
        if self.reads < 2 {
            0.0
        } else {
            self.wall_ns as f64 / (self.reads - 1) as f64
        }
    }
}

/// A probe of one back-to-back spin on `env` for `config.duration_ns` (reads without a
/// pause, as `osnoise`; the run queue read after each gap where `env` reports it): the
/// core of [`probe`], deterministic on a virtual environment.
pub fn probe_env<E: Env>(env: &mut E, config: &NoiseConfig) -> Noise {
    let mut r = None;
    let duration = config.duration_ns;
    spin_segment(
        env,
        &mut r,
        config,
        |start| start.saturating_add(duration),
        false,
    );
    r.map_or_else(Noise::default, |r| r.finish(None))
}

/// Spins after sleeps: `frames` times, an absolute native sleep to `spin_ns` before the
/// end of a `period_ns` frame (a vCPU with nothing else to run halts), then a spin to
/// the frame's end reading `env`'s clock with a pause between reads, as a precise
/// sleeper's last phase does. The gaps are those of the spins only (one segment each,
/// [`GapRecorder`]), each kept with how long its spin had run when it began. The core
/// of [`probe_after_sleeps`], deterministic on a virtual environment.
pub fn probe_after_sleeps_env<E: Env>(
    env: &mut E,
    config: &NoiseConfig,
    period_ns: u64,
    spin_ns: u64,
    frames: u64,
) -> Noise {
    let spin_ns = spin_ns.min(period_ns);
    let t0 = env.now();
    let mut r = None;
    for k in 1..=frames {
        let end = t0.saturating_add(k.saturating_mul(period_ns));
        env.sleep_until(end - spin_ns);
        spin_segment(env, &mut r, config, |_| end, true);
    }
    r.map_or_else(Noise::default, |r| r.finish(None))
}

/// Spins on the calling thread for `config.duration_ns`, reading `CLOCK_MONOTONIC` back
/// to back, and returns the gaps it saw, each with its run-queue time.
pub fn probe(config: &NoiseConfig) -> Noise {
    probe_env(&mut RealEnv, config)
}

/// [`probe_after_sleeps_env`] on the real clock and `clock_nanosleep` on the calling
/// thread, as many frames as fit in `config.duration_ns`. The timer slack is the
/// caller's (a precise sleeper sets 1 ns).
pub fn probe_after_sleeps(config: &NoiseConfig, period_ns: u64, spin_ns: u64) -> Noise {
    let frames = (config.duration_ns / period_ns.max(1)).max(1);
    probe_after_sleeps_env(&mut RealEnv, config, period_ns, spin_ns, frames)
}

/// Which probe [`probe_cpus`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProbeKind {
    /// [`probe`]: one spin for the whole duration (a thread that never sleeps).
    #[default]
    Spin,
    /// [`probe_after_sleeps`]: a spin of `spin_ns` at the end of every `period_ns` frame,
    /// after a native sleep (a precise sleeper's last phase).
    AfterSleeps {
        /// The frame, ns.
        period_ns: u64,
        /// The spin at its end, ns.
        spin_ns: u64,
    },
}

impl ProbeKind {
    /// Runs this probe on the calling thread.
    pub fn run(self, config: &NoiseConfig) -> Noise {
        match self {
            Self::Spin => probe(config),
            Self::AfterSleeps { period_ns, spin_ns } => {
                probe_after_sleeps(config, period_ns, spin_ns)
            }
        }
    }
}

/// How [`probe_cpus`] runs its probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Schedule {
    /// One CPU after the other: the others stay free for the machine's own threads.
    #[default]
    InTurn,
    /// Every CPU at once: the machine's own threads then have to preempt a probe, which
    /// shows as run-queue time.
    AtOnce,
}

/// Why a probe on a CPU could not run.
#[derive(Debug, thiserror::Error)]
pub enum NoiseError {
    /// The probing thread could not be pinned to the CPU.
    #[error("cannot pin the noise probe to CPU {cpu}: {source}")]
    Pin {
        /// The CPU asked for.
        cpu: usize,
        /// Why.
        source: SystemError,
    },
    /// The probing thread could not be started.
    #[error("cannot start the noise probe's thread: {0}")]
    Spawn(#[source] std::io::Error),
    /// The probing thread panicked.
    #[error("the noise probe on CPU {cpu} panicked")]
    Panicked {
        /// The CPU it probed.
        cpu: usize,
    },
}

/// Runs the probe `kind` on a thread pinned to each CPU of `cpus`, as `schedule` says;
/// one [`Noise`] per CPU, in the order given.
pub fn probe_cpus(
    cpus: &[usize],
    config: &NoiseConfig,
    kind: ProbeKind,
    schedule: Schedule,
) -> Result<Vec<Noise>, NoiseError> {
    let start = |cpu: usize| {
        let config = *config;
        std::thread::Builder::new()
            .name(format!("noise-cpu{cpu}"))
            .spawn(move || -> Result<Noise, NoiseError> {
                pin_to_cpu(cpu).map_err(|source| NoiseError::Pin { cpu, source })?;
                let mut noise = kind.run(&config);
                noise.cpu = Some(cpu);
                Ok(noise)
            })
            .map_err(NoiseError::Spawn)
    };
    let join = |cpu: usize, h: std::thread::JoinHandle<Result<Noise, NoiseError>>| {
        h.join().map_err(|_| NoiseError::Panicked { cpu })?
    };
    match schedule {
        Schedule::InTurn => cpus.iter().map(|&cpu| join(cpu, start(cpu)?)).collect(),
        Schedule::AtOnce => {
            let handles = cpus
                .iter()
                .map(|&cpu| start(cpu).map(|h| (cpu, h)))
                .collect::<Result<Vec<_>, _>>()?;
            handles.into_iter().map(|(cpu, h)| join(cpu, h)).collect()
        }
    }
}

#[cfg(test)]
mod tests;
