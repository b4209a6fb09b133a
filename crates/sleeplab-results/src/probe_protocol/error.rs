//! The errors of the probe-output parser: which line, and what was wrong.

use super::{Mode, PROTOCOL};

/// A probe output that breaks the protocol: where, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {kind}")]
pub struct ProtocolError {
    /// 1-based line number (the line after the last one for a missing line).
    pub line: usize,
    /// What was wrong.
    pub kind: ErrorKind,
}

/// What was wrong with a probe's output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// Nothing at all was printed.
    #[error("no output (expected the header line)")]
    Empty,
    /// A line is not valid UTF-8.
    #[error("not valid UTF-8")]
    NotUtf8,
    /// An empty line.
    #[error("blank line")]
    BlankLine,
    /// The last line has no `\n`.
    #[error("the output does not end with a newline")]
    NoFinalNewline,
    /// The header (or a method entry) is not a JSON object.
    #[error("{what} is not a JSON object: {detail}")]
    NotJsonObject {
        /// "header" or "method entry".
        what: &'static str,
        /// The JSON parser's message or the excerpt.
        detail: String,
    },
    /// A required field is missing or of the wrong type.
    #[error("{what} field {field:?} {problem}")]
    Field {
        /// "header" or "method entry".
        what: &'static str,
        /// The field.
        field: String,
        /// e.g. "is missing", "must be a string".
        problem: String,
    },
    /// The header names another protocol.
    #[error("protocol {0:?} is not {PROTOCOL}")]
    Protocol(String),
    /// Measurement output whose header has no `method`/`mode`, or list output whose
    /// header has them.
    #[error("{0}")]
    WrongOutputKind(String),
    /// A method listed twice.
    #[error("method {0:?} is listed twice")]
    DuplicateMethod(String),
    /// A line that is none of the line types.
    #[error("unknown line {0:?}")]
    UnknownLine(String),
    /// A malformed number.
    #[error("bad number {text:?} in `{line_type}` line: {reason}")]
    Number {
        /// The line type (`cell`, `s`, …).
        line_type: &'static str,
        /// The text that should have been a number.
        text: String,
        /// Why it is not one.
        reason: &'static str,
    },
    /// A line with the wrong number of fields.
    #[error("`{line_type}` line needs {expected} field(s) separated by one space: {excerpt:?}")]
    Fields {
        /// The line type.
        line_type: &'static str,
        /// Fields after the line type.
        expected: usize,
        /// The line.
        excerpt: String,
    },
    /// A sample or `done` outside a cell.
    #[error("`{0}` line outside a cell")]
    OutsideCell(&'static str),
    /// `cell` inside an unfinished cell.
    #[error("`cell` line while the cell of line {0} is not done")]
    NestedCell(usize),
    /// `done` repeats a different value than its `cell`.
    #[error("`done {found}` does not repeat the cell's value {expected}")]
    DoneValue {
        /// The cell's value.
        expected: u64,
        /// The `done` line's value.
        found: u64,
    },
    /// `done` counts differently.
    #[error("`done` says {said} samples but the cell has {found}")]
    DoneCount {
        /// The count on the `done` line.
        said: u64,
        /// The samples actually in the cell.
        found: u64,
    },
    /// A sample line of the other mode (`t` in oneshot, `s` in periodic).
    #[error("`{line_type}` line in {mode} mode (expected `{expected}`)")]
    WrongSampleType {
        /// The line type found.
        line_type: &'static str,
        /// The header's mode.
        mode: Mode,
        /// The line type that mode uses.
        expected: &'static str,
    },
    /// A `w` line after the cell's first sample.
    #[error("warm-up line after the cell's samples (warm-up calls come first)")]
    WarmupAfterSample,
    /// A periodic tick earlier than the one before it.
    #[error("periodic tick at {value} ns arrives before the previous one at {previous} ns")]
    Decreasing {
        /// The earlier line's value.
        previous: u64,
        /// This line's value.
        value: u64,
    },
    /// A one-shot `w`/`s` line without its start, though the header says timestamps.
    #[error(
        "`{line_type}` line needs two fields, elapsed and start (the header says \"timestamps\":true): {excerpt:?}"
    )]
    MissingStart {
        /// The line type.
        line_type: &'static str,
        /// The line.
        excerpt: String,
    },
    /// A second field where no start belongs.
    #[error("`{line_type}` line has a second field, but {why}: {excerpt:?}")]
    UnexpectedStart {
        /// The line type.
        line_type: &'static str,
        /// Why no start belongs there.
        why: &'static str,
        /// The line.
        excerpt: String,
    },
    /// A call that starts before the call printed before it.
    #[error("call start {value} ns is before the previous call's start {previous} ns")]
    StartDecreasing {
        /// The previous call's start.
        previous: u64,
        /// This call's start.
        value: u64,
    },
    /// A `t0` line where the grammar has none.
    #[error("misplaced `t0` line: {0}")]
    MisplacedT0(String),
    /// A periodic cell with timestamps whose ticks (or `done`) come without a `t0` line.
    #[error(
        "the periodic cell of line {0} has no `t0` line before its ticks (the header says \"timestamps\":true)"
    )]
    MissingT0(usize),
    /// `end` while a cell is open.
    #[error("`end` while the cell of line {0} is not done")]
    UnfinishedCell(usize),
    /// Anything after `end`.
    #[error("output after `end`")]
    AfterEnd,
    /// No `end` line.
    #[error("missing `end` line (output truncated?)")]
    MissingEnd,
    /// A second header line.
    #[error("a second header line")]
    SecondHeader,
    /// A comment where the grammar has none.
    #[error("comment line {0}")]
    MisplacedComment(&'static str),
}
