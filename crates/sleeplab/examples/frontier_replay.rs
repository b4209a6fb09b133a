//! Replays recorded oversleep traces through precise-sleep strategies in virtual time and
//! prints each one's p99, p99.9 and CPU next to the oracle (the best fixed margin in
//! hindsight) at the same CPU. Deterministic: the numbers depend only on the traces.
//!
//! ```text
//! cargo run -p sleeplab --release --example frontier_replay -- TRACE.csv... [-s SETTING]...
//! ```
//! `SETTING` is a contender setting (`precise:q=0.999`, `seed-hybrid:x=2`,
//! `fixed-margin:250us`; see `ContenderSetting`); default `precise`. Bad input: one line,
//! exit 2.

use std::process::ExitCode;

use sleeplab::lab::{
    Trace, VirtualEnv, WaitSummary, oracle_at_cpu, oracle_at_p99, replay, strategy_by_setting,
};

fn us(ns: Option<u64>) -> String {
    ns.map_or("–".into(), |v| format!("{:.1}", v as f64 / 1e3))
}

fn main() -> ExitCode {
    let mut traces = Vec::new();
    let mut settings = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "-s" {
            match args.next() {
                Some(s) => settings.push(s),
                None => {
                    eprintln!("frontier_replay: -s needs a setting");
                    return ExitCode::from(2);
                }
            }
        } else {
            traces.push(a);
        }
    }
    if settings.is_empty() {
        settings.push("precise".into());
    }
    println!(
        "trace | setting | p99 µs | p99.9 µs | CPU % | oracle p99 µs at that CPU | oracle p99.9 µs | oracle CPU % for that p99"
    );
    for path in &traces {
        let trace = match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| Trace::parse(&t).map_err(|e| e.to_string()))
        {
            Ok(t) => t,
            Err(e) => {
                eprintln!("frontier_replay: {path}: {e}");
                return ExitCode::from(2);
            }
        };
        let name = std::path::Path::new(path)
            .file_stem()
            .map_or(path.clone(), |s| s.to_string_lossy().into_owned());
        for setting in &settings {
            let mut s = match strategy_by_setting::<VirtualEnv>(setting) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("frontier_replay: {e}");
                    return ExitCode::from(2);
                }
            };
            let got: WaitSummary = replay(&trace, s.as_mut()).summary();
            let oracle = oracle_at_cpu(&trace, got.cpu_percent()).summary;
            let cpu_for_p99 = got
                .p99_ns
                .and_then(|p| oracle_at_p99(&trace, p))
                .map_or("–".into(), |o| format!("{:.2}", o.summary.cpu_percent()));
            println!(
                "{name} | {setting} | {} | {} | {:.2} | {} | {} | {cpu_for_p99}",
                us(got.p99_ns),
                us(got.p999_ns),
                got.cpu_percent(),
                us(oracle.p99_ns),
                us(oracle.p999_ns),
            );
        }
    }
    ExitCode::SUCCESS
}
