//! The rounds: every arm once per round, its setting in force around its cells' waits.

use super::{Arm, ArmCell, TuneConfig, TuneData, as_is_info, judge};
use crate::contenders::{self, Wait};
use crate::error::UsageError;
use crate::experiments::{Context, Outcome};
use crate::tuning::catalogue::{
    Catalogue, Change, Host, Scope, Setting, SettingInfo, Unavailable, discover,
};
use crate::tuning::{Journal, apply, journal_dir};
use sleeplab::system::IdleCounters;
use sleeplab_stats::{fmt_ns, ratio_ci};
use std::path::Path;

/// The machine's catalogue for `config`: system-wide settings only when asked for (and
/// root), and only the named ones where names are given.
pub fn catalogue(config: &TuneConfig) -> Catalogue {
    let mut c = discover(Path::new("/"), Host::here(config.cpu));
    if !config.system {
        let (sys, rest): (Vec<Setting>, Vec<Setting>) = c
            .settings
            .into_iter()
            .partition(|s| s.info.scope == Scope::System);
        c.settings = rest;
        if !sys.is_empty() {
            c.unavailable.push(Unavailable {
                name: "system-wide settings".into(),
                scope: Scope::System,
                reason: format!("not asked for ({} would apply here)", sys.len()),
            });
        }
    }
    if let Some(names) = &config.settings {
        c.settings.retain(|s| names.contains(&s.info.name));
    }
    c
}

/// The arms a run of `config` has here: as is (no setting), then every setting it tries.
pub fn arms_here(config: &TuneConfig) -> Vec<Option<Setting>> {
    std::iter::once(None)
        .chain(catalogue(config).settings.into_iter().map(Some))
        .collect()
}

/// The whole machine's busy jiffies (`/proc/stat`'s `cpu` line: user, nice, system,
/// irq, softirq; steal, the host's, is not the guest's busy time).
fn machine_jiffies() -> Option<u64> {
    Some(sleeplab::system::ProcStat::read()?.total.busy())
}

/// Every CPU's idle-state counters, where some state polls (`None` where none does:
/// no idle time can then be spent polling).
fn idle_counters() -> Option<IdleCounters> {
    Some(IdleCounters::read()).filter(IdleCounters::has_polling)
}

/// One round of an arm, as the machine's counters saw it: busy seconds from /proc/stat,
/// seconds idle CPUs spent polling (`None` without a polling state), wall seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
struct RoundCpu {
    busy_s: f64,
    poll_s: Option<f64>,
    wall_s: f64,
}

impl RoundCpu {
    /// What the round burnt, CPU-seconds: the busy time plus the polling time, which
    /// /proc/stat books as idle though the CPU executes instructions all along (on a
    /// virtual machine each polling vCPU holds a core of its host).
    fn burnt_s(&self) -> f64 {
        self.busy_s + self.poll_s.unwrap_or(0.0)
    }
}

/// One arm's accumulating state.
struct ArmState {
    info: SettingInfo,
    /// The setting put in force (`None` for as is).
    setting: Option<Setting>,
    error: Option<String>,
    /// Per cell, per round: lateness, ns.
    samples: Vec<Vec<Vec<u64>>>,
    /// Per round: what the whole machine burnt, and over how long.
    rounds: Vec<RoundCpu>,
}

/// Runs `config` on a measuring thread.
pub fn run(config: &TuneConfig, ctx: &Context) -> anyhow::Result<Outcome<TuneData>> {
    let catalogue = catalogue(config);
    let mut notes = Vec::new();
    if config.system && !crate::tuning::is_root() {
        notes.push("not root: only per-process settings ran; as root, tune also tries the system-wide ones (idle states, halt polling, timer migration, scheduler sysctls, IRQ affinity, the CPU frequency governor)".to_string());
    }
    // The arms from this one scan of the machine (the run's settings and its "not
    // tried" list agree).
    let settings = std::iter::once(None).chain(catalogue.settings.iter().cloned().map(Some));
    let mut arms: Vec<ArmState> = settings
        .map(|setting| ArmState {
            info: setting.as_ref().map_or_else(as_is_info, |s| s.info.clone()),
            setting,
            error: None,
            samples: vec![Vec::new(); config.cells.len()],
            rounds: Vec::new(),
        })
        .collect();
    let complete = ctx.on_measuring_thread("sleeplab-tune", || {
        measure(config, ctx, &mut arms, &mut notes)
    })?;
    let mut data = TuneData {
        cpu: config.cpu,
        rounds: config.rounds,
        root: crate::tuning::is_root(),
        arms: arms.into_iter().map(|a| summarize(config, a)).collect(),
        unavailable: catalogue.unavailable,
        boot: catalogue.boot,
    };
    judge(&mut data);
    let mut out = Outcome::new(data, ctx.threads.record(), complete);
    out.notes = notes;
    Ok(out)
}

fn measure(
    config: &TuneConfig,
    ctx: &Context,
    arms: &mut [ArmState],
    notes: &mut Vec<String>,
) -> anyhow::Result<bool> {
    let mut waiters: Vec<Box<dyn Wait>> = Vec::new();
    for c in &config.cells {
        waiters.push(
            contenders::build(&c.mechanism)
                .map_err(|e| UsageError::new(format!("{}: {e}", c.mechanism)))?,
        );
    }
    let mut journal = Journal::new(&journal_dir());
    let tick_s = sleeplab::system::tick_ns() as f64 / 1e9;
    let n = arms.len();
    for round in 0..config.rounds {
        for k in 0..n {
            let arm = &mut arms[(k + round as usize) % n];
            if ctx.stopped() {
                return Ok(false);
            }
            if arm.error.is_some() {
                ctx.progress.inc(1);
                continue;
            }
            ctx.progress.message(format!(
                "round {}/{}: {}",
                round + 1,
                config.rounds,
                arm.info.name
            ));
            let applied = match &arm.setting {
                None => None,
                Some(s) => match apply(s, config.cpu, ctx.threads, &mut journal) {
                    Ok(a) => Some(a),
                    Err(e) => {
                        arm.error = Some(e);
                        ctx.progress.inc(1);
                        continue;
                    }
                },
            };
            // The machine's CPU is counted from here to the revert: the setting in force,
            // not the one-time work of putting it there and taking it back (the journal's
            // writes, one per interrupt for IRQ affinity). Busy time from /proc/stat, and
            // the time idle CPUs spent polling from the idle states' own counters.
            let p0 = idle_counters();
            let (j0, t0) = (machine_jiffies(), sleeplab::clock::monotonic_ns());
            // Each contender with its own scheduler slice (as sweep and pace give it),
            // unless the arm's setting is the slice.
            let sets_slice = matches!(
                arm.setting.as_ref().map(|s| &s.change),
                Some(Change::Slice(_))
            );
            for (ci, cell) in config.cells.iter().enumerate() {
                let w = &mut waiters[ci];
                if !sets_slice {
                    contenders::apply_sched_slice(w.sched_slice_ns());
                }
                let _ = w.wait_timed(cell.requested_ns); // warm-up, not kept
                let mut got = Vec::with_capacity(config.waits(cell.requested_ns) as usize);
                for _ in 0..config.waits(cell.requested_ns) {
                    if ctx.stopped() {
                        break;
                    }
                    let (a, b) = w.wait_timed(cell.requested_ns);
                    got.push((b - a).saturating_sub(cell.requested_ns));
                }
                arm.samples[ci].push(got);
            }
            let (j1, t1) = (machine_jiffies(), sleeplab::clock::monotonic_ns());
            let p1 = idle_counters();
            if let Some(a) = applied {
                for failure in a.revert(&mut journal) {
                    notes.push(format!(
                        "could not restore {failure} (kept in the journal: tried again at the end of this run, and by the next)"
                    ));
                }
            }
            if let (Some(a), Some(b)) = (j0, j1) {
                arm.rounds.push(RoundCpu {
                    busy_s: b.saturating_sub(a) as f64 * tick_s,
                    poll_s: p0
                        .zip(p1)
                        .map(|(p0, p1)| p1.polling_us_since(&p0) as f64 / 1e6),
                    wall_s: (t1 - t0) as f64 / 1e9,
                });
            }
            ctx.progress.inc(1);
        }
    }
    let file = journal.file().to_path_buf();
    for failure in journal.finish() {
        notes.push(format!(
            "could not restore {failure}; kept in the journal {}: the next sleeplab run tries again",
            file.display()
        ));
    }
    Ok(!ctx.stopped())
}

fn summarize(config: &TuneConfig, a: ArmState) -> Arm {
    let cells = config
        .cells
        .iter()
        .zip(&a.samples)
        .map(|(c, rounds)| ArmCell::of_rounds(c, rounds))
        .collect();
    let cells = if a.rounds.is_empty() {
        Vec::new()
    } else {
        cells
    };
    Arm {
        error: a.error,
        ..with_cpu(Arm::new(a.info, cells, a.rounds.len() as u64), &a.rounds)
    }
}

/// `arm` with the machine's CPU of its `rounds`: what they burnt (busy and polling) over
/// wall time, its interval over rounds, each round's, and the polling part alone.
fn with_cpu(arm: Arm, rounds: &[RoundCpu]) -> Arm {
    let burnt: Vec<f64> = rounds.iter().map(RoundCpu::burnt_s).collect();
    let wall: Vec<f64> = rounds.iter().map(|r| r.wall_s).collect();
    let total_wall: f64 = wall.iter().sum();
    let per_wall = |v: f64, w: f64| if w > 0.0 { v / w } else { 0.0 };
    let polled = rounds.iter().all(|r| r.poll_s.is_some()) && !rounds.is_empty();
    Arm {
        cpus: (total_wall > 0.0).then(|| burnt.iter().sum::<f64>() / total_wall),
        cpus_ci: ratio_ci(&burnt, &wall),
        round_cpus: burnt
            .iter()
            .zip(&wall)
            .map(|(b, w)| per_wall(*b, *w))
            .collect(),
        poll_cpus: (polled && total_wall > 0.0)
            .then(|| rounds.iter().map(|r| r.poll_s.unwrap_or(0.0)).sum::<f64>() / total_wall),
        round_poll_cpus: if polled {
            rounds
                .iter()
                .map(|r| per_wall(r.poll_s.unwrap_or(0.0), r.wall_s))
                .collect()
        } else {
            Vec::new()
        },
        ..arm
    }
}

/// What the run would change, for `--dry-run`: each setting, what it does, and for the
/// system-wide ones the files and values.
pub fn plan(config: &TuneConfig) -> String {
    use std::fmt::Write;
    let c = catalogue(config);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "sleeplab tune would try, one at a time and undone after each ({} rounds, CPU {}):",
        config.rounds, config.cpu
    );
    for st in &c.settings {
        let _ = writeln!(
            s,
            "  {:<22} {:<7} {}",
            st.info.name,
            st.info.scope.name(),
            st.info.what
        );
        if let crate::tuning::Change::Writes(w) = &st.change {
            for (p, v) in w {
                let now = std::fs::read_to_string(p)
                    .map(|t| t.trim().to_string())
                    .unwrap_or_else(|_| "?".into());
                let _ = writeln!(s, "      {} : {now} → {v}", p.display());
            }
        }
        if let crate::tuning::Change::DmaLatency(p) = &st.change {
            let _ = writeln!(
                s,
                "      {} held open at 0 (released when it closes)",
                p.display()
            );
        }
    }
    for u in &c.unavailable {
        let _ = writeln!(s, "  not tried: {} ({})", u.name, u.reason);
    }
    let _ = writeln!(
        s,
        "estimated time: {}",
        fmt_ns(config.estimate_ns(c.settings.len() as u64 + 1))
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lays out every CPU's idle states below `root`: per CPU, (name, time µs) per state.
    fn sysfs(root: &Path, cpus: &[&[(&str, u64)]]) {
        for (c, states) in cpus.iter().enumerate() {
            for (k, (name, time)) in states.iter().enumerate() {
                let d = root.join(format!("sys/devices/system/cpu/cpu{c}/cpuidle/state{k}"));
                std::fs::create_dir_all(&d).unwrap();
                std::fs::write(d.join("name"), format!("{name}\n")).unwrap();
                std::fs::write(d.join("time"), format!("{time}\n")).unwrap();
                std::fs::write(d.join("usage"), "1\n").unwrap();
            }
        }
    }

    /// One round of 1 s read from two fixture trees: a haltpoll guest whose two idle
    /// vCPUs poll nearly all the time under a setting (the CPU latency QoS held at 0),
    /// against as is, whose vCPUs halt. /proc/stat books both as idle (0.02 CPUs busy);
    /// the polling is what the setting burns.
    #[test]
    fn idle_polling_counts_as_burnt_cpu() {
        let dir = tempfile::tempdir().unwrap();
        // Both vCPUs' counters: (POLL µs, haltpoll µs).
        let read = |poll: u64, halt: u64| {
            let states: &[(&str, u64)] = &[("POLL", poll), ("haltpoll", halt)];
            sysfs(dir.path(), &[states, states]);
            IdleCounters::from_root(dir.path())
        };
        let before = read(5_000, 9_000_000);
        // As is: each vCPU polled 10 ms of its idle second and halted the rest.
        let as_is = read(15_000, 9_980_000);
        let poll_as_is = as_is.polling_us_since(&before) as f64 / 1e6;
        // The setting: each vCPU polled 980 ms.
        let held = read(985_000, 9_000_000);
        let poll_held = held.polling_us_since(&before) as f64 / 1e6;
        assert!((poll_as_is - 0.02).abs() < 1e-9 && (poll_held - 1.96).abs() < 1e-9);
        let rounds = |poll: f64| {
            vec![
                RoundCpu {
                    busy_s: 0.02,
                    poll_s: Some(poll),
                    wall_s: 1.0
                };
                8
            ]
        };
        let arm = |name: &str, poll: f64| {
            let info = SettingInfo {
                name: name.into(),
                ..as_is_info()
            };
            with_cpu(Arm::new(info, Vec::new(), 8), &rounds(poll))
        };
        let base = with_cpu(Arm::new(as_is_info(), Vec::new(), 8), &rounds(poll_as_is));
        let qos = arm("cpu-dma-latency", poll_held);
        assert!((qos.cpus.unwrap() - 1.98).abs() < 1e-9, "{:?}", qos.cpus);
        assert!((qos.poll_cpus.unwrap() - 1.96).abs() < 1e-9);
        assert_eq!(qos.round_cpus.len(), 8);
        let mut data = TuneData {
            cpu: 0,
            rounds: 8,
            root: true,
            arms: vec![base, qos],
            unavailable: Vec::new(),
            boot: Vec::new(),
        };
        judge(&mut data);
        let change = data.arms[1].cpus_change.unwrap();
        assert!((change - 1.94).abs() < 1e-9, "{change}");
        // Without a polling state the arm says nothing of polling, and burns its busy time.
        let halting = with_cpu(
            Arm::new(as_is_info(), Vec::new(), 1),
            &[RoundCpu {
                busy_s: 0.5,
                poll_s: None,
                wall_s: 2.0,
            }],
        );
        assert_eq!((halting.cpus, halting.poll_cpus), (Some(0.25), None));
    }
}
