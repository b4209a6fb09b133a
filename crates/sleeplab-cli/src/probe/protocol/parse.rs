//! The line grammar: `--list` output and measurement output, strictly; and what a
//! probe stopped midway had printed.

use super::error::{ErrorKind, ProtocolError};
use super::json::{header, json_object, method_entry};
use super::lines::{Lines, excerpt, fields};
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
