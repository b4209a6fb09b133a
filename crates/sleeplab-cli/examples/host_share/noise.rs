//! The noise probe's record as the host benchmarks print it (`host_share`, and
//! `precise_why`, which includes this file): per CPU, the gaps a spinning thread saw and
//! those of them spent off the guest's run queue (the host's, or the hardware's), and the
//! guest's load average, and the machine fields every run's document starts with.

use serde_json::{Value, json};
use sleeplab::lab::{Noise, NoiseConfig, NoiseSource, ProbeKind, Schedule, probe_cpus};
use sleeplab::system::{Fingerprint, hypervisor};

fn quantile(n: &Noise, q: f64) -> Value {
    n.gap_quantile(q).map_or(Value::Null, Value::from)
}

/// A probe's numbers, and the same for its gaps off the run queue.
fn noise_json(n: &Noise) -> Value {
    let off = n.off_run_queue();
    json!({
        "cpu": n.cpu,
        "wall_ns": n.wall_ns,
        "gaps": n.gaps,
        "lost_ns": n.lost_ns,
        "max_gap_ns": n.max_gap_ns,
        "p50_ns": quantile(n, 0.5),
        "p99_ns": quantile(n, 0.99),
        "run_queue_ns": n.run_queue_ns,
        "off_run_queue": off.as_ref().map(|o| json!({
            "gaps": o.gaps,
            "lost_ns": o.lost_ns,
            "max_gap_ns": o.max_gap_ns,
            "p50_ns": quantile(o, 0.5),
            "p99_ns": quantile(o, 0.99),
        })),
    })
}

pub fn probe(config: &NoiseConfig) -> anyhow::Result<Value> {
    let cpus: Vec<usize> =
        (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect();
    let all = probe_cpus(&cpus, config, ProbeKind::Spin, Schedule::InTurn)?;
    Ok(Value::Array(all.iter().map(noise_json).collect()))
}

/// The first three fields of /proc/loadavg (the guest's own load: other engineers'
/// compilers), or `None`.
pub fn loadavg() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(
        text.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// A run document with the machine's fields added (kernel, CPUs, hypervisor, and who
/// takes a spinning CPU: the host or the hardware) to `fields`, as the host benchmarks'
/// reports read them.
pub fn with_machine(mut fields: serde_json::Map<String, Value>) -> Value {
    fields.insert(
        "kernel".into(),
        Fingerprint::collect().kernel_release.into(),
    );
    fields.insert(
        "cpus".into(),
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .into(),
    );
    fields.insert("hypervisor".into(), hypervisor().into());
    fields.insert("source".into(), NoiseSource::detect().name().into());
    Value::Object(fields)
}
