//! The input as numbered lines, and the numbers and fields on them.

use super::EXCERPT;
use super::error::{ErrorKind, ProtocolError};

/// The input as lines: split on `\n`, one trailing `\r` removed, UTF-8 checked.
pub(super) struct Lines<'a> {
    rest: &'a [u8],
    /// Number of the last line returned.
    pub(super) line: usize,
}

impl<'a> Lines<'a> {
    pub(super) fn new(input: &'a [u8]) -> Self {
        Self {
            rest: input,
            line: 0,
        }
    }

    /// The first line without consuming anything (for dispatch).
    pub(super) fn first(&self) -> Result<&'a str, ProtocolError> {
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
    pub(super) fn next_line(&mut self) -> Result<Option<(usize, &'a str)>, ProtocolError> {
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
    pub(super) fn expect_eof(&self) -> Result<(), ProtocolError> {
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
pub(super) fn excerpt(line: &str) -> String {
    match line.char_indices().nth(EXCERPT) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

/// Parses the `N` space-separated numbers after a line type.
pub(super) fn fields<const N: usize>(
    line_type: &'static str,
    rest: &str,
    line: &str,
    n: usize,
) -> Result<[u64; N], ProtocolError> {
    let parts: Vec<&str> = split(rest);
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

/// The space-separated fields after a line type (none when there is nothing after it).
fn split(rest: &str) -> Vec<&str> {
    if rest.is_empty() {
        Vec::new()
    } else {
        rest.split(' ').collect()
    }
}

/// How many space-separated fields follow a line type.
pub(super) fn field_count(rest: &str) -> usize {
    split(rest).len()
}

/// A non-negative decimal integer that fits in 64 bits: ASCII digits only.
pub(super) fn number(text: &str) -> Result<u64, &'static str> {
    if text.is_empty() {
        return Err("empty (two spaces in a row, or a trailing space)");
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err("not a non-negative decimal integer");
    }
    text.parse()
        .map_err(|_| "does not fit in an unsigned 64-bit integer")
}
