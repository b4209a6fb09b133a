//! Every Rust door of the library as a user walks through it, against the plain sleeps it
//! replaces: a 60 Hz loop per contender, each on a thread of its own (a plain sleep keeps
//! the thread's default timer slack; a sleeper sets its own thread's), each built at the
//! start of the run and used from its first frame (no warm-up), contenders taking turns
//! block by block so that the host's drift spreads over all of them.
//!
//! | contender | how the loop waits |
//! |---|---|
//! | `std::thread::sleep` | `thread::sleep(period)` (plain, relative) |
//! | `clock_nanosleep` | an absolute `clock_nanosleep` to each grid instant (plain) |
//! | `PreciseSleeper::sleep` | `sleeper.sleep(period)` (relative) |
//! | `PreciseSleeper::sleep_until` | `sleeper.sleep_until(grid instant)` |
//! | `Ticker::tick` | `ticker.tick()` (missed ticks skipped) |
//! | `tokio::time::sleep_until` | on a current-thread runtime (feature `tokio`) |
//! | `ReactorTimer::sleep_until` | on a current-thread runtime (feature `tokio`) |
//! | `ReactorInterval::tick` | on a current-thread runtime (feature `tokio`) |
//!
//! A frame's lateness is the loop's clock read after the call minus what the call was
//! asked for: the grid instant (absolute and periodic forms), or the clock read before
//! the call plus the period (relative forms). An absolute form's grid starts a period
//! after each block begins; a periodic form keeps its own grid, and the first tick of
//! each block (overdue after the pause between blocks: it fires at once) is not counted. CPU is the contender thread's CPU time
//! over the block's wall time. Prints one JSON document (the doors format, read by
//! `scripts/bench_doors_report.py`).
//!
//! ```text
//! cargo run -p sleeplab --release --features tokio --example doors -- \
//!     [--frames N] [--block B] [--rate HZ] [--only NAME,...]
//! ```
//! Bad input: one line naming it, exit 2.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use sleeplab::clock::{Env, RealEnv, monotonic_ns, thread_cpu_ns};
use sleeplab::precise::{MissedTickBehavior, PreciseSleeper, Ticker};

/// One contender: its name, whether it is a plain sleep, its form, and how it is built on
/// its own thread.
struct Contender {
    name: &'static str,
    plain: bool,
    form: &'static str,
    make: fn(u64) -> Box<dyn Door>,
}

/// A door, built on its contender's thread: runs `frames` frames of `period` ns and
/// returns each frame's (asked-for instant, the loop's clock read after the call).
trait Door {
    fn block(&mut self, frames: usize, period: u64) -> Vec<(u64, u64)>;
}

struct StdSleep;
impl Door for StdSleep {
    fn block(&mut self, frames: usize, period: u64) -> Vec<(u64, u64)> {
        (0..frames)
            .map(|_| {
                let asked = monotonic_ns() + period;
                thread::sleep(Duration::from_nanos(period));
                (asked, monotonic_ns())
            })
            .collect()
    }
}

struct ClockNanosleep;
impl Door for ClockNanosleep {
    fn block(&mut self, frames: usize, period: u64) -> Vec<(u64, u64)> {
        let start = monotonic_ns() + period;
        (0..frames as u64)
            .map(|k| {
                let deadline = start + k * period;
                let mut env = RealEnv;
                // As a plain loop would: again after an interrupted return.
                while env.now() < deadline {
                    env.sleep_until(deadline);
                }
                (deadline, monotonic_ns())
            })
            .collect()
    }
}

struct Relative(PreciseSleeper);
impl Door for Relative {
    fn block(&mut self, frames: usize, period: u64) -> Vec<(u64, u64)> {
        (0..frames)
            .map(|_| {
                let asked = monotonic_ns() + period;
                self.0.sleep(Duration::from_nanos(period));
                (asked, monotonic_ns())
            })
            .collect()
    }
}

struct Absolute(PreciseSleeper);
impl Door for Absolute {
    fn block(&mut self, frames: usize, period: u64) -> Vec<(u64, u64)> {
        let start = monotonic_ns() + period;
        (0..frames as u64)
            .map(|k| {
                let deadline = start + k * period;
                self.0.sleep_until_ns(deadline);
                (deadline, monotonic_ns())
            })
            .collect()
    }
}

struct Ticking(Ticker);
impl Door for Ticking {
    fn block(&mut self, frames: usize, _period: u64) -> Vec<(u64, u64)> {
        // The first tick of a block is the one the pause since the last block left
        // overdue (it fires at once; the grid then skips to the next instant): an artifact
        // of taking turns, not counted.
        self.0.tick();
        (0..frames)
            .map(|_| {
                let t = self.0.tick();
                (t.scheduled_ns, monotonic_ns())
            })
            .collect()
    }
}

#[cfg(feature = "tokio")]
mod asyncs {
    use super::*;
    use sleeplab::precise::asleep::{ReactorInterval, ReactorTimer};
    use tokio::runtime::{Builder, Runtime};

    fn runtime() -> Runtime {
        Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime")
    }

    pub struct TokioSleepUntil(pub Runtime);
    impl Door for TokioSleepUntil {
        fn block(&mut self, frames: usize, period: u64) -> Vec<(u64, u64)> {
            self.0.block_on(async {
                let start = monotonic_ns() + period;
                let base = tokio::time::Instant::now();
                let base_ns = monotonic_ns();
                let mut out = Vec::with_capacity(frames);
                for k in 0..frames as u64 {
                    let deadline = start + k * period;
                    let at = base + Duration::from_nanos(deadline.saturating_sub(base_ns));
                    tokio::time::sleep_until(at).await;
                    out.push((deadline, monotonic_ns()));
                }
                out
            })
        }
    }

    pub struct Reactor(pub Runtime, pub ReactorTimer);
    impl Door for Reactor {
        fn block(&mut self, frames: usize, period: u64) -> Vec<(u64, u64)> {
            let timer = &self.1;
            self.0.block_on(async {
                let start = monotonic_ns() + period;
                let mut out = Vec::with_capacity(frames);
                for k in 0..frames as u64 {
                    let deadline = start + k * period;
                    timer.sleep_until_ns(deadline).await;
                    out.push((deadline, monotonic_ns()));
                }
                out
            })
        }
    }

    pub struct Interval(pub Runtime, pub Option<ReactorInterval>);
    impl Door for Interval {
        fn block(&mut self, frames: usize, period: u64) -> Vec<(u64, u64)> {
            let slot = &mut self.1;
            self.0.block_on(async {
                let interval = slot.get_or_insert_with(|| {
                    ReactorInterval::new(Duration::from_nanos(period))
                        .expect("an interval on this runtime")
                        .with_missed_tick_behavior(MissedTickBehavior::Skip)
                });
                // As the Ticker's: the overdue first tick is not counted.
                interval.tick().await;
                let mut out = Vec::with_capacity(frames);
                for _ in 0..frames {
                    let t = interval.tick().await;
                    out.push((t.scheduled_ns, monotonic_ns()));
                }
                out
            })
        }
    }

    pub fn tokio_sleep_until(_: u64) -> Box<dyn Door> {
        Box::new(TokioSleepUntil(runtime()))
    }

    pub fn reactor_timer(_: u64) -> Box<dyn Door> {
        let rt = runtime();
        let timer = rt
            .block_on(async { ReactorTimer::new() })
            .expect("a reactor timer");
        Box::new(Reactor(rt, timer))
    }

    pub fn reactor_interval(_: u64) -> Box<dyn Door> {
        // Built on its runtime at its first block, where the period is known.
        Box::new(Interval(runtime(), None))
    }
}

fn contenders() -> Vec<Contender> {
    let mut all = vec![
        Contender {
            name: "std::thread::sleep",
            plain: true,
            form: "relative",
            make: |_| Box::new(StdSleep),
        },
        Contender {
            name: "clock_nanosleep",
            plain: true,
            form: "absolute",
            make: |_| Box::new(ClockNanosleep),
        },
        Contender {
            name: "PreciseSleeper::sleep",
            plain: false,
            form: "relative",
            make: |_| Box::new(Relative(PreciseSleeper::new())),
        },
        Contender {
            name: "PreciseSleeper::sleep_until",
            plain: false,
            form: "absolute",
            make: |_| Box::new(Absolute(PreciseSleeper::new())),
        },
        Contender {
            name: "Ticker::tick",
            plain: false,
            form: "periodic",
            make: |period| {
                Box::new(Ticking(
                    Ticker::new(Duration::from_nanos(period))
                        .with_missed_tick_behavior(MissedTickBehavior::Skip),
                ))
            },
        },
    ];
    #[cfg(feature = "tokio")]
    all.extend([
        Contender {
            name: "tokio::time::sleep_until",
            plain: true,
            form: "absolute",
            make: asyncs::tokio_sleep_until,
        },
        Contender {
            name: "ReactorTimer::sleep_until",
            plain: false,
            form: "absolute",
            make: asyncs::reactor_timer,
        },
        Contender {
            name: "ReactorInterval::tick",
            plain: false,
            form: "periodic",
            make: asyncs::reactor_interval,
        },
    ]);
    all
}

/// A block's frames, CPU and wall time.
struct Block {
    frames: Vec<(u64, u64)>,
    cpu_ns: u64,
    wall_ns: u64,
}

/// A contender's thread: builds its door at once, then runs each block it is sent.
fn spawn(
    c: &Contender,
    period: u64,
) -> (
    mpsc::Sender<usize>,
    mpsc::Receiver<Block>,
    u64,
    thread::JoinHandle<()>,
) {
    let (go_tx, go_rx) = mpsc::channel::<usize>();
    let (done_tx, done_rx) = mpsc::channel::<Block>();
    let (slack_tx, slack_rx) = mpsc::channel::<u64>();
    let make = c.make;
    let handle = thread::Builder::new()
        .name(c.name.chars().take(15).collect())
        .spawn(move || {
            let mut door = make(period);
            let _ = slack_tx.send(sleeplab::system::timer_slack_ns());
            for frames in go_rx {
                let (cpu0, wall0) = (thread_cpu_ns(), monotonic_ns());
                let frames = door.block(frames, period);
                let block = Block {
                    frames,
                    cpu_ns: thread_cpu_ns() - cpu0,
                    wall_ns: monotonic_ns() - wall0,
                };
                if done_tx.send(block).is_err() {
                    return;
                }
            }
        })
        .expect("a contender thread");
    let slack = slack_rx.recv().expect("the contender thread starts");
    (go_tx, done_rx, slack, handle)
}

struct Args {
    frames: usize,
    block: usize,
    rate: f64,
    only: Option<Vec<String>>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        frames: 600,
        block: 50,
        rate: 60.0,
        only: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--frames" => a.frames = parse_count(&flag, &value()?)?,
            "--block" => a.block = parse_count(&flag, &value()?)?,
            "--rate" => {
                let v = value()?;
                a.rate = v
                    .parse()
                    .ok()
                    .filter(|r: &f64| *r > 0.0 && *r <= 100_000.0)
                    .ok_or(format!("--rate {v}: a rate in (0, 100000] Hz"))?;
            }
            "--only" => a.only = Some(value()?.split(',').map(str::to_owned).collect()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if let Some(only) = &a.only {
        let known: Vec<&str> = contenders().iter().map(|c| c.name).collect();
        if let Some(bad) = only.iter().find(|n| !known.contains(&n.as_str())) {
            return Err(format!(
                "--only {bad}: not a contender ({})",
                known.join(", ")
            ));
        }
    }
    Ok(a)
}

fn parse_count(flag: &str, v: &str) -> Result<usize, String> {
    v.parse()
        .ok()
        .filter(|&n: &usize| n >= 1)
        .ok_or(format!("{flag} {v}: a count of at least 1"))
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("doors: {e}");
            std::process::exit(2);
        }
    };
    let period = (1e9 / args.rate).round() as u64;
    let chosen: Vec<Contender> = contenders()
        .into_iter()
        .filter(|c| {
            args.only
                .as_ref()
                .is_none_or(|o| o.iter().any(|n| n == c.name))
        })
        .collect();
    let lanes: Vec<_> = chosen.iter().map(|c| spawn(c, period)).collect();
    let mut blocks: Vec<Vec<Block>> = chosen.iter().map(|_| Vec::new()).collect();
    let mut done = 0;
    let mut turn = 0;
    while done < args.frames {
        let n = args.block.min(args.frames - done);
        // Each round starts one contender later, so none always follows the same one.
        for i in 0..lanes.len() {
            let k = (i + turn) % lanes.len();
            lanes[k].0.send(n).expect("the contender thread runs");
            blocks[k].push(lanes[k].1.recv().expect("the contender thread answers"));
        }
        done += n;
        turn += 1;
    }
    let mut out =
        String::from("{\"format\":\"sleeplab doors\",\"version\":1,\"language\":\"rust\"");
    out += &format!(
        ",\"rate_hz\":{},\"frames\":{},\"block\":{},\"contenders\":[",
        args.rate, args.frames, args.block
    );
    for (i, (c, (_, _, slack, _))) in chosen.iter().zip(&lanes).enumerate() {
        if i > 0 {
            out.push(',');
        }
        out += &format!(
            "{{\"name\":\"{}\",\"plain\":{},\"form\":\"{}\",\"timer_slack_ns\":{},\"blocks\":[",
            c.name, c.plain, c.form, slack
        );
        for (j, b) in blocks[i].iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            let late: Vec<String> = b
                .frames
                .iter()
                .map(|&(asked, woke)| (woke as i64 - asked as i64).to_string())
                .collect();
            out += &format!(
                "{{\"cpu_ns\":{},\"wall_ns\":{},\"lateness_ns\":[{}]}}",
                b.cpu_ns,
                b.wall_ns,
                late.join(",")
            );
        }
        out += "]}";
    }
    out += "]}";
    println!("{out}");
    for (tx, _, _, handle) in lanes {
        drop(tx);
        let _ = handle.join();
    }
}
