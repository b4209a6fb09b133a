//! The explain engine: interleaved rounds over every cell on one measuring thread,
//! the kernel's events recorded for that thread and drained between cells; each wake
//! split once the run is over.

use super::{ExplainCell, ExplainConfig, ExplainData};
use crate::contenders::strategies::{self, RealStrategy};
use crate::error::UsageError;
use crate::experiments::rounds::{Grid, Placed, interleave, share};
use crate::experiments::{Context, Outcome};
use crate::settings::slack_levels;
use sleeplab::clock::RealEnv;
use sleeplab::wait::{self, Waiter};
use sleeplab_account::{Follow, Machine, Recording, WakeLog, Window, steal_note};
use sleeplab_stats::{Unit, UnitIntervals, fmt_ns};

/// Calls per cell made before its first measured wake, in the first round.
pub const WARMUP: u64 = 2;

/// A way of waiting, with what a wake's window needs of it.
enum Waiting {
    /// An OS mechanism: a relative wait, timed around the call (an async mechanism
    /// inside its future).
    Os(Waiter),
    /// A precise-sleep strategy: its own report gives the window and the spin.
    Strategy(RealStrategy),
}

impl Waiting {
    fn build(name: &str) -> Result<Self, String> {
        match wait::find(name) {
            Some(_) => Ok(Waiting::Os(Waiter::new(name).map_err(|e| e.to_string())?)),
            None => strategies::build(name).map(Waiting::Strategy),
        }
    }

    /// Waits `ns`; the wake's window.
    fn wait(&mut self, tid: i32, ns: u64) -> Window {
        match self {
            Waiting::Os(waiter) => {
                let (t0, t1) = waiter.wait_timed(ns);
                Window::relative(tid, t0, ns, t1).never_blocking(!waiter.mechanism().blocks())
            }
            Waiting::Strategy(s) => {
                let r = s.sleep_for(&mut RealEnv, ns);
                Window::of_report(tid, &r)
            }
        }
    }

    fn sched_slice_ns(&self) -> Option<u64> {
        match self {
            Waiting::Os(_) => None,
            Waiting::Strategy(s) => s.sched_slice_ns(),
        }
    }
}

/// One cell's accumulating state. Each cell waits with a way of its own: a precise
/// strategy learns (its margin, its contended and starved regimes), and what it learned
/// beside busy threads must not carry into the idle cell that follows it in a round.
struct CellState {
    item: usize,
    waiting: Waiting,
    load: usize,
    slack: Option<u64>,
    slack_in_force: u64,
    log: WakeLog,
    /// Wakes per round, in round order.
    round_counts: Vec<u64>,
}

impl Placed for CellState {
    fn place(&self) -> (usize, Option<u64>) {
        (self.load, self.slack)
    }
}

/// Runs `config` on a dedicated measuring thread with the context's settings applied.
pub fn run(config: &ExplainConfig, ctx: &Context) -> anyhow::Result<Outcome<ExplainData>> {
    let mut out = Outcome::measure_placed(
        ctx,
        "sleeplab-explain",
        config.trace,
        &config.loads,
        |ctx| measure(config, ctx),
    )?;
    if let Some(note) = &out.data.tracing.note {
        out.notes.push(note.clone());
    }
    // Steal beside the wakes' host share, where they disagree: said once, as a note
    // (printed with the others, kept in the result), in this machine's words (the
    // result's: `system::hypervisor` is what its fingerprint records).
    let machine = Machine::with_hypervisor(sleeplab::system::hypervisor().is_some());
    let cells = out.data.cells.iter().map(|c| &c.explanation);
    if let Some(s) = steal_note(out.data.tracing.steal_ns, cells, machine) {
        out.notes.push(s.text);
    }
    Ok(out)
}

/// Every cell of `config` under `slacks`, each with a way of waiting of its own.
fn new_cells(config: &ExplainConfig, slacks: &[Option<u64>]) -> Result<Vec<CellState>, UsageError> {
    let mut cells = Vec::new();
    for (item, it) in config.items.iter().enumerate() {
        for &slack in slacks {
            for &load in &config.loads {
                let name = &it.mechanism;
                cells.push(CellState {
                    item,
                    waiting: Waiting::build(name)
                        .map_err(|e| UsageError::new(format!("{name}: {e}")))?,
                    load,
                    slack,
                    slack_in_force: 0,
                    log: WakeLog::default(),
                    round_counts: Vec::new(),
                });
            }
        }
    }
    Ok(cells)
}

fn measure(config: &ExplainConfig, ctx: &Context) -> anyhow::Result<Outcome<ExplainData>> {
    let mut tracing = if config.trace {
        Recording::start(true, Follow::ThisThread)
    } else {
        Recording::without_kernel("kernel tracing off")
    };
    let tid = tracing.tid();

    let slacks = slack_levels(&config.timer_slacks_ns);
    let mut cells = new_cells(config, &slacks)?;

    let grid = Grid::new(config.rounds, &config.loads, &slacks);
    let complete = interleave(ctx, grid, &mut cells, |cell, v| {
        let item = &config.items[cell.item];
        let waiting = &mut cell.waiting;
        ctx.progress.message(format!(
            "{} {} load {} round {}/{}",
            item.mechanism,
            fmt_ns(item.requested_ns),
            cell.load,
            v.round + 1,
            config.rounds
        ));
        cell.slack_in_force = v.slack_in_force;
        crate::contenders::apply_sched_slice(waiting.sched_slice_ns());
        if v.round == 0 {
            for _ in 0..WARMUP {
                waiting.wait(tid, item.requested_ns);
            }
        }
        cell.log.add_lost(tracing.drain());
        let mut n = 0;
        for _ in 0..share(config.iterations, config.rounds, v.round) {
            let before = tracing.before_wait();
            let w = waiting.wait(tid, item.requested_ns);
            cell.log.push(w, before);
            n += 1;
            if ctx.stopped() {
                break;
            }
        }
        cell.round_counts.push(n);
        cell.log.add_lost(tracing.drain());
        ctx.progress.inc(1);
        Ok(())
    })?;

    let (timeline, status) = tracing.finish();
    let cells = cells
        .into_iter()
        .filter(|c| !c.log.is_empty())
        .map(|c| {
            let item = &config.items[c.item];
            let slack =
                crate::contenders::slack_applies(&item.mechanism).then_some(c.slack_in_force);
            let (explanation, mut all_wakes) = c.log.explain_with_records(timeline.as_ref(), slack);
            let rounds = c.round_counts.iter().enumerate();
            let of_round = rounds.flat_map(|(r, &n)| std::iter::repeat_n(r as u32, n as usize));
            for (w, round) in all_wakes.iter_mut().zip(of_round) {
                w.round = round;
            }
            // The lateness the summary holds (an early wake counts as 0), by round.
            let lateness: Vec<u64> = all_wakes
                .iter()
                .map(|w| w.lateness_ns.max(0) as u64)
                .collect();
            ExplainCell {
                units: UnitIntervals::of_counted(Unit::Round, &lateness, &c.round_counts),
                mechanism: item.mechanism.clone(),
                requested_ns: item.requested_ns,
                load: c.load,
                timer_slack_ns: c.slack_in_force,
                explanation,
                wakes: all_wakes[..all_wakes.len().min(config.json_wakes)].to_vec(),
                all_wakes,
            }
        })
        .collect();
    let data = ExplainData {
        config: config.clone(),
        tracing: status.expect("explain always logs its wakes"),
        cells,
    };
    Ok(Outcome::new(data, ctx.threads.record(), complete))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::explain::ExplainItem;

    fn config(mechanisms: &[&str], loads: &[usize]) -> ExplainConfig {
        ExplainConfig {
            items: mechanisms
                .iter()
                .map(|m| ExplainItem {
                    mechanism: m.to_string(),
                    requested_ns: 100_000,
                })
                .collect(),
            loads: loads.to_vec(),
            timer_slacks_ns: Vec::new(),
            iterations: 1,
            rounds: 1,
            json_wakes: 0,
            trace: false,
        }
    }

    /// A strategy learns; what it learned in one cell (beside busy threads) must not
    /// be what the next cell (idle) measures: every cell owns its strategy.
    #[test]
    fn every_cell_waits_with_a_strategy_of_its_own() {
        let cells = new_cells(
            &config(&["precise", "nanosleep"], &[0, 2]),
            &[None, Some(1)],
        )
        .unwrap();
        assert_eq!(cells.len(), 2 * 2 * 2);
        let strategies: Vec<*const u8> = cells
            .iter()
            .filter_map(|c| match &c.waiting {
                Waiting::Strategy(s) => Some(&**s as *const _ as *const u8),
                Waiting::Os(_) => None,
            })
            .collect();
        assert_eq!(strategies.len(), 4, "precise at 2 loads × 2 slacks");
        for (i, a) in strategies.iter().enumerate() {
            assert!(
                strategies[i + 1..].iter().all(|b| b != a),
                "cell {i} shares"
            );
        }
        let loads: Vec<usize> = cells.iter().map(|c| c.load).collect();
        assert_eq!(loads, [0, 2, 0, 2, 0, 2, 0, 2]);
    }

    #[test]
    fn an_unknown_mechanism_is_a_usage_error_naming_it() {
        let err = new_cells(&config(&["warp-drive"], &[0]), &[None])
            .err()
            .expect("no such mechanism");
        assert!(err.to_string().contains("warp-drive"), "{err}");
    }
}
