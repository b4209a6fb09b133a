//! Builders of synthetic data for the tests of this crate and of the crates above it
//! (feature `test-support`; never in a build that ships).

use crate::experiments::runtimes::{ProbeQuota, RuntimesConfig};
use crate::experiments::short::{BatchRecord, ShortCell};

/// A small config for the unit tests of the experiment.
pub fn runtimes_config() -> RuntimesConfig {
    RuntimesConfig {
        runtimes: vec![],
        durations_ns: vec![1_000_000, 10_000],
        quota: ProbeQuota::Count { count: 2 },
        warmup: 1,
        period_ns: 1_000,
        ticks: 3,
        json_samples: 10,
        output_cap_bytes: 1 << 20,
        startup_timeout_ns: 1_000_000_000,
        ..RuntimesConfig::default()
    }
}

/// A synthetic cell whose per-repetition net costs are `net` (100 calls per batch,
/// no floor) with `vol` voluntary switches per call (the report's tests use it too).
pub fn short_cell(m: &str, ns: u64, net: &[f64], vol: f64) -> ShortCell {
    let batches = net
        .iter()
        .enumerate()
        .map(|(i, &v)| BatchRecord {
            repetition: i as u64,
            position: 0,
            calls: 100,
            elapsed_ns: (v * 100.0) as u64,
            floor_elapsed_ns: 0,
            cpu_ns: 0,
            voluntary_csw: (vol * 100.0) as u64,
            involuntary_csw: 0,
        })
        .collect();
    ShortCell::from_batches(m, ns, 50_000, 100, 0.0, batches, 0.999)
}
