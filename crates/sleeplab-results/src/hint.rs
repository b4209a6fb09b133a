//! What a sentence of an experiment or of the report asks its reader to do on the
//! command line, as a value ([`Hint`]). Nothing below the command layer names a flag:
//! the command layer words each hint with its flags (`commands/hints.rs`) and hands that
//! [`Wording`] down: in a run's `Context`, to a render, to the report.

/// Something a sentence asks the reader to do on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// Measure each candidate longer (`advise`): more waits narrow an interval.
    LongerRun,
    /// Run the measuring threads under a real-time scheduling policy.
    RealtimePolicy,
    /// Measure C++'s `sleep_for(0)`: the runtimes experiment on the C++ probe's zero sleep.
    CppZeroSleep,
    /// Include these mechanisms (comma-separated) in the run's list.
    Mechanisms(&'static str),
    /// Lock the measuring processes' memory.
    Mlock,
    /// List every probe's methods.
    ProbeMethods,
    /// Trace the run's wakes in the kernel.
    Trace,
    /// Measure seed 002's figure 2 and draw it: the sweep and the report that do.
    Figure2,
    /// Give each cell of the runtimes experiment a time budget.
    Budget,
    /// Name the second side of a comparison.
    Against,
    /// Draw tables at their full width (every column), with a sentence per traced cell.
    Wide,
    /// Follow a program without the machine's interrupts (the least added to its wakes).
    Light,
    /// Follow a program with the local timer's interrupt and the idle states recorded.
    IdleStates,
}

/// How hints are worded: the command layer's wording, with its flags, or
/// [`Wording::NAMES`] where no reader sees the text.
#[derive(Debug, Clone, Copy)]
pub struct Wording(pub fn(Hint) -> String);

impl Wording {
    /// Each hint by its name (`LongerRun`, `Mechanisms("nanosleep")`): for runs whose text
    /// no reader sees (tests).
    pub const NAMES: Wording = Wording(name);

    /// The words for `hint`.
    pub fn word(self, hint: Hint) -> String {
        (self.0)(hint)
    }
}

/// A hint's name.
fn name(hint: Hint) -> String {
    format!("{hint:?}")
}
