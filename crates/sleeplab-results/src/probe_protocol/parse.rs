//! The line grammar: `--list` output and measurement output, strictly; and what a
//! probe stopped midway had printed.

use super::error::{ErrorKind, ProtocolError};
use super::json::{header, json_object, method_entry};
use super::lines::{Lines, excerpt, field_count, fields};
use super::{Cell, Comment, Header, ListOutput, Measurement, MethodInfo, Mode, Output};

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

/// Reads and checks the first line: the header (of measurement output or not).
fn first_header(lines: &mut Lines<'_>, measurement: bool) -> Result<Header, ProtocolError> {
    let (_, first) = lines.next_line()?.ok_or(ProtocolError {
        line: 1,
        kind: ErrorKind::Empty,
    })?;
    header(first, measurement)
}

/// Parses the output of `probe --list`.
pub fn parse_list(input: &[u8]) -> Result<ListOutput, ProtocolError> {
    let mut lines = Lines::new(input);
    let header = first_header(&mut lines, false)?;
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
    measurement(input, false).map(|s| s.measurement)
}

/// What a probe stopped midway (killed on a timeout or Ctrl-C) had printed: the cells
/// it finished. Probes print each cell whole once it is measured, so a finished cell is
/// as good as in a complete run.
#[derive(Debug, Clone, PartialEq)]
pub struct Stopped {
    /// The header and the finished cells (no partial one).
    pub measurement: Measurement,
    /// Whether the output reached its `end` line after all (it was whole).
    pub ended: bool,
    /// The `cell` line of the cell that was cut off, if one was.
    pub unfinished_cell: Option<usize>,
}

/// Parses the output of a probe that was stopped midway: everything up to the last
/// complete line must follow the protocol; a missing `end`, a cell without its `done`
/// (dropped) and a last line without its newline (dropped) are allowed.
pub fn parse_stopped(input: &[u8]) -> Result<Stopped, ProtocolError> {
    let whole_lines = input
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(&input[..0], |i| &input[..=i]);
    measurement(whole_lines, true)
}

/// The measurement grammar; `stopped` allows the output to end anywhere between lines.
fn measurement(input: &[u8], stopped: bool) -> Result<Stopped, ProtocolError> {
    let mut lines = Lines::new(input);
    let header = first_header(&mut lines, true)?;
    let (Some(method), Some(mode)) = (header.method.clone(), header.mode) else {
        return Err(ProtocolError {
            line: 1,
            kind: ErrorKind::WrongOutputKind("measurement header needs `method` and `mode`".into()),
        });
    };
    let mut cells: Vec<Cell> = Vec::new();
    let mut open: Option<Cell> = None;
    let mut pending: Vec<Comment> = Vec::new();
    let mut ended = false;
    // The start of the call printed last (timestamps): starts never decrease.
    let mut last_start: Option<u64> = None;
    loop {
        let Some((n, line)) = lines.next_line()? else {
            if stopped {
                break;
            }
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
            ended = true;
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
                let starts = (header.timestamps && mode == Mode::Oneshot).then(Vec::new);
                open = Some(Cell {
                    value_ns: v,
                    warmup: Vec::new(),
                    samples: Vec::new(),
                    warmup_starts_ns: starts.clone(),
                    starts_ns: starts,
                    t0_ns: None,
                    comments: std::mem::take(&mut pending),
                    line: n,
                });
            }
            "t0" => {
                let Some(cell) = open.as_mut() else {
                    return Err(err(ErrorKind::OutsideCell("t0")));
                };
                t0_line(cell, header.timestamps, mode, rest, line, n)?;
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
                if ty != "w" && ty != mode.sample_type() {
                    return Err(err(ErrorKind::WrongSampleType {
                        line_type: ty,
                        mode,
                        expected: mode.sample_type(),
                    }));
                }
                let (v, start) = sample_fields(ty, header.timestamps, mode, rest, line, n)?;
                if ty == "w" && !cell.samples.is_empty() {
                    return Err(err(ErrorKind::WarmupAfterSample));
                }
                if mode == Mode::Periodic {
                    if header.timestamps && cell.t0_ns.is_none() {
                        return Err(err(ErrorKind::MissingT0(cell.line)));
                    }
                    let previous = cell.samples.last().or(cell.warmup.last()).copied();
                    if let Some(previous) = previous.filter(|&p| v < p) {
                        return Err(err(ErrorKind::Decreasing { previous, value: v }));
                    }
                }
                if let Some(start) = start {
                    if let Some(previous) = last_start.filter(|&p| start < p) {
                        return Err(err(ErrorKind::StartDecreasing {
                            previous,
                            value: start,
                        }));
                    }
                    last_start = Some(start);
                }
                let (values, starts) = if ty == "w" {
                    (&mut cell.warmup, &mut cell.warmup_starts_ns)
                } else {
                    (&mut cell.samples, &mut cell.starts_ns)
                };
                values.push(v);
                if let (Some(starts), Some(start)) = (starts.as_mut(), start) {
                    starts.push(start);
                }
            }
            "done" => {
                let Some(cell) = open.take() else {
                    return Err(err(ErrorKind::OutsideCell("done")));
                };
                if mode == Mode::Periodic && header.timestamps && cell.t0_ns.is_none() {
                    return Err(err(ErrorKind::MissingT0(cell.line)));
                }
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
    Ok(Stopped {
        measurement: Measurement {
            header,
            method,
            mode,
            cells,
            trailing_comments: pending,
        },
        ended,
        unfinished_cell: open.map(|c| c.line),
    })
}

/// The numbers of a `w`/`s`/`t` line: the value, and with timestamps in one-shot mode
/// the call's start. A start missing where the header promises one, or given where none
/// belongs, is named as such.
fn sample_fields(
    ty: &'static str,
    timestamps: bool,
    mode: Mode,
    rest: &str,
    line: &str,
    n: usize,
) -> Result<(u64, Option<u64>), ProtocolError> {
    let with_start = timestamps && mode == Mode::Oneshot;
    let err = |kind| ProtocolError { line: n, kind };
    match (field_count(rest), with_start) {
        (1, true) => {
            return Err(err(ErrorKind::MissingStart {
                line_type: ty,
                excerpt: excerpt(line),
            }));
        }
        (2, false) => {
            return Err(err(ErrorKind::UnexpectedStart {
                line_type: ty,
                why: if timestamps {
                    "a periodic cell gives its start on its `t0` line"
                } else {
                    "the header does not say \"timestamps\":true"
                },
                excerpt: excerpt(line),
            }));
        }
        _ => {}
    }
    if with_start {
        let [v, start] = fields::<2>(ty, rest, line, n)?;
        Ok((v, Some(start)))
    } else {
        let [v] = fields::<1>(ty, rest, line, n)?;
        Ok((v, None))
    }
}

/// A `t0` line: only in a periodic cell with timestamps, once, before its first tick.
fn t0_line(
    cell: &mut Cell,
    timestamps: bool,
    mode: Mode,
    rest: &str,
    line: &str,
    n: usize,
) -> Result<(), ProtocolError> {
    let misplaced = |why: String| ProtocolError {
        line: n,
        kind: ErrorKind::MisplacedT0(why),
    };
    if mode == Mode::Oneshot {
        return Err(misplaced(
            "in one-shot mode (each call carries its own start)".into(),
        ));
    }
    if !timestamps {
        return Err(misplaced(
            "the header does not say \"timestamps\":true".into(),
        ));
    }
    if cell.t0_ns.is_some() {
        return Err(misplaced(format!(
            "a second one in the cell of line {}",
            cell.line
        )));
    }
    // (After a tick is impossible here: a tick without its t0 already failed.)
    let [t0] = fields::<1>("t0", rest, line, n)?;
    cell.t0_ns = Some(t0);
    Ok(())
}
