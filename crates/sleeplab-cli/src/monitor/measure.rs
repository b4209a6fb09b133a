//! The measuring threads: one per cell, each a burst of waits every interval (a low
//! duty cycle), staggered so two cells rarely wake together. A burst is recorded into a
//! fresh [`CellRecord`] and merged into the shared one afterwards: the measured region
//! holds nothing but the wait, and a scrape never holds up a wait.
//!
//! Between bursts a thread parks until its next burst (the monitor unparks it on a
//! stop), so an idle cell costs one wake per burst, not a wake per stop-flag check.
//!
//! A `tick:` cell's burst is a run of `burst` scheduled deadlines through the loop and
//! the accounting `sleeplab timers` uses ([`crate::ticks`]); a precise cell's burst puts
//! the precise sleeper on the same kind of grid and accounts its wakes the same way. So
//! each scheduled tick is recorded with its own lateness, and a stall shows in every tick
//! it delayed.

use super::cells::{Cell, Probe};
use super::keep::{Burst, KeepSender, LateWake};
use super::record::CellRecord;
use crate::experiments::Stop;
use crate::settings::ThreadSettings;
use crate::ticks::{self, Plan, Schedule, Wake};
use anyhow::Context as _;
use sleeplab::clock::{monotonic_ns, thread_cpu_ns};
use sleeplab::precise::PreciseSleeper;
use sleeplab::wait::Waiter;
use sleeplab::wait::periodic::{self, Grid};
use sleeplab_account::{Detail, Follow, Recording, SyscallsBy, Window};
use sleeplab_capture::this_tid;
use sleeplab_results::Account;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// How the measuring threads pace themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    /// One burst per cell every this many ns.
    pub interval_ns: u64,
    /// Waits per burst (one-shot cells), scheduled ticks per burst (`tick:` and precise
    /// cells).
    pub burst: u64,
    /// A wake at least this late is a stall, ns.
    pub stall_ns: u64,
    /// Whether to split each wake's lateness with the kernel's tracepoints (recorded
    /// only while a burst runs).
    pub trace: bool,
}

/// What a measuring thread notes of a burst for the kernel's account: each wake's window
/// (`--trace`) and the wakes over the flight recorder's threshold (`--keep-over`).
#[derive(Debug, Default)]
pub struct Marks {
    /// The burst's wakes, for the component split.
    windows: Vec<Window>,
    /// The burst's wakes later than `keep_over`.
    late: Vec<LateWake>,
    /// Whether to note windows.
    split: bool,
    /// The flight recorder's threshold, ns.
    keep_over: Option<u64>,
}

impl Marks {
    /// Notes a wake at `wake_ns`, `lateness_ns` late, when it crossed the threshold.
    fn late(&mut self, wake_ns: u64, lateness_ns: i64) {
        let late = u64::try_from(lateness_ns).unwrap_or(0);
        if self.keep_over.is_some_and(|over| late > over) {
            self.late.push(LateWake {
                wake_ns,
                lateness_ns: late,
            });
        }
    }

    /// Notes the wakes of an accounted periodic run that crossed the threshold: each
    /// wake once, with the lateness of the latest tick it delivered.
    fn late_ticks(&mut self, account: &Account, wakes: &[Wake]) {
        let Some(over) = self.keep_over else { return };
        let mut last: Option<u32> = None;
        for t in &account.ticks {
            let late = u64::try_from(t.lateness_ns).unwrap_or(0);
            let Some(wake) = wakes.get(t.wake as usize) else {
                continue;
            };
            if late <= over {
                continue;
            }
            if last == Some(t.wake)
                && let Some(prev) = self.late.last_mut()
            {
                prev.lateness_ns = prev.lateness_ns.max(late);
                continue;
            }
            last = Some(t.wake);
            self.late.push(LateWake {
                wake_ns: wake.wake_ns,
                lateness_ns: late,
            });
        }
    }
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
    keepers: Vec<Option<KeepSender>>,
    stop: &Stop,
) -> anyhow::Result<Vec<JoinHandle<anyhow::Result<()>>>> {
    let n = cells.len() as u64;
    cells
        .iter()
        .zip(records)
        .zip(keepers.into_iter().chain(std::iter::repeat(None)))
        .enumerate()
        .map(|(i, ((cell, record), keep))| {
            let (cell, record, stop) = (cell.clone(), Arc::clone(record), stop.clone());
            // Stagger the cells over the interval.
            let offset_ns = pacing.interval_ns / n.max(1) * i as u64;
            std::thread::Builder::new()
                .name(format!("monitor-{i}"))
                .spawn(move || {
                    threads.apply()?;
                    run_cell(&cell, &record, pacing, keep, offset_ns, &stop)
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
    keep: Option<KeepSender>,
    offset_ns: u64,
    stop: &Stop,
) -> anyhow::Result<()> {
    let mut probe = ProbeState::new(cell, pacing.burst)?;
    let mut tracing = BurstTracing::start(pacing, keep)?;
    let mut next = monotonic_ns() + offset_ns;
    while idle_until(next, stop) {
        let mut burst = CellRecord::default();
        tracing.begin()?;
        probe.burst(
            cell.requested_ns,
            pacing,
            &mut burst,
            stop,
            &mut tracing.marks,
        )?;
        tracing.end(&mut burst, cell.requested_ns)?;
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

/// The kernel's tracing of one measuring thread's bursts (`--trace`, `--keep-over`):
/// recording only while a burst runs; once it is over, its wakes split and its late
/// wakes' events handed to the flight recorder.
struct BurstTracing {
    recording: Recording,
    tid: i32,
    /// The thread's name, for a saved trace.
    comm: String,
    marks: Marks,
    keep: Option<KeepSender>,
    began_ns: u64,
}

impl BurstTracing {
    /// Tracing this thread when `pacing.trace` or keeping (paused until a burst
    /// begins). The flight recorder records the thread's system calls too: a saved
    /// trace is read back by finding its waits.
    fn start(pacing: Pacing, keep: Option<KeepSender>) -> anyhow::Result<Self> {
        let follow = if keep.is_some() {
            // A daemon's recorder: the kernel's pid list spares the machine's other
            // processes the filter's cost on each of their system calls.
            Follow::Program(vec![this_tid()], Detail::Full, SyscallsBy::PidList)
        } else {
            Follow::ThisThread
        };
        let mut recording = Recording::start(pacing.trace || keep.is_some(), follow);
        if pacing.trace && keep.is_some() {
            // The split reads the spins' gaps; only the split does.
            recording.log_spins();
        }
        recording.pause()?;
        let cap = usize::try_from(pacing.burst).unwrap_or(0).saturating_add(1);
        let marks = Marks {
            windows: Vec::with_capacity(if pacing.trace { cap } else { 0 }),
            late: Vec::with_capacity(if keep.is_some() { cap } else { 0 }),
            split: pacing.trace,
            keep_over: keep.as_ref().map(|k| k.over_ns),
        };
        Ok(Self {
            tid: recording.tid(),
            comm: std::thread::current()
                .name()
                .unwrap_or("monitor")
                .to_string(),
            recording,
            marks,
            keep,
            began_ns: 0,
        })
    }

    fn begin(&mut self) -> anyhow::Result<()> {
        self.marks.windows.clear();
        self.marks.late.clear();
        self.began_ns = monotonic_ns();
        self.recording.resume()?;
        Ok(())
    }

    /// Stops recording, records each wake's components into `out` (`--trace`) and
    /// hands a burst with late wakes to the flight recorder.
    fn end(&mut self, out: &mut CellRecord, requested_ns: u64) -> anyhow::Result<()> {
        self.recording.pause()?;
        let Some((timeline, lost)) = self.recording.take() else {
            return Ok(());
        };
        for w in &self.marks.windows {
            let mut w = *w;
            w.tid = self.tid;
            out.record_components(&sleeplab_account::account(&timeline, &w));
        }
        if let Some(keep) = &self.keep
            && !self.marks.late.is_empty()
        {
            let seconds = monotonic_ns().saturating_sub(self.began_ns) as f64 / 1e9;
            let late = std::mem::take(&mut self.marks.late);
            keep.send(Burst {
                tid: self.tid,
                comm: self.comm.clone(),
                seconds,
                requested_ns,
                timeline,
                lost,
                late,
            });
        }
        Ok(())
    }
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

/// A probe's per-thread state, kept across bursts; a periodic probe's wake buffer is
/// reserved once, for a whole burst.
enum ProbeState {
    OneShot(Waiter),
    Periodic(periodic::PeriodicTimer, Vec<Wake>),
    Precise(Box<PreciseSleeper>, Vec<Wake>),
}

impl ProbeState {
    fn new(cell: &Cell, burst: u64) -> anyhow::Result<Self> {
        // One more than the burst's deadlines: a wake may come after the last.
        let wakes = || Vec::with_capacity(usize::try_from(burst).unwrap_or(0).saturating_add(1));
        Ok(match cell.probe {
            Probe::OneShot(m) => Self::OneShot(Waiter::of(m)?),
            Probe::Periodic(m) => Self::Periodic(m.build(&periodic::Options::default())?, wakes()),
            // Built here: it sets this thread's timer slack to 1 ns, as in use.
            Probe::Precise => Self::Precise(Box::new(PreciseSleeper::new()), wakes()),
        })
    }

    /// One burst into `out`: `pacing.burst` waits of `ns`, or `pacing.burst` scheduled
    /// ticks of period `ns`; stopping early on `stop`.
    fn burst(
        &mut self,
        ns: u64,
        pacing: Pacing,
        out: &mut CellRecord,
        stop: &Stop,
        marks: &mut Marks,
    ) -> anyhow::Result<()> {
        let stall = pacing.stall_ns;
        // The thread id is set when the burst's wakes are split (BurstTracing::end).
        let tid = 0;
        match self {
            Self::OneShot(waiter) => {
                for _ in 0..pacing.burst {
                    let t0 = monotonic_ns();
                    waiter.wait(ns);
                    let t1 = monotonic_ns();
                    let lateness = signed(t1 - t0) - signed(ns);
                    out.record(lateness, stall);
                    marks.late(t1, lateness);
                    if marks.split {
                        marks.windows.push(
                            Window::relative(tid, t0, ns, t1)
                                .never_blocking(!waiter.mechanism().blocks()),
                        );
                    }
                    if stop.requested() {
                        break;
                    }
                }
            }
            Self::Periodic(timer, wakes) => {
                let plan = Plan {
                    period_ns: ns,
                    ticks: pacing.burst,
                    slack_given: false,
                };
                wakes.clear();
                let run = ticks::run(timer, &plan, wakes, stop)?;
                let schedule = run.schedule(&plan, wakes);
                let account = ticks::account(&schedule, wakes);
                out.record_ticks(&account, stall);
                marks.late_ticks(&account, wakes);
                if marks.split {
                    marks.windows.extend(ticks::windows(
                        &schedule,
                        wakes,
                        tid,
                        timer.mechanism().blocks(),
                    ));
                }
            }
            Self::Precise(sleeper, wakes) => {
                wakes.clear();
                let mut grid = Grid::new(sleeper.now_ns(), ns);
                while grid.covered() < pacing.burst && !stop.requested() {
                    let r = sleeper.sleep_until_ns(grid.next_deadline());
                    // It stands for every deadline passed while it slept: the next sleep
                    // aims at the first one still ahead (skip ahead, as a ticker does).
                    let wake = Wake {
                        wake_ns: r.woke_ns,
                        expirations: grid.passed(r.woke_ns),
                    };
                    grid.advance(wake);
                    wakes.push(wake);
                    out.spin_ns += r.spin_ns;
                    if marks.split {
                        marks.windows.push(Window::of_report(tid, &r));
                    }
                }
                let cut = grid.covered() < pacing.burst;
                let schedule = Schedule::of_run(grid.t0_ns(), ns, pacing.burst, cut, wakes);
                let account = ticks::account(&schedule, wakes);
                out.record_ticks(&account, stall);
                marks.late_ticks(&account, wakes);
                out.margin_ns = Some(sleeper.margin_ns());
            }
        }
        Ok(())
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
            trace: false,
        };
        let stopped = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stopped);
        let stop = Stop::when(move || flag.load(Ordering::Relaxed));
        let handles = spawn(
            &cells,
            &records,
            pacing,
            ThreadSettings::default(),
            Vec::new(),
            &stop,
        )
        .unwrap();
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

    /// A burst of a `tick:` or precise cell records each of its scheduled ticks once,
    /// however late its wakes came (every one, where the mechanism's counts are exact;
    /// estimated counts may leave a deadline to no wake, which is then missed), and no
    /// wake is early: the estimated counts are reconciled with the wake times as
    /// `sleeplab timers` does.
    #[test]
    fn a_burst_records_each_scheduled_tick_once() {
        let cells = parse_cells(
            &[
                "tick:timerfd-interval@1ms".into(),
                "tick:posix-timer-thread@1ms".into(),
                "tick:setitimer@1ms".into(),
                "precise@1ms".into(),
                "nanosleep@100us".into(),
            ],
            &[],
        )
        .unwrap();
        let pacing = Pacing {
            interval_ns: 20_000_000,
            burst: 20,
            stall_ns: u64::MAX,
            trace: false,
        };
        let never = Stop::when(|| false);
        for cell in &cells {
            let name = &cell.name;
            let mut probe = ProbeState::new(cell, pacing.burst).unwrap();
            for _ in 0..2 {
                let mut out = CellRecord::default();
                probe
                    .burst(
                        cell.requested_ns,
                        pacing,
                        &mut out,
                        &never,
                        &mut Marks::default(),
                    )
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let exact = match cell.probe {
                    Probe::Periodic(m) => m.exact_counts,
                    _ => true,
                };
                if exact {
                    assert_eq!(out.count(), pacing.burst, "{name}");
                } else {
                    assert!(out.count() <= pacing.burst, "{name}: {}", out.count());
                }
                assert_eq!(out.early, 0, "{name} woke early");
                assert!(out.missed < pacing.burst, "{name}: {out:?}");
                assert_eq!(out.stalls, 0, "nothing reaches an infinite threshold");
            }
        }
    }
}
