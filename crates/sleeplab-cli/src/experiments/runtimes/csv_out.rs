//! The runtimes experiment's raw samples as long-form CSV: one row per sample (warm-up
//! calls included, flagged), loadable with `pandas.read_csv` as is.
//!
//! One-shot rows have `elapsed_ns`; periodic rows have the tick's `arrival_ns` since t0,
//! its `due_ns` (k·P), `lateness_ns` (arrival − due) and `elapsed_ns` (the interval since
//! the previous tick). `early` is elapsed < requested for one-shot rows and arrival < due
//! for periodic rows.

use super::{MethodResult, RuntimeResult, RuntimesData};
use serde::Serialize;
use sleeplab_stats::atomic_write;
use std::path::Path;

/// The columns, in order. Within one `schema_version` columns are only ever added.
pub const CSV_COLUMNS: [&str; 18] = [
    "runtime",
    "implementation",
    "runtime_version",
    "method",
    "kind",
    "load",
    "timer_slack_ns",
    "requested_ns",
    "index",
    "warmup",
    "elapsed_ns",
    "overshoot_ns",
    "arrival_ns",
    "due_ns",
    "lateness_ns",
    "early",
    "schema_version",
    "partial",
];

#[derive(Serialize)]
struct Row<'a> {
    runtime: &'a str,
    implementation: &'a str,
    runtime_version: &'a str,
    method: &'a str,
    kind: &'a str,
    load: usize,
    timer_slack_ns: Option<u64>,
    requested_ns: u64,
    index: u64,
    warmup: bool,
    elapsed_ns: u64,
    overshoot_ns: i128,
    arrival_ns: Option<u64>,
    due_ns: Option<u128>,
    lateness_ns: Option<i128>,
    early: bool,
    schema_version: u32,
    /// The probe was stopped midway: this row is from one of the cells it finished.
    partial: bool,
}

/// Writes every sample of every measured method.
pub fn write_csv(path: &Path, data: &RuntimesData) -> anyhow::Result<()> {
    atomic_write(path, &to_csv(data)?)
}

/// The CSV as bytes.
pub fn to_csv(data: &RuntimesData) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    // The header is written even when there are no rows, so pandas always gets columns.
    w.write_record(CSV_COLUMNS)?;
    for r in &data.runtimes {
        for m in &r.methods {
            write_method(&mut w, r, m)?;
        }
    }
    w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))
}

fn write_method(
    w: &mut csv::Writer<Vec<u8>>,
    r: &RuntimeResult,
    m: &MethodResult,
) -> anyhow::Result<()> {
    let base = |requested_ns: u64, index: u64, warmup: bool, elapsed_ns: u64| Row {
        runtime: &r.id,
        implementation: r.implementation.as_deref().unwrap_or(""),
        runtime_version: r.version.as_deref().unwrap_or(""),
        method: &m.method,
        kind: m.kind.as_str(),
        load: m.load,
        timer_slack_ns: m.timer_slack_ns,
        requested_ns,
        index,
        warmup,
        elapsed_ns,
        overshoot_ns: i128::from(elapsed_ns) - i128::from(requested_ns),
        arrival_ns: None,
        due_ns: None,
        lateness_ns: None,
        early: elapsed_ns < requested_ns,
        schema_version: crate::experiments::SCHEMA_VERSION,
        partial: m.partial.is_some(),
    };
    for c in &m.cells {
        for (i, &e) in c.warmup_ns.iter().enumerate() {
            w.serialize(base(c.requested_ns, i as u64, true, e))?;
        }
        for (i, &e) in c.all_samples_ns.iter().enumerate() {
            w.serialize(base(c.requested_ns, i as u64, false, e))?;
        }
    }
    if let Some(p) = &m.periodic {
        let ticks = p
            .warmup_ns
            .iter()
            .map(|&a| (true, a))
            .chain(p.all_arrivals_ns.iter().map(|&a| (false, a)));
        let mut prev = 0u64;
        let mut index = 0u64;
        for (k, (warmup, arrival)) in ticks.enumerate() {
            if k == p.warmup_ns.len() {
                index = 0;
            }
            let due = (k as u128 + 1) * u128::from(p.period_ns);
            let lateness = i128::from(arrival) - due as i128;
            let interval = arrival.saturating_sub(prev);
            prev = arrival;
            let mut row = base(p.period_ns, index, warmup, interval);
            row.arrival_ns = Some(arrival);
            row.due_ns = Some(due);
            row.lateness_ns = Some(lateness);
            row.early = lateness < 0;
            w.serialize(row)?;
            index += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::runtimes::{
        OneshotCell, PartialRun, PeriodicCell, ProbeQuota, RuntimeStatus, RuntimesConfig,
        periodic_stats,
    };
    use crate::probe::observe::InForce;
    use crate::probe::protocol::Kind;
    use sleeplab_stats::summarize;

    fn data() -> RuntimesData {
        let method = |name: &str, kind| MethodResult::new(name, kind, "", 0, Some(1));
        let mut sleep = method("sleep", Kind::Oneshot);
        sleep.cells.push(OneshotCell {
            requested_ns: 100,
            summary: summarize(&[90, 130], 100),
            warmup_ns: vec![500],
            samples_ns: vec![90, 130],
            all_samples_ns: vec![90, 130],
            notes: vec![],
            explanation: None,
            units: None,
        });
        let mut tick = method("tick", Kind::Periodic);
        let s = periodic_stats(10, &[12], &[19, 31]);
        tick.periodic = Some(PeriodicCell {
            period_ns: 10,
            ticks: 2,
            interval: s.interval,
            lateness: s.lateness,
            warmup_ns: vec![12],
            arrivals_ns: vec![19, 31],
            all_arrivals_ns: vec![19, 31],
            notes: vec![],
            explanation: None,
        });
        RuntimesData {
            config: RuntimesConfig {
                runtimes: vec!["jruby".into()],
                durations_ns: vec![100],
                quota: ProbeQuota::Count { count: 2 },
                warmup: 1,
                period_ns: 10,
                ticks: 2,
                timer_slacks_ns: vec![1],
                json_samples: 10,
                output_cap_bytes: 1,
                startup_timeout_ns: 1,
                ..RuntimesConfig::default()
            },
            runtimes: vec![RuntimeResult {
                id: "jruby".into(),
                title: "JRuby".into(),
                status: RuntimeStatus::Measured,
                runtime: Some("ruby".into()),
                implementation: Some("JRuby".into()),
                version: Some("9.3, \"quoted\"".into()),
                platform: None,
                clock: None,
                header_extra: Default::default(),
                command: vec![],
                prepared: None,
                methods: vec![sleep, tick],
                unavailable: vec![],
                listed: vec![],
            }],
            tracing: None,
        }
    }

    #[test]
    fn one_row_per_sample_with_early_flags() {
        let bytes = to_csv(&data()).unwrap();
        let mut r = csv::Reader::from_reader(bytes.as_slice());
        assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), CSV_COLUMNS);
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 3 + 3);
        let col = |row: &csv::StringRecord, name: &str| {
            row[CSV_COLUMNS.iter().position(|c| *c == name).unwrap()].to_string()
        };
        assert_eq!(col(&rows[0], "warmup"), "true");
        assert_eq!(col(&rows[1], "elapsed_ns"), "90");
        assert_eq!(col(&rows[1], "early"), "true");
        assert_eq!(col(&rows[1], "overshoot_ns"), "-10");
        assert_eq!(col(&rows[2], "early"), "false");
        assert_eq!(col(&rows[2], "runtime_version"), "9.3, \"quoted\"");
        assert_eq!(col(&rows[1], "arrival_ns"), "");
        // Periodic: warm-up tick 1 at 12 (due 10), ticks 2, 3 at 19, 31 (due 20, 30).
        assert_eq!(col(&rows[3], "due_ns"), "10");
        assert_eq!(col(&rows[4], "lateness_ns"), "-1");
        assert_eq!(col(&rows[4], "early"), "true");
        assert_eq!(col(&rows[4], "elapsed_ns"), "7");
        assert_eq!(col(&rows[4], "index"), "0");
        assert_eq!(col(&rows[5], "lateness_ns"), "1");
        assert_eq!(col(&rows[5], "index"), "1");
        assert_eq!(col(&rows[5], "timer_slack_ns"), "1");
        assert!(rows.iter().all(|r| col(r, "partial") == "false"));
        // A probe stopped midway: the rows of its finished cells are marked.
        let mut d = data();
        d.runtimes[0].methods[0].partial = Some(PartialRun {
            reason: "interrupted (Ctrl-C), killed".into(),
            cells_kept: 1,
            cells_asked: 2,
        });
        let bytes = to_csv(&d).unwrap();
        let mut r = csv::Reader::from_reader(bytes.as_slice());
        let partial: Vec<String> = r
            .records()
            .map(|row| col(&row.unwrap(), "partial"))
            .collect();
        assert_eq!(partial, ["true", "true", "true", "false", "false", "false"]);
    }

    #[test]
    fn the_render_shows_early_returns_prominently() {
        let mut d = data();
        let text = crate::experiments::runtimes::render(&d, sleeplab_account::Machine::Host);
        assert!(text.contains("1 !"), "{text}");
        assert!(
            !text.contains("PARTIAL") && !text.contains("in force"),
            "{text}"
        );
        // A partial run and what was in force are spelled out.
        let m = &mut d.runtimes[0].methods[0];
        m.partial = Some(PartialRun {
            reason: "hung: no exit within 3 s, killed".into(),
            cells_kept: 1,
            cells_asked: 2,
        });
        m.in_force = Some(InForce {
            policy: Some("fifo".into()),
            priority: Some(3),
            locked_kib: Some(12),
            ..InForce::default()
        });
        let text = crate::experiments::runtimes::render(&d, sleeplab_account::Machine::Host);
        assert!(
            text.contains(
                "  sleep: PARTIAL: 1 of 2 cells kept (stopped: hung: no exit within 3 s, killed)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("  in force for the probe: fifo 3, 12 KiB locked\n"),
            "{text}"
        );
        d.runtimes[0].methods[1].in_force = Some(InForce {
            policy: Some("other".into()),
            ..InForce::default()
        });
        let text = crate::experiments::runtimes::render(&d, sleeplab_account::Machine::Host);
        assert!(
            text.contains("  in force for sleep: fifo 3, 12 KiB locked\n"),
            "{text}"
        );
        assert!(text.contains("  in force for tick: other\n"), "{text}");
        let early = crate::experiments::runtimes::early_returns(&d);
        assert_eq!(early.len(), 2, "{early:?}");
        assert!(
            early[0].starts_with("JRuby sleep @ 100 ns: 1 of 2"),
            "{early:?}"
        );
        assert!(
            early[1].contains("1 of 2 ticks before their due time"),
            "{early:?}"
        );
    }
}
