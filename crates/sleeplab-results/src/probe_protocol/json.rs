//! The JSON lines of probe output: the header and the `--list` method entries.

use super::error::{ErrorKind, ProtocolError};
use super::lines::excerpt;
use super::{Header, Kind, MethodInfo, Mode, PROTOCOL};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Parses a line as a JSON object.
pub(super) fn json_object(
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
pub(super) fn string_field(
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
pub(super) fn header(line: &str, measurement: bool) -> Result<Header, ProtocolError> {
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
        tid: None,
        timestamps: false,
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
    let field_err = |field: &str, problem: &str| ProtocolError {
        line: 1,
        kind: ErrorKind::Field {
            what,
            field: field.into(),
            problem: problem.into(),
        },
    };
    let (tid, timestamps) = (obj.remove("tid"), obj.remove("timestamps"));
    if !measurement && (tid.is_some() || timestamps.is_some()) {
        return Err(ProtocolError {
            line: 1,
            kind: ErrorKind::WrongOutputKind(
                "the --list header must not have `tid` or `timestamps` (they describe a measurement)"
                    .into(),
            ),
        });
    }
    if let Some(t) = tid {
        let tid = t
            .as_u64()
            .filter(|t| (1..=i32::MAX as u64).contains(t))
            .ok_or_else(|| field_err("tid", "must be a positive integer below 2^31"))?;
        h.tid = Some(tid as u32);
    }
    h.timestamps = match timestamps {
        None => false,
        Some(Value::Bool(b)) => b,
        Some(_) => return Err(field_err("timestamps", "must be true or false")),
    };
    if let Some(options) = obj.get("options") {
        let strings = options
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_string));
        if !strings {
            return Err(field_err("options", "must be an array of strings"));
        }
    }
    h.extra = obj.into_iter().collect();
    Ok(h)
}

/// Parses and checks one method entry of a `--list` output.
pub(super) fn method_entry(line: &str, n: usize) -> Result<MethodInfo, ProtocolError> {
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
