//! The rounds: every arm once per round, its setting in force around its cells' waits.

use super::{Arm, ArmCell, TuneConfig, TuneData, as_is_info, judge};
use crate::contenders::{self, Wait};
use crate::error::UsageError;
use crate::experiments::{Context, Outcome};
use crate::output::fmt_ns;
use crate::stats::units::ratio_ci;
use crate::tuning::catalogue::{
    Catalogue, Change, Host, Scope, Setting, SettingInfo, Unavailable, discover,
};
use crate::tuning::{Journal, apply, journal_dir};
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

/// One arm's accumulating state.
struct ArmState {
    info: SettingInfo,
    /// The setting put in force (`None` for as is).
    setting: Option<Setting>,
    error: Option<String>,
    /// Per cell, per round: lateness, ns.
    samples: Vec<Vec<Vec<u64>>>,
    /// Per round: busy CPU-seconds of the whole machine, and wall seconds.
    busy_s: Vec<f64>,
    wall_s: Vec<f64>,
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
            busy_s: Vec::new(),
            wall_s: Vec::new(),
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
            // writes, one per interrupt for IRQ affinity).
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
            if let Some(a) = applied {
                for failure in a.revert(&mut journal) {
                    notes.push(format!(
                        "could not restore {failure} (kept in the journal: tried again at the end of this run, and by the next)"
                    ));
                }
            }
            if let (Some(a), Some(b)) = (j0, j1) {
                arm.busy_s.push(b.saturating_sub(a) as f64 * tick_s);
                arm.wall_s.push((t1 - t0) as f64 / 1e9);
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
    let busy: f64 = a.busy_s.iter().sum();
    let wall: f64 = a.wall_s.iter().sum();
    let cells = config
        .cells
        .iter()
        .zip(&a.samples)
        .map(|(c, rounds)| ArmCell::of_rounds(c, rounds))
        .collect();
    Arm {
        error: a.error,
        cpus: (wall > 0.0).then(|| busy / wall),
        cpus_ci: ratio_ci(&a.busy_s, &a.wall_s),
        round_cpus: a
            .busy_s
            .iter()
            .zip(&a.wall_s)
            .map(|(b, w)| if *w > 0.0 { b / w } else { 0.0 })
            .collect(),
        ..Arm::new(
            a.info,
            if a.wall_s.is_empty() {
                Vec::new()
            } else {
                cells
            },
            a.wall_s.len() as u64,
        )
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
