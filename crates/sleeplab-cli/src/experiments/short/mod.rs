//! `sleeplab short`: what a zero and a minimal sleep really cost, for every wait
//! mechanism (seed 001, "How long do short sleeps actually take?").
//!
//! The method is the seed's, made explicit:
//!
//! * **Batches.** Each measurement is a batch of calls timed as a whole (clock read,
//!   N calls, clock read) and divided by N. N is `--batch` (3000, as in the seed), shrunk
//!   for expensive calls so that one batch takes about `--batch-time` (see
//!   [`batch_size`]); the size is fixed per cell before the first repetition, from a
//!   calibration run that doubles as warm-up.
//! * **Ground truth.** The same loop with an empty body that the compiler cannot remove
//!   (`std::hint::black_box`) is the measurement floor. Every batch is paired with an
//!   empty batch of the same length run just before it; figures are shown raw and with
//!   the median of the cell's paired floors subtracted ("net"; the median, so one tiny
//!   empty loop hit by a host stall cannot make a cost negative). A floor cell at the
//!   full batch length is also measured on its own (the seed's "604 ± 44 ns per 3000"),
//!   and so is one trivial system call (`getppid`), the yardstick for "did it enter the
//!   kernel at all?".
//! * **Repetitions.** At least 20, interleaved: repetition-major, and within a
//!   repetition every timer slack block, then every cell in an order shuffled by a seeded
//!   RNG. The mean per call gets a 99.9 % confidence interval by Student's t over the
//!   per-repetition per-call means (df = repetitions − 1); min and median are of the same
//!   per-repetition means.
//! * **Costs.** CPU time and voluntary/involuntary context switches of the measuring
//!   thread around each batch (`getrusage(RUSAGE_THREAD)`), per call.

mod csv_out;
mod render;
mod run;
pub use csv_out::{CSV_COLUMNS, to_csv};
pub use render::render;
pub use run::{planned_batches, run};

pub use sleeplab_results::short::*;

use crate::experiments::{self, Context, Experiment};

/// `sleeplab short`.
impl Experiment for ShortConfig {
    const NAME: &'static str = sleeplab_results::short::NAME;
    type Data = ShortData;

    /// One step per batch: repetitions × slacks × cells (references included).
    fn steps(&self) -> u64 {
        planned_batches(self)
    }

    fn run(&self, ctx: &Context) -> anyhow::Result<experiments::Outcome<ShortData>> {
        let mut out = run(self, ctx)?;
        if self.repetitions < DEFAULT_REPETITIONS {
            out.notes.push(format!(
                "{} repetitions: the seed used at least {DEFAULT_REPETITIONS}; the intervals are wide",
                self.repetitions
            ));
        }
        Ok(out)
    }

    fn render(
        data: &ShortData,
        _machine: sleeplab_account::Machine,
        _hints: crate::experiments::Wording,
    ) -> String {
        render(data)
    }

    fn csv(data: &ShortData) -> Option<anyhow::Result<Vec<u8>>> {
        Some(to_csv(data))
    }
}
