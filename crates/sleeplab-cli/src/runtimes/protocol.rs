//! A strict parser of probe output, exactly as `spec/probe-protocol.md` defines it
//! (`sleeplab-probe/1`): the `--list` output and the measurement output.
//!
//! Every deviation is an error naming the 1-based line and what was wrong. Parsing never
//! panics, whatever the bytes (a property test feeds it random input). The parser keeps
//! every sample; the harness caps the size of what it reads before parsing.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// The protocol this parser speaks.
pub const PROTOCOL: &str = "sleeplab-probe/1";

/// The longest excerpt of a bad line quoted in an error message.
const EXCERPT: usize = 60;

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

/// The kind of a method in `--list` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A wait for a requested duration.
    Oneshot,
    /// Gives up the CPU; no duration (the harness passes 0).
    Yield,
    /// A ticker-like API, measured in periodic mode.
    Periodic,
}

impl Kind {
    /// The protocol's name of the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Oneshot => "oneshot",
            Kind::Yield => "yield",
            Kind::Periodic => "periodic",
        }
    }

    /// The measurement mode a method of this kind runs in.
    pub fn mode(self) -> Mode {
        match self {
            Kind::Oneshot | Kind::Yield => Mode::Oneshot,
            Kind::Periodic => Mode::Periodic,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The mode of a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Cells of `s` samples: elapsed ns of one call each.
    Oneshot,
    /// One cell of `t` samples: arrival times since t0.
    Periodic,
}

impl Mode {
    /// The protocol's name of the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Oneshot => "oneshot",
            Mode::Periodic => "periodic",
        }
    }

    /// The sample line type of this mode.
    pub fn sample_type(self) -> &'static str {
        match self {
            Mode::Oneshot => "s",
            Mode::Periodic => "t",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The header line: which runtime measured, with which clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Header {
    /// Short runtime id (`c`, `cpp`, `go`, `python`, `java`, `node`, `ruby`, `windows`).
    pub runtime: String,
    /// The implementation (`CPython`, `MRI`, `JRuby`, `OpenJDK`, `wine`, …).
    pub implementation: String,
    /// The runtime's version, free text.
    pub runtime_version: String,
    /// The clock the probe reads.
    pub clock: String,
    /// The platform, free text.
    pub platform: String,
    /// The method measured (measurement output only).
    pub method: Option<String>,
    /// The measurement mode (measurement output only).
    pub mode: Option<Mode>,
    /// Fields beyond the protocol's (e.g. `timerslack_ns`), kept as given.
    pub extra: BTreeMap<String, Value>,
}

/// One method of a `--list` output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MethodInfo {
    /// The name passed to `--method`.
    pub method: String,
    /// Its kind.
    pub kind: Kind,
    /// Whether it can be measured here.
    pub available: bool,
    /// Why not, when unavailable.
    pub reason: Option<String>,
    /// What exactly it calls.
    pub description: String,
}

/// A parsed `--list` output.
#[derive(Debug, Clone, PartialEq)]
pub struct ListOutput {
    /// The header (no `method`/`mode`).
    pub header: Header,
    /// The methods, in the probe's order.
    pub methods: Vec<MethodInfo>,
}

/// A `#` line: a note the probe knows of (a clamp, a rounding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// 1-based line number.
    pub line: usize,
    /// The text after `#` (and one space, if any).
    pub text: String,
}

/// One cell of a measurement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// Requested duration (oneshot) or period (periodic), ns.
    pub value_ns: u64,
    /// The `w` lines, in order.
    pub warmup: Vec<u64>,
    /// The `s` (oneshot) or `t` (periodic) lines, in order.
    pub samples: Vec<u64>,
    /// Comments inside the cell or between the previous cell and this one.
    pub comments: Vec<Comment>,
    /// Line number of the `cell` line.
    pub line: usize,
}

/// A parsed measurement output.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The header (with `method` and `mode`).
    pub header: Header,
    /// The method (from the header).
    pub method: String,
    /// The mode (from the header).
    pub mode: Mode,
    /// The cells, in order.
    pub cells: Vec<Cell>,
    /// Comments after the last cell.
    pub trailing_comments: Vec<Comment>,
}

/// Either kind of probe output.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// `--list` output.
    List(ListOutput),
    /// Measurement output.
    Measurement(Measurement),
}

/// Parses any probe output: measurement output when the header has `method` or
/// `mode`, list output otherwise.
pub fn parse_output(input: &[u8]) -> Result<Output, ProtocolError> {
    let lines = Lines::new(input);
    let first = lines.first()?;
    let obj = json_object(first, 1, "header")?;
    if obj.contains_key("method") || obj.contains_key("mode") {
        parse_measurement(input).map(Output::Measurement)
    } else {
        parse_list(input).map(Output::List)
    }
}

/// Parses the output of `probe --list`.
pub fn parse_list(input: &[u8]) -> Result<ListOutput, ProtocolError> {
    let mut lines = Lines::new(input);
    let (_, first) = lines.next_line()?.ok_or(ProtocolError {
        line: 1,
        kind: ErrorKind::Empty,
    })?;
    let header = header(first, false)?;
    let mut methods: Vec<MethodInfo> = Vec::new();
    loop {
        let Some((n, line)) = lines.next_line()? else {
            return Err(ProtocolError {
                line: lines.line + 1,
                kind: ErrorKind::MissingEnd,
            });
        };
        let err = |kind| ProtocolError { line: n, kind };
        if line == "end" {
            break;
        }
        if line.is_empty() {
            return Err(err(ErrorKind::BlankLine));
        }
        if line.starts_with('#') {
            return Err(err(ErrorKind::MisplacedComment(
                "in --list output (comments belong to measurement output)",
            )));
        }
        if !line.starts_with('{') {
            return Err(err(ErrorKind::UnknownLine(excerpt(line))));
        }
        let m = method_entry(line, n)?;
        if methods.iter().any(|x| x.method == m.method) {
            return Err(err(ErrorKind::DuplicateMethod(m.method)));
        }
        methods.push(m);
    }
    lines.expect_eof()?;
    Ok(ListOutput { header, methods })
}

/// Parses the output of a measurement (`--method …`).
pub fn parse_measurement(input: &[u8]) -> Result<Measurement, ProtocolError> {
    let mut lines = Lines::new(input);
    let (_, first) = lines.next_line()?.ok_or(ProtocolError {
        line: 1,
        kind: ErrorKind::Empty,
    })?;
    let header = header(first, true)?;
    let (Some(method), Some(mode)) = (header.method.clone(), header.mode) else {
        return Err(ProtocolError {
            line: 1,
            kind: ErrorKind::WrongOutputKind("measurement header needs `method` and `mode`".into()),
        });
    };
    let mut cells: Vec<Cell> = Vec::new();
    let mut open: Option<Cell> = None;
    let mut pending: Vec<Comment> = Vec::new();
    loop {
        let Some((n, line)) = lines.next_line()? else {
            return Err(ProtocolError {
                line: lines.line + 1,
                kind: ErrorKind::MissingEnd,
            });
        };
        let err = |kind| ProtocolError { line: n, kind };
        if line.is_empty() {
            return Err(err(ErrorKind::BlankLine));
        }
        if let Some(rest) = line.strip_prefix('#') {
            let text = rest.strip_prefix(' ').unwrap_or(rest).to_string();
            let c = Comment { line: n, text };
            match open.as_mut() {
                Some(cell) => cell.comments.push(c),
                None => pending.push(c),
            }
            continue;
        }
        if line == "end" {
            if let Some(cell) = &open {
                return Err(err(ErrorKind::UnfinishedCell(cell.line)));
            }
            break;
        }
        if line.starts_with('{') {
            return Err(err(ErrorKind::SecondHeader));
        }
        let (ty, rest) = line.split_once(' ').unwrap_or((line, ""));
        match ty {
            "cell" => {
                if let Some(cell) = &open {
                    return Err(err(ErrorKind::NestedCell(cell.line)));
                }
                let [v] = fields::<1>("cell", rest, line, n)?;
                open = Some(Cell {
                    value_ns: v,
                    warmup: Vec::new(),
                    samples: Vec::new(),
                    comments: std::mem::take(&mut pending),
                    line: n,
                });
            }
            "w" | "s" | "t" => {
                let ty: &'static str = match ty {
                    "w" => "w",
                    "s" => "s",
                    _ => "t",
                };
                let Some(cell) = open.as_mut() else {
                    return Err(err(ErrorKind::OutsideCell(ty)));
                };
                let [v] = fields::<1>(ty, rest, line, n)?;
                if ty != "w" && ty != mode.sample_type() {
                    return Err(err(ErrorKind::WrongSampleType {
                        line_type: ty,
                        mode,
                        expected: mode.sample_type(),
                    }));
                }
                if ty == "w" && !cell.samples.is_empty() {
                    return Err(err(ErrorKind::WarmupAfterSample));
                }
                if mode == Mode::Periodic {
                    let previous = cell.samples.last().or(cell.warmup.last()).copied();
                    if let Some(previous) = previous.filter(|&p| v < p) {
                        return Err(err(ErrorKind::Decreasing { previous, value: v }));
                    }
                }
                if ty == "w" {
                    cell.warmup.push(v);
                } else {
                    cell.samples.push(v);
                }
            }
            "done" => {
                let Some(cell) = open.take() else {
                    return Err(err(ErrorKind::OutsideCell("done")));
                };
                let [v, count] = fields::<2>("done", rest, line, n)?;
                if v != cell.value_ns {
                    return Err(err(ErrorKind::DoneValue {
                        expected: cell.value_ns,
                        found: v,
                    }));
                }
                let found = cell.samples.len() as u64;
                if count != found {
                    return Err(err(ErrorKind::DoneCount { said: count, found }));
                }
                cells.push(cell);
            }
            _ => return Err(err(ErrorKind::UnknownLine(excerpt(line)))),
        }
    }
    lines.expect_eof()?;
    Ok(Measurement {
        header,
        method,
        mode,
        cells,
        trailing_comments: pending,
    })
}

/// The input as lines: split on `\n`, one trailing `\r` removed, UTF-8 checked.
struct Lines<'a> {
    rest: &'a [u8],
    /// Number of the last line returned.
    line: usize,
}

impl<'a> Lines<'a> {
    fn new(input: &'a [u8]) -> Self {
        Self {
            rest: input,
            line: 0,
        }
    }

    /// The first line without consuming anything (for dispatch).
    fn first(&self) -> Result<&'a str, ProtocolError> {
        let mut copy = Lines::new(self.rest);
        match copy.next_line()? {
            Some((_, l)) => Ok(l),
            None => Err(ProtocolError {
                line: 1,
                kind: ErrorKind::Empty,
            }),
        }
    }

    /// The next line and its number, or `None` at the end of the input.
    fn next_line(&mut self) -> Result<Option<(usize, &'a str)>, ProtocolError> {
        if self.rest.is_empty() {
            return Ok(None);
        }
        self.line += 1;
        let n = self.line;
        let (raw, rest) = match self.rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&self.rest[..i], &self.rest[i + 1..]),
            None => {
                return Err(ProtocolError {
                    line: n,
                    kind: ErrorKind::NoFinalNewline,
                });
            }
        };
        self.rest = rest;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = std::str::from_utf8(raw).map_err(|_| ProtocolError {
            line: n,
            kind: ErrorKind::NotUtf8,
        })?;
        Ok(Some((n, text)))
    }

    /// Fails unless the input is exhausted.
    fn expect_eof(&self) -> Result<(), ProtocolError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(ProtocolError {
                line: self.line + 1,
                kind: ErrorKind::AfterEnd,
            })
        }
    }
}

/// A short, printable excerpt of a line for error messages.
fn excerpt(line: &str) -> String {
    match line.char_indices().nth(EXCERPT) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

/// Parses the `N` space-separated numbers after a line type.
fn fields<const N: usize>(
    line_type: &'static str,
    rest: &str,
    line: &str,
    n: usize,
) -> Result<[u64; N], ProtocolError> {
    let parts: Vec<&str> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split(' ').collect()
    };
    if parts.len() != N {
        return Err(ProtocolError {
            line: n,
            kind: ErrorKind::Fields {
                line_type,
                expected: N,
                excerpt: excerpt(line),
            },
        });
    }
    let mut out = [0u64; N];
    for (slot, text) in out.iter_mut().zip(parts) {
        *slot = number(text).map_err(|reason| ProtocolError {
            line: n,
            kind: ErrorKind::Number {
                line_type,
                text: excerpt(text),
                reason,
            },
        })?;
    }
    Ok(out)
}

/// A non-negative decimal integer that fits in 64 bits: ASCII digits only.
fn number(text: &str) -> Result<u64, &'static str> {
    if text.is_empty() {
        return Err("empty (two spaces in a row, or a trailing space)");
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err("not a non-negative decimal integer");
    }
    text.parse()
        .map_err(|_| "does not fit in an unsigned 64-bit integer")
}

/// Parses a line as a JSON object.
fn json_object(
    line: &str,
    n: usize,
    what: &'static str,
) -> Result<Map<String, Value>, ProtocolError> {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ProtocolError {
            line: n,
            kind: ErrorKind::NotJsonObject {
                what,
                detail: excerpt(line),
            },
        }),
        Err(e) => {
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or_default();
            Err(ProtocolError {
                line: n,
                kind: ErrorKind::NotJsonObject {
                    what,
                    detail: format!("{:?} ({msg} at column {})", excerpt(line), e.column()),
                },
            })
        }
    }
}

/// Takes a required string field out of `obj`.
fn string_field(
    obj: &mut Map<String, Value>,
    field: &str,
    what: &'static str,
    n: usize,
) -> Result<String, ProtocolError> {
    let problem = |p: &str| ProtocolError {
        line: n,
        kind: ErrorKind::Field {
            what,
            field: field.to_string(),
            problem: p.to_string(),
        },
    };
    match obj.remove(field) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(problem("must be a string")),
        None => Err(problem("is missing")),
    }
}

/// Parses and checks the header line.
fn header(line: &str, measurement: bool) -> Result<Header, ProtocolError> {
    let what = "header";
    let mut obj = json_object(line, 1, what)?;
    let protocol = string_field(&mut obj, "protocol", what, 1)?;
    if protocol != PROTOCOL {
        return Err(ProtocolError {
            line: 1,
            kind: ErrorKind::Protocol(protocol),
        });
    }
    let mut h = Header {
        runtime: string_field(&mut obj, "runtime", what, 1)?,
        implementation: string_field(&mut obj, "implementation", what, 1)?,
        runtime_version: string_field(&mut obj, "runtime_version", what, 1)?,
        clock: string_field(&mut obj, "clock", what, 1)?,
        platform: string_field(&mut obj, "platform", what, 1)?,
        method: None,
        mode: None,
        extra: BTreeMap::new(),
    };
    if h.runtime.is_empty() {
        return Err(ProtocolError {
            line: 1,
            kind: ErrorKind::Field {
                what,
                field: "runtime".into(),
                problem: "is empty".into(),
            },
        });
    }
    if measurement {
        let method = string_field(&mut obj, "method", what, 1)?;
        let mode = string_field(&mut obj, "mode", what, 1)?;
        h.mode = Some(match mode.as_str() {
            "oneshot" => Mode::Oneshot,
            "periodic" => Mode::Periodic,
            other => {
                return Err(ProtocolError {
                    line: 1,
                    kind: ErrorKind::Field {
                        what,
                        field: "mode".into(),
                        problem: format!(
                            "is {:?}, not \"oneshot\" or \"periodic\"",
                            excerpt(other)
                        ),
                    },
                });
            }
        });
        h.method = Some(method);
    } else if obj.contains_key("method") || obj.contains_key("mode") {
        return Err(ProtocolError {
            line: 1,
            kind: ErrorKind::WrongOutputKind(
                "the --list header must not have `method` or `mode`".into(),
            ),
        });
    }
    h.extra = obj.into_iter().collect();
    Ok(h)
}

/// Parses and checks one method entry of a `--list` output.
fn method_entry(line: &str, n: usize) -> Result<MethodInfo, ProtocolError> {
    let what = "method entry";
    let mut obj = json_object(line, n, what)?;
    let field_err = |field: &str, problem: &str| ProtocolError {
        line: n,
        kind: ErrorKind::Field {
            what,
            field: field.into(),
            problem: problem.into(),
        },
    };
    let method = string_field(&mut obj, "method", what, n)?;
    if method.is_empty() {
        return Err(field_err("method", "is empty"));
    }
    let kind = match string_field(&mut obj, "kind", what, n)?.as_str() {
        "oneshot" => Kind::Oneshot,
        "yield" => Kind::Yield,
        "periodic" => Kind::Periodic,
        other => {
            return Err(field_err(
                "kind",
                &format!(
                    "is {:?}, not \"oneshot\", \"yield\" or \"periodic\"",
                    excerpt(other)
                ),
            ));
        }
    };
    let available = match obj.remove("available") {
        Some(Value::Bool(b)) => b,
        Some(_) => return Err(field_err("available", "must be true or false")),
        None => return Err(field_err("available", "is missing")),
    };
    let reason = match obj.remove("reason") {
        Some(Value::String(s)) => Some(s),
        Some(_) => return Err(field_err("reason", "must be a string")),
        None if !available => {
            return Err(field_err(
                "reason",
                "is missing (required when available is false)",
            ));
        }
        None => None,
    };
    let description = string_field(&mut obj, "description", what, n)?;
    Ok(MethodInfo {
        method,
        kind,
        available,
        reason,
        description,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::path::PathBuf;

    fn vectors(dir: &str) -> Vec<(String, Vec<u8>)> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../spec/vectors")
            .join(dir);
        let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.is_file())
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&p).expect("readable vector"))
            })
            .collect();
        out.sort();
        out
    }

    fn load(dir: &str, name: &str) -> Vec<u8> {
        vectors(dir)
            .into_iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("vector {dir}/{name} is missing"))
            .1
    }

    #[test]
    fn every_valid_vector_parses() {
        let all = vectors("valid");
        assert!(all.len() >= 4, "{} valid vectors", all.len());
        for (name, bytes) in all {
            if let Err(e) = parse_output(&bytes) {
                panic!("valid/{name} was rejected: {e}");
            }
        }
    }

    #[test]
    fn every_invalid_vector_is_rejected() {
        let all = vectors("invalid");
        assert!(all.len() >= 20, "{} invalid vectors", all.len());
        for (name, bytes) in all {
            match parse_output(&bytes) {
                Ok(out) => panic!("invalid/{name} was accepted: {out:?}"),
                Err(e) => {
                    assert!(e.line >= 1, "{name}: {e}");
                    // Neither entry point accepts it.
                    assert!(parse_list(&bytes).is_err(), "{name} accepted as a list");
                    assert!(
                        parse_measurement(&bytes).is_err(),
                        "{name} accepted as a measurement"
                    );
                }
            }
        }
    }

    #[test]
    fn list_vector_exact() {
        let l = parse_list(&load("valid", "list.txt")).unwrap();
        assert_eq!(l.header.runtime, "python");
        assert_eq!(l.header.implementation, "CPython");
        assert_eq!(l.header.runtime_version, "3.11.7");
        assert_eq!(l.header.clock, "time.perf_counter_ns");
        assert_eq!(l.header.platform, "linux x86_64");
        assert_eq!(l.header.method, None);
        assert!(l.header.extra.is_empty());
        let names: Vec<(&str, Kind, bool)> = l
            .methods
            .iter()
            .map(|m| (m.method.as_str(), m.kind, m.available))
            .collect();
        assert_eq!(
            names,
            [
                ("time.sleep", Kind::Oneshot, true),
                ("os.sched_yield", Kind::Yield, true),
                ("threading.Timer", Kind::Periodic, false),
            ]
        );
        assert_eq!(l.methods[2].reason.as_deref(), Some("not on this runtime"));
        assert_eq!(
            l.methods[0].description,
            "time.sleep(seconds) with a float argument"
        );
        assert_eq!(l.methods[0].reason, None);
    }

    #[test]
    fn oneshot_vector_exact() {
        let m = parse_measurement(&load("valid", "oneshot_two_cells.txt")).unwrap();
        assert_eq!(m.method, "time.sleep");
        assert_eq!(m.mode, Mode::Oneshot);
        assert_eq!(m.cells.len(), 2);
        assert_eq!(m.cells[0].value_ns, 1_000_000);
        assert_eq!(m.cells[0].warmup, [1_071_234]);
        assert_eq!(m.cells[0].samples, [1_065_432, 1_071_111]);
        assert_eq!(m.cells[0].line, 2);
        assert_eq!(m.cells[1].value_ns, 100_000);
        assert!(m.cells[1].warmup.is_empty());
        assert_eq!(m.cells[1].samples, [160_123]);
        assert!(m.trailing_comments.is_empty());
    }

    #[test]
    fn periodic_vector_exact() {
        let m = parse_measurement(&load("valid", "periodic.txt")).unwrap();
        assert_eq!(m.method, "time.Ticker");
        assert_eq!(m.mode, Mode::Periodic);
        assert_eq!(m.header.runtime, "go");
        assert_eq!(m.cells.len(), 1);
        assert_eq!(m.cells[0].value_ns, 10_000_000);
        assert_eq!(m.cells[0].warmup, [10_050_000]);
        assert_eq!(m.cells[0].samples, [20_061_000, 30_049_000, 40_102_000]);
    }

    #[test]
    fn crlf_comment_extra_vector_exact() {
        let m = parse_measurement(&load("valid", "crlf_comment_extra_field.txt")).unwrap();
        assert_eq!(m.header.extra.get("extra"), Some(&Value::from(1)));
        assert_eq!(m.header.runtime_version, "12.2.0");
        assert_eq!(m.cells.len(), 1);
        assert_eq!(m.cells[0].samples, [0, u64::MAX]);
        assert_eq!(
            m.cells[0].comments,
            [Comment {
                line: 2,
                text: "a comment line".into()
            }]
        );
    }

    #[test]
    fn errors_name_the_line() {
        let cases: [(&str, usize, &str); 8] = [
            ("", 1, "no output"),
            (
                "{\"protocol\":\"sleeplab-probe/1\"}\n",
                1,
                "\"runtime\" is missing",
            ),
            (
                &load_str("invalid", "count_mismatch.txt"),
                4,
                "says 2 samples but the cell has 1",
            ),
            (&load_str("invalid", "blank_line.txt"), 3, "blank line"),
            (&load_str("invalid", "missing_end.txt"), 5, "missing `end`"),
            (&load_str("invalid", "data_after_end.txt"), 6, "after `end`"),
            (&load_str("invalid", "negative_sample.txt"), 3, "\"-5\""),
            (
                &load_str("invalid", "periodic_decreasing.txt"),
                4,
                "before the previous one",
            ),
        ];
        for (input, line, needle) in cases {
            let e = parse_output(input.as_bytes()).unwrap_err();
            assert_eq!(e.line, line, "{e}");
            assert!(e.to_string().contains(needle), "{e} lacks {needle:?}");
            assert!(e.to_string().starts_with(&format!("line {line}: ")), "{e}");
        }
    }

    fn load_str(dir: &str, name: &str) -> String {
        String::from_utf8(load(dir, name)).unwrap()
    }

    const HEAD: &str = "{\"protocol\":\"sleeplab-probe/1\",\"runtime\":\"c\",\"implementation\":\"gcc\",\"runtime_version\":\"12\",\"clock\":\"m\",\"platform\":\"linux\",\"method\":\"m\",\"mode\":\"oneshot\"}\n";

    #[test]
    fn comments_attach_to_the_next_or_current_cell() {
        let text = format!(
            "{HEAD}# before\ncell 5\n#\n# inside\ns 6\ndone 5 1\n# between\ncell 7\ns 8\ndone 7 1\n# after\nend\n"
        );
        let m = parse_measurement(text.as_bytes()).unwrap();
        let texts = |c: &[Comment]| c.iter().map(|c| c.text.clone()).collect::<Vec<_>>();
        assert_eq!(texts(&m.cells[0].comments), ["before", "", "inside"]);
        assert_eq!(texts(&m.cells[1].comments), ["between"]);
        assert_eq!(texts(&m.trailing_comments), ["after"]);
    }

    #[test]
    fn list_and_measurement_are_not_confused() {
        let list = load("valid", "list.txt");
        assert!(parse_measurement(&list).is_err());
        let meas = load("valid", "periodic.txt");
        let e = parse_list(&meas).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::WrongOutputKind(_)), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn never_panics_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = parse_output(&bytes);
            let _ = parse_list(&bytes);
            let _ = parse_measurement(&bytes);
        }

        #[test]
        fn never_panics_on_plausible_lines(
            header in prop_oneof![
                Just(HEAD.trim_end().to_string()),
                Just(HEAD.trim_end().replace("oneshot", "periodic")),
                Just("{\"protocol\":\"sleeplab-probe/1\",\"runtime\":\"c\",\"implementation\":\"gcc\",\"runtime_version\":\"12\",\"clock\":\"m\",\"platform\":\"linux\"}".to_string()),
                "\\PC{0,40}",
            ],
            body in proptest::collection::vec(
                prop_oneof![
                    (prop_oneof![Just("cell"), Just("w"), Just("s"), Just("t"), Just("done"), Just("x")],
                     proptest::collection::vec(prop_oneof![Just("0".to_string()), Just("18446744073709551616".to_string()), "[0-9]{1,20}", "\\PC{0,4}"], 0..3))
                        .prop_map(|(t, f)| if f.is_empty() { t.to_string() } else { format!("{t} {}", f.join(" ")) }),
                    Just("end".to_string()),
                    Just(String::new()),
                    "# \\PC{0,10}",
                    Just("{\"method\":\"a\",\"kind\":\"oneshot\",\"available\":false,\"description\":\"d\"}".to_string()),
                    "\\PC{0,30}",
                ],
                0..30),
            crlf in any::<bool>(),
            final_newline in any::<bool>(),
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut text = header;
            for l in &body {
                text.push_str(eol);
                text.push_str(l);
            }
            if final_newline {
                text.push_str(eol);
            }
            let _ = parse_output(text.as_bytes());
            let _ = parse_list(text.as_bytes());
            let _ = parse_measurement(text.as_bytes());
        }

        /// Well-formed output built from random cells always parses back to those cells.
        #[test]
        fn round_trips(cells in proptest::collection::vec(
            (any::<u64>(), proptest::collection::vec(any::<u64>(), 0..4), proptest::collection::vec(any::<u64>(), 0..6)),
            0..5))
        {
            let mut text = HEAD.to_string();
            for (v, w, s) in &cells {
                text.push_str(&format!("cell {v}\n"));
                for x in w { text.push_str(&format!("w {x}\n")); }
                for x in s { text.push_str(&format!("s {x}\n")); }
                text.push_str(&format!("done {v} {}\n", s.len()));
            }
            text.push_str("end\n");
            let m = parse_measurement(text.as_bytes()).unwrap();
            prop_assert_eq!(m.cells.len(), cells.len());
            for (c, (v, w, s)) in m.cells.iter().zip(&cells) {
                prop_assert_eq!(c.value_ns, *v);
                prop_assert_eq!(&c.warmup, w);
                prop_assert_eq!(&c.samples, s);
            }
        }
    }
}
