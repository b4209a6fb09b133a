//! What an experiment runs with besides its config: the progress bar, the stop flag,
//! the thread settings, the machine's CPU count and the words of its hints
//! ([`Context`]).

use super::Wording;
pub use crate::interrupt::Stop;
use crate::settings::ThreadSettings;
use sleeplab_stats::Progress;

/// What an experiment runs with besides its config.
#[derive(Debug, Clone)]
pub struct Context {
    /// Where it reports its steps (an `Experiment`'s `steps` of them).
    pub progress: Progress,
    /// When to stop early, keeping what was measured.
    pub stop: Stop,
    /// Settings applied to every measuring thread.
    pub threads: ThreadSettings,
    /// Online CPUs of the machine (the run's fingerprint): the one source for load
    /// warnings and worker counts.
    pub cpus: usize,
    /// How the run's sentences word a [`Hint`](super::Hint): the command layer's flags.
    pub hints: Wording,
}

impl Context {
    /// A context that stops on Ctrl-C.
    pub fn new(progress: Progress, threads: ThreadSettings, cpus: usize, hints: Wording) -> Self {
        Self {
            progress,
            stop: Stop::on_interrupt(),
            threads,
            cpus: cpus.max(1),
            hints,
        }
    }

    /// No progress shown, default thread settings, hints by their names, stops on Ctrl-C
    /// (tests).
    pub fn hidden() -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::new(
            Progress::hidden(),
            ThreadSettings::default(),
            cpus,
            Wording::NAMES,
        )
    }

    /// The context a traced run measures in, and what it says about where: when
    /// `traced`, a run not pinned is pinned to a CPU whose events the kernel records
    /// fully, and a run pinned to one that loses them is warned
    /// ([`sleeplab_capture::coverage`]); untraced, the same context.
    pub fn placed_for_trace(&self, traced: bool) -> (Context, Option<String>) {
        if !traced {
            return (self.clone(), None);
        }
        let p = sleeplab_account::placement(self.threads.pin);
        let mut ctx = self.clone();
        ctx.threads.pin = p.cpu;
        (ctx, p.note)
    }

    /// The same context with another stop flag.
    pub fn with_stop(self, stop: Stop) -> Self {
        Self { stop, ..self }
    }

    /// Whether to stop now.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.requested()
    }

    /// Runs `measure` on a dedicated thread named `name` with the thread settings
    /// applied, and waits for it; a panic there is an error here.
    pub fn on_measuring_thread<T: Send>(
        &self,
        name: &str,
        measure: impl FnOnce() -> anyhow::Result<T> + Send,
    ) -> anyhow::Result<T> {
        std::thread::scope(|s| {
            let handle = std::thread::Builder::new()
                .name(name.into())
                .spawn_scoped(s, || {
                    self.threads.apply()?;
                    measure()
                })?;
            handle
                .join()
                .map_err(|_| anyhow::anyhow!("the measuring thread panicked"))?
        })
    }
}

/// The note for a run with as many busy threads as CPUs or more: `who` competes for a
/// CPU (e.g. "the measuring thread competes for a CPU").
pub fn load_note(loads: &[usize], cpus: usize, who: &str) -> Option<String> {
    let max = loads.iter().copied().max().unwrap_or(0);
    (max > 0 && max >= cpus).then(|| format!("load {max} busy threads on {cpus} CPUs: {who}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn load_note_only_when_the_busy_threads_fill_the_cpus() {
        assert_eq!(load_note(&[0, 1], 2, "x"), None);
        assert_eq!(
            load_note(&[0, 2], 2, "x").as_deref(),
            Some("load 2 busy threads on 2 CPUs: x")
        );
        assert_eq!(load_note(&[], 1, "x"), None);
    }

    #[test]
    fn a_measuring_thread_panic_is_an_error_and_stop_is_injected() {
        let ctx = Context::hidden();
        let e = ctx
            .on_measuring_thread("t", || -> anyhow::Result<()> { panic!("boom") })
            .unwrap_err();
        assert_eq!(e.to_string(), "the measuring thread panicked");
        assert_eq!(ctx.on_measuring_thread("t", || Ok(7)).unwrap(), 7);
        let calls = Arc::new(AtomicUsize::new(0));
        let c = Arc::clone(&calls);
        let ctx = ctx.with_stop(Stop::when(move || c.fetch_add(1, Ordering::SeqCst) >= 2));
        assert!(!ctx.stopped() && !ctx.stopped() && ctx.stopped());
    }
}
