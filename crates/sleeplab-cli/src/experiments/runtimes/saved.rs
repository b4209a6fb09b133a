//! Saved probe outputs: a probe run elsewhere (a real Windows machine, where sleeplab
//! cannot launch it) and its stdout saved to a file. Each file is parsed with the same
//! strict parser and summarised the same way as a launched probe's output; the files of
//! one runtime (same header runtime, implementation, version and platform) become one
//! runtime of the result. A saved `--list` output adds the methods' descriptions.

use super::measure::fill_cells;
use super::{MethodResult, RuntimeResult, RuntimeStatus, UnavailableMethod};
use crate::error::UsageError;
use crate::probe::catalog::RuntimeId;
use crate::probe::protocol::{self, Header, Kind, MethodInfo, Mode, Output};

/// One runtime's saved files, as they are gathered.
struct Group {
    header: Header,
    files: Vec<String>,
    listed: Vec<MethodInfo>,
    methods: Vec<MethodResult>,
}

fn same_runtime(a: &Header, b: &Header) -> bool {
    a.runtime == b.runtime
        && a.implementation == b.implementation
        && a.runtime_version == b.runtime_version
        && a.platform == b.platform
}

/// Turns saved probe outputs `(file name, bytes)` into runtimes. A file that breaks the
/// protocol is a usage error naming the file and the line.
pub fn saved_runtimes(
    files: &[(String, Vec<u8>)],
    json_samples: usize,
) -> Result<Vec<RuntimeResult>, UsageError> {
    let mut groups: Vec<Group> = Vec::new();
    for (name, bytes) in files {
        let out = protocol::parse_output(bytes)
            .map_err(|e| UsageError::new(format!("saved probe output {name}: {e}")))?;
        let header = match &out {
            Output::List(l) => &l.header,
            Output::Measurement(m) => &m.header,
        };
        let gi = match groups.iter().position(|g| same_runtime(&g.header, header)) {
            Some(i) => i,
            None => {
                let mut h = header.clone();
                h.method = None;
                h.mode = None;
                groups.push(Group {
                    header: h,
                    files: Vec::new(),
                    listed: Vec::new(),
                    methods: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let g = &mut groups[gi];
        g.files.push(name.clone());
        match out {
            Output::List(l) => g.listed = l.methods,
            Output::Measurement(m) => {
                let kind = if m.mode == Mode::Periodic {
                    Kind::Periodic
                } else {
                    Kind::Oneshot
                };
                let mut res = MethodResult {
                    probe_timer_slack_ns: m
                        .header
                        .extra
                        .get("timerslack_ns")
                        .and_then(|v| v.as_u64()),
                    notes: vec![format!("saved output {name}")],
                    ..MethodResult::new(m.method.clone(), kind, "", 0, None)
                };
                fill_cells(&mut res, m, json_samples, None);
                g.methods.push(res);
            }
        }
    }
    let mut out: Vec<RuntimeResult> = Vec::new();
    for mut g in groups {
        let h = g.header;
        for m in &mut g.methods {
            if let Some(info) = g.listed.iter().find(|i| i.method == m.method) {
                m.description = info.description.clone();
                if info.kind == Kind::Yield {
                    m.kind = Kind::Yield;
                }
            }
        }
        let base = format!("saved-{}", h.runtime);
        let taken = out.iter().filter(|r| r.id.starts_with(&base)).count();
        let id = if taken == 0 {
            base
        } else {
            format!("{base}-{}", taken + 1)
        };
        let title = RuntimeId::parse(&h.runtime)
            .map_or_else(|| h.runtime.clone(), |r| r.title().to_string());
        out.push(RuntimeResult {
            id,
            title: format!("{title} (saved, {})", h.platform),
            status: RuntimeStatus::Measured,
            runtime: Some(h.runtime.clone()),
            implementation: Some(h.implementation.clone()),
            version: Some(h.runtime_version.clone()),
            platform: Some(h.platform.clone()),
            clock: Some(h.clock.clone()),
            header_extra: h.extra.clone(),
            command: vec![],
            prepared: Some(format!("saved output: {}", g.files.join(", "))),
            unavailable: g
                .listed
                .iter()
                .filter(|m| !m.available)
                .map(|m| UnavailableMethod {
                    method: m.method.clone(),
                    kind: m.kind,
                    reason: m.reason.clone().unwrap_or_default(),
                })
                .collect(),
            listed: g.listed,
            methods: g.methods,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(path: &str) -> (String, Vec<u8>) {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../spec/vectors")
            .join(path);
        (path.to_string(), std::fs::read(p).unwrap())
    }

    #[test]
    fn saved_files_become_runtimes() {
        let files = [
            vector("valid/oneshot_two_cells.txt"),
            vector("valid/periodic.txt"),
            vector("valid/list.txt"),
        ];
        let rts = saved_runtimes(&files, 1).unwrap();
        assert_eq!(rts.len(), 2);
        let py = &rts[0];
        assert_eq!(py.id, "saved-python");
        assert_eq!(py.title, "Python (saved, linux x86_64)");
        assert_eq!(py.methods.len(), 1);
        let m = &py.methods[0];
        assert_eq!(m.description, "time.sleep(seconds) with a float argument");
        assert_eq!(m.cells.len(), 2);
        assert_eq!(m.cells[0].summary.count, 2);
        assert_eq!(m.cells[0].samples_ns.len(), 1, "JSON cap");
        assert_eq!(m.cells[0].all_samples_ns.len(), 2);
        assert_eq!(py.unavailable.len(), 1);
        let go = &rts[1];
        assert_eq!(go.id, "saved-go");
        let p = go.methods[0].periodic.as_ref().unwrap();
        assert_eq!((p.period_ns, p.ticks), (10_000_000, 3));
    }

    #[test]
    fn a_broken_file_names_itself_and_the_line() {
        let e = saved_runtimes(&[vector("invalid/count_mismatch.txt")], 10).unwrap_err();
        assert!(
            e.0.starts_with("saved probe output invalid/count_mismatch.txt: line 4:"),
            "{e}"
        );
    }
}
