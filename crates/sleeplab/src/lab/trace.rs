//! Native-oversleep traces: for each wait of a recorded frame loop, the native sleep that
//! was asked for and how late it woke. The input of the oracle and of
//! the replay that tunes the margin estimator reproducibly.

use std::fmt::Write as _;

/// The first words of a trace's header line.
pub const TRACE_MAGIC: &str = "# sleeplab oversleep trace v1";
/// The CSV header of a trace's rows.
pub const TRACE_COLUMNS: &str = "requested_ns,oversleep_ns";

/// One recorded wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceWait {
    /// The native sleep asked for: its absolute target − the clock read before the call, ns.
    pub requested_ns: u64,
    /// How late it woke: wake − target, ns.
    pub oversleep_ns: u64,
}

/// A recorded trace: its conditions (the header's `key=value` fields, in order) and its
/// waits.
///
/// The text format (written by the `record_trace` example, read by [`Trace::parse`]):
///
/// ```text
/// # sleeplab oversleep trace v1; rate_hz=60; busy_threads=2; conditions=quiet machine
/// requested_ns,oversleep_ns
/// 16666230,81211
/// 16585379,97340
/// ```
///
/// The first line names the format and carries the recording's conditions as
/// `key=value` fields separated by `;` (values are free text without `;`). Then a CSV
/// header and one row per wait: `requested_ns` is the native sleep's length (target −
/// the clock read just before the call), `oversleep_ns` its wake − target.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Trace {
    /// The header's fields, in order.
    pub fields: Vec<(String, String)>,
    /// The waits, in recording order.
    pub waits: Vec<TraceWait>,
}

/// Why a trace could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// The first line is not a trace header.
    #[error("not a sleeplab oversleep trace: the first line must start with `{TRACE_MAGIC}`")]
    MissingHeader,
    /// A header field without `=`.
    #[error("trace header field `{0}` is not `key=value`")]
    BadField(String),
    /// The CSV header is missing or different.
    #[error("trace line 2 must be `{TRACE_COLUMNS}`, found `{0}`")]
    BadColumns(String),
    /// A row that is not two unsigned integers.
    #[error("trace line {line}: `{text}` is not `requested_ns,oversleep_ns`")]
    BadRow {
        /// 1-based line number.
        line: usize,
        /// The line as found.
        text: String,
    },
    /// A trace without a single wait.
    #[error("the trace holds no waits")]
    Empty,
}

impl Trace {
    /// A trace of `waits` with the given header fields.
    pub fn new(fields: Vec<(String, String)>, waits: Vec<TraceWait>) -> Self {
        Self { fields, waits }
    }

    /// A trace from `(requested_ns, oversleep_ns)` pairs, without header fields.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (u64, u64)>) -> Self {
        let waits = pairs
            .into_iter()
            .map(|(requested_ns, oversleep_ns)| TraceWait {
                requested_ns,
                oversleep_ns,
            })
            .collect();
        Self::new(Vec::new(), waits)
    }

    /// Reads a trace from its text form (see the [type docs](Self)). Blank lines are
    /// skipped; keys and values are trimmed.
    pub fn parse(text: &str) -> Result<Self, TraceError> {
        let mut lines = text.lines().enumerate();
        let header = lines
            .next()
            .and_then(|(_, l)| l.strip_prefix(TRACE_MAGIC))
            .ok_or(TraceError::MissingHeader)?;
        let mut fields = Vec::new();
        for field in header.split(';').map(str::trim).filter(|f| !f.is_empty()) {
            let (k, v) = field
                .split_once('=')
                .ok_or_else(|| TraceError::BadField(field.to_owned()))?;
            fields.push((k.trim().to_owned(), v.trim().to_owned()));
        }
        let columns = lines.next().map_or("", |(_, l)| l.trim());
        if columns != TRACE_COLUMNS {
            return Err(TraceError::BadColumns(columns.to_owned()));
        }
        let mut waits = Vec::new();
        for (i, line) in lines {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let bad = || TraceError::BadRow {
                line: i + 1,
                text: line.to_owned(),
            };
            let (r, o) = line.split_once(',').ok_or_else(bad)?;
            let requested_ns = r.trim().parse().map_err(|_| bad())?;
            let oversleep_ns = o.trim().parse().map_err(|_| bad())?;
            waits.push(TraceWait {
                requested_ns,
                oversleep_ns,
            });
        }
        if waits.is_empty() {
            return Err(TraceError::Empty);
        }
        Ok(Self { fields, waits })
    }

    /// The text form, which [`parse`](Self::parse) reads back. `;`, `=` and line breaks
    /// in field keys and values are replaced so the header stays one parseable line.
    pub fn to_text(&self) -> String {
        let clean = |s: &str, extra: char| s.replace([';', '\n', '\r', extra], " ");
        let mut out = String::from(TRACE_MAGIC);
        for (k, v) in &self.fields {
            let _ = write!(out, "; {}={}", clean(k, '='), clean(v, '\0'));
        }
        out.push('\n');
        out.push_str(TRACE_COLUMNS);
        out.push('\n');
        for w in &self.waits {
            let _ = writeln!(out, "{},{}", w.requested_ns, w.oversleep_ns);
        }
        out
    }

    /// The value of header field `key`, if present (the first one).
    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Number of waits.
    pub fn len(&self) -> usize {
        self.waits.len()
    }

    /// Whether the trace holds no waits.
    pub fn is_empty(&self) -> bool {
        self.waits.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_reads_fields() {
        let mut t = Trace::from_pairs([(16_000_000, 80_000), (15_900_000, 3_000_000)]);
        t.fields = vec![
            ("rate_hz".into(), "60".into()),
            ("conditions".into(), "busy; noisy=yes".into()),
        ];
        let text = t.to_text();
        assert!(text.starts_with(
            "# sleeplab oversleep trace v1; rate_hz=60; conditions=busy  noisy=yes\n"
        ));
        let back = Trace::parse(&text).unwrap();
        assert_eq!(back.waits, t.waits);
        assert_eq!(back.field("rate_hz"), Some("60"));
        assert_eq!(back.field("conditions"), Some("busy  noisy=yes"));
        assert_eq!(back.field("nope"), None);
        assert_eq!((back.len(), back.is_empty()), (2, false));
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        let head = format!("{TRACE_MAGIC}; a=1\n{TRACE_COLUMNS}\n");
        assert_eq!(Trace::parse(""), Err(TraceError::MissingHeader));
        assert_eq!(Trace::parse("x\n"), Err(TraceError::MissingHeader));
        assert_eq!(
            Trace::parse(&format!("{TRACE_MAGIC}; a\n")),
            Err(TraceError::BadField("a".into()))
        );
        assert_eq!(
            Trace::parse(&format!("{TRACE_MAGIC}\nx,y\n")),
            Err(TraceError::BadColumns("x,y".into()))
        );
        assert_eq!(Trace::parse(&head), Err(TraceError::Empty));
        let err = Trace::parse(&format!("{head}1,2\n\n3,-4\n")).unwrap_err();
        assert_eq!(
            err,
            TraceError::BadRow {
                line: 5,
                text: "3,-4".into()
            }
        );
        assert_eq!(
            err.to_string(),
            "trace line 5: `3,-4` is not `requested_ns,oversleep_ns`"
        );
        assert!(Trace::parse(&format!("{head}7\n")).is_err());
    }
}
