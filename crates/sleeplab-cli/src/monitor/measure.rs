//! The measuring threads: one per cell, each a burst of waits every interval (a low
//! duty cycle), staggered so two cells rarely wake together. A burst is recorded into a
//! fresh [`CellRecord`] and merged into the shared one afterwards: the measured region
//! holds nothing but the wait, and a scrape never holds up a wait.
//!
//! Between bursts a thread parks until its next burst (the monitor unparks it on a
//! stop), so an idle cell costs one wake per burst, not a wake per stop-flag check.

use super::cells::{Cell, Probe};
use super::record::CellRecord;
use crate::experiments::Stop;
use crate::settings::ThreadSettings;
use anyhow::Context as _;
use sleeplab::clock::{monotonic_ns, thread_cpu_ns};
use sleeplab::precise::PreciseSleeper;
use sleeplab::wait::{Waiter, periodic};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// How the measuring threads pace themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    /// One burst per cell every this many ns.
    pub interval_ns: u64,
    /// Waits per burst.
    pub burst: u64,
    /// A wake at least this late is a stall, ns.
    pub stall_ns: u64,
}

/// The longest a measuring thread parks between bursts before it checks the stop flag
/// by itself (a stop also unparks it: [`wake`]).
const IDLE_SLICE_NS: u64 = 1_000_000_000;

/// Starts one measuring thread per cell (each with `threads` applied); they record into
/// `records[i]` until `stop`. A thread that cannot set up its probe ends with an error.
pub fn spawn(
    cells: &[Cell],
    records: &[Arc<Mutex<CellRecord>>],
    pacing: Pacing,
    threads: ThreadSettings,
    stop: &Stop,
) -> anyhow::Result<Vec<JoinHandle<anyhow::Result<()>>>> {
    let n = cells.len() as u64;
    cells
        .iter()
        .zip(records)
        .enumerate()
        .map(|(i, (cell, record))| {
            let (cell, record, stop) = (cell.clone(), Arc::clone(record), stop.clone());
            // Stagger the cells over the interval.
            let offset_ns = pacing.interval_ns / n.max(1) * i as u64;
            std::thread::Builder::new()
                .name(format!("monitor-{i}"))
                .spawn(move || {
                    threads.apply()?;
                    run_cell(&cell, &record, pacing, offset_ns, &stop)
                        .with_context(|| format!("monitor: {}", cell.name))
                })
                .context("cannot start a measuring thread")
        })
        .collect()
}

/// The life of one measuring thread: set the probe up, then a burst every interval.
fn run_cell(
    cell: &Cell,
    shared: &Mutex<CellRecord>,
    pacing: Pacing,
    offset_ns: u64,
    stop: &Stop,
) -> anyhow::Result<()> {
    let mut probe = ProbeState::new(cell)?;
    let mut next = monotonic_ns() + offset_ns;
    while idle_until(next, stop) {
        let mut burst = CellRecord::default();
        probe.burst(cell.requested_ns, pacing, &mut burst, stop)?;
        burst.cpu_ns = thread_cpu_ns();
        shared
            .lock()
            .map_err(|_| anyhow::anyhow!("a scrape panicked"))?
            .merge(&burst);
        // The next burst on the interval grid, skipping slots a long burst overran.
        let now = monotonic_ns();
        next += pacing.interval_ns;
        if next < now {
            next += (now - next).div_ceil(pacing.interval_ns) * pacing.interval_ns;
        }
    }
    Ok(())
}

/// Unparks every measuring thread idling between bursts, so it sees a stop at once.
pub fn wake<T>(threads: &[JoinHandle<T>]) {
    for t in threads {
        t.thread().unpark();
    }
}

/// Parks until `deadline` in slices, checking `stop` at each unpark; false when stopped.
fn idle_until(deadline: u64, stop: &Stop) -> bool {
    loop {
        if stop.requested() {
            return false;
        }
        let now = monotonic_ns();
        if now >= deadline {
            return true;
        }
        let ns = (deadline - now).min(IDLE_SLICE_NS);
        std::thread::park_timeout(std::time::Duration::from_nanos(ns));
    }
}

/// A probe's per-thread state, kept across bursts.
enum ProbeState {
    OneShot(Waiter),
    Periodic(periodic::PeriodicTimer),
    Precise(Box<PreciseSleeper>),
}

impl ProbeState {
    fn new(cell: &Cell) -> anyhow::Result<Self> {
        Ok(match cell.probe {
            Probe::OneShot(m) => Self::OneShot(Waiter::of(m)?),
            Probe::Periodic(m) => Self::Periodic(m.build(&periodic::Options::default())?),
            // Built here: it sets this thread's timer slack to 1 ns, as in use.
            Probe::Precise => Self::Precise(Box::new(PreciseSleeper::new())),
        })
    }

    /// One burst of `pacing.burst` waits of `ns` into `out`, stopping early on `stop`.
    fn burst(
        &mut self,
        ns: u64,
        pacing: Pacing,
        out: &mut CellRecord,
        stop: &Stop,
    ) -> anyhow::Result<()> {
        let stall = pacing.stall_ns;
        match self {
            Self::OneShot(waiter) => {
                for _ in 0..pacing.burst {
                    let t0 = monotonic_ns();
                    waiter.wait(ns);
                    let t1 = monotonic_ns();
                    out.record(signed(t1 - t0) - signed(ns), stall);
                    if stop.requested() {
                        break;
                    }
                }
            }
            Self::Periodic(timer) => {
                timer.arm(ns, pacing.burst)?;
                let mut seen = 0;
                while seen < pacing.burst && !stop.requested() {
                    let e = timer.wait()?;
                    record_ticks(out, &e, ns, pacing.burst - seen, stall);
                    out.missed += e.overruns();
                    seen += e.expirations;
                }
                timer.disarm();
            }
            Self::Precise(sleeper) => {
                let mut deadline = sleeper.now_ns() + ns;
                for _ in 0..pacing.burst {
                    let r = sleeper.sleep_until_ns(deadline);
                    out.record(signed(r.woke) - signed(r.deadline), stall);
                    out.spin_ns += r.spin_ns;
                    // Deadlines passed while it slept are missed ticks (skip ahead).
                    let passed = r.woke.saturating_sub(deadline) / ns;
                    out.missed += passed;
                    deadline += (passed + 1) * ns;
                    if stop.requested() {
                        break;
                    }
                }
                out.margin_ns = Some(sleeper.margin_ns());
            }
        }
        Ok(())
    }
}

/// Records every scheduled deadline `e` stands for, at most the `left` earliest (the
/// burst's rest): each delivered at this wake, so the one `j` periods before the wake's
/// own deadline is `j·period` later than it. A stall thus shows in every tick it delays,
/// as `sleeplab timers` counts lateness per scheduled tick (no coordinated omission).
fn record_ticks(out: &mut CellRecord, e: &periodic::Expiry, period_ns: u64, left: u64, stall: u64) {
    let covered = e.expirations.max(1);
    for j in covered.saturating_sub(left)..covered {
        out.record(e.lateness_ns() + signed(j * period_ns), stall);
    }
}

/// A clock reading or duration as i64 (far below 2^63 ns: 292 years).
fn signed(ns: u64) -> i64 {
    ns as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::cells::parse_cells;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn every_probe_records_whole_bursts_and_is_never_early() {
        let cells = parse_cells(
            &[
                "tick:clock-nanosleep-abs@1ms".into(),
                "nanosleep@100us".into(),
                "timerfd@100us".into(),
                "precise@1ms".into(),
            ],
            &[],
        )
        .unwrap();
        let records: Vec<_> = cells.iter().map(|_| Arc::default()).collect();
        let pacing = Pacing {
            interval_ns: 20_000_000,
            burst: 5,
            stall_ns: u64::MAX,
        };
        let stopped = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stopped);
        let stop = Stop::when(move || flag.load(Ordering::Relaxed));
        let handles = spawn(&cells, &records, pacing, ThreadSettings::default(), &stop).unwrap();
        // Wait until every cell has two whole bursts, then stop.
        let whole = |r: &Arc<Mutex<CellRecord>>| {
            let r = r.lock().unwrap();
            r.count() + r.missed >= 2 * pacing.burst
        };
        let t0 = std::time::Instant::now();
        while !records.iter().all(whole) {
            assert!(t0.elapsed().as_secs() < 60, "the cells never filled");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        stopped.store(true, Ordering::Relaxed);
        wake(&handles);
        for h in handles {
            h.join().unwrap().unwrap();
        }
        for (cell, r) in cells.iter().zip(&records) {
            let r = r.lock().unwrap();
            assert_eq!(r.early, 0, "{} woke early", cell.name);
            assert_eq!(r.stalls, 0, "nothing reaches an infinite stall threshold");
            assert!(r.cpu_ns > 0, "{} measured its thread's CPU", cell.name);
            let in_buckets: u64 = r.buckets().iter().map(|b| b.1).sum();
            assert_eq!(in_buckets, r.count());
            assert_eq!(r.margin_ns.is_some(), cell.probe == Probe::Precise);
        }
    }

    /// A wake that swallowed two ticks counts three: its own and the two before, one
    /// and two periods later; only the burst's rest is counted.
    #[test]
    fn a_late_wake_counts_every_tick_it_delivered() {
        let e = periodic::Expiry {
            deadline_ns: 10_000_000,
            wake_ns: 10_300_000,
            expirations: 3,
        };
        let mut all = CellRecord::default();
        record_ticks(&mut all, &e, 1_000_000, 10, 1_000_000);
        assert_eq!(all.count(), 3);
        assert_eq!(all.sum_ns, 300_000 + 1_300_000 + 2_300_000);
        assert_eq!(all.stalls, 2, "1.3 ms and 2.3 ms reach the 1 ms threshold");
        let mut rest = CellRecord::default();
        record_ticks(&mut rest, &e, 1_000_000, 2, 1_000_000);
        assert_eq!(rest.count(), 2);
        assert_eq!(rest.sum_ns, 1_300_000 + 2_300_000, "the earliest two");
    }
}
