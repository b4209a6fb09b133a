//! What each way of following a program costs the machine's other work: a thread no
//! tracer follows (started before any of them, and no child of the followed thread),
//! pinned to another CPU, times `getppid` calls (each passes the system-call
//! tracepoints) and pipe round trips with a partner on its CPU (each passes them, and
//! two switches and two wakeups), while a side's tracer records and a thread of its own
//! drains it, as `explain --pid` runs. Sides and rounds interleaved as the waits are.

use std::sync::mpsc::{Receiver, Sender, channel};

use sleeplab::clock::monotonic_ns;
use sleeplab_account::Detail;
use sleeplab_capture::{Drainer, SyscallsBy, Tracer};

use super::Mode;
use super::report::fmt_us;

/// `getppid` calls a side's job times.
const CALLS: u32 = 100_000;
/// Pipe round trips a side's job times.
const TRIPS: u32 = 10_000;

/// The sides compared: no tracer, and each way `explain --pid` follows a program.
pub(crate) const SIDES: [Mode; 5] = [
    Mode::Untraced,
    Mode::Program(Detail::Interrupts, SyscallsBy::Filter),
    Mode::Program(Detail::Interrupts, SyscallsBy::Bpf),
    Mode::Program(Detail::Light, SyscallsBy::Filter),
    Mode::Program(Detail::Interrupts, SyscallsBy::PidList),
];

/// One round's figures of a side: ns per `getppid`, ns per pipe round trip.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Figures {
    pub(crate) call_ns: f64,
    pub(crate) trip_ns: f64,
}

/// The other CPU's worker: times a job when asked.
struct Worker {
    jobs: Sender<()>,
    done: Receiver<Figures>,
}

impl Worker {
    /// The worker and its pipe partner, both pinned to `cpu`.
    fn start(cpu: usize) -> anyhow::Result<Self> {
        let (mut to_partner, mut from_partner) = ([0i32; 2], [0i32; 2]);
        // SAFETY: each array holds the two descriptors pipe(2) writes.
        if unsafe { libc::pipe(to_partner.as_mut_ptr()) } != 0
            || unsafe { libc::pipe(from_partner.as_mut_ptr()) } != 0
        {
            anyhow::bail!("pipe: {}", std::io::Error::last_os_error());
        }
        let (ask, answer) = (to_partner, from_partner);
        std::thread::spawn(move || {
            let _ = sleeplab::system::pin_to_cpu(cpu);
            let mut b = [0u8; 1];
            // SAFETY: one byte into and out of a live buffer, on descriptors this
            // thread owns for the process's life; it ends when the pipe does.
            while unsafe { libc::read(ask[0], b.as_mut_ptr().cast(), 1) } == 1 {
                unsafe { libc::write(answer[1], b.as_ptr().cast(), 1) };
            }
        });
        let (jobs, asked) = channel::<()>();
        let (report, done) = channel();
        std::thread::spawn(move || {
            let _ = sleeplab::system::pin_to_cpu(cpu);
            for () in asked {
                let t0 = monotonic_ns();
                for _ in 0..CALLS {
                    // SAFETY: no preconditions.
                    unsafe { libc::getppid() };
                }
                let t1 = monotonic_ns();
                let mut b = [0u8; 1];
                for _ in 0..TRIPS {
                    // SAFETY: as the partner's loop.
                    unsafe {
                        libc::write(ask[1], b.as_ptr().cast(), 1);
                        libc::read(answer[0], b.as_mut_ptr().cast(), 1);
                    }
                }
                let t2 = monotonic_ns();
                let _ = report.send(Figures {
                    call_ns: (t1 - t0) as f64 / f64::from(CALLS),
                    trip_ns: (t2 - t1) as f64 / f64::from(TRIPS),
                });
            }
        });
        Ok(Self { jobs, done })
    }

    fn time(&self) -> anyhow::Result<Figures> {
        self.jobs.send(())?;
        Ok(self.done.recv()?)
    }
}

/// Per side ([`SIDES`] order), its figures in each of `rounds` rounds, the worker on
/// `cpu`, each side's tracer opened by `open` (none: untraced) and drained on a
/// thread of its own while the worker runs.
pub(crate) fn measure(
    rounds: u32,
    cpu: usize,
    mut open: impl FnMut(Mode) -> anyhow::Result<Option<Tracer>>,
) -> anyhow::Result<Vec<Vec<Figures>>> {
    let worker = Worker::start(cpu)?;
    let mut rows = vec![Vec::new(); SIDES.len()];
    for round in 0..rounds as usize {
        for k in 0..SIDES.len() {
            let side = (k + round) % SIDES.len();
            let drainer = open(SIDES[side])?.map(Drainer::start).transpose()?;
            rows[side].push(worker.time()?);
            if let Some(d) = drainer {
                d.finish();
            }
        }
    }
    Ok(rows)
}

/// The median of `v` (the mean of the middle two of an even count); 0 when empty.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The table of `rows` ([`measure`]'s): per side, the rounds' median of each figure
/// and of its per-round difference from the untraced side's.
pub(crate) fn report(rows: &[Vec<Figures>], cpu: usize) -> Vec<String> {
    let mut out = vec![
        format!(
            "**What each way of following a program costs a thread it does not follow** \
             (on CPU {cpu}, {} rounds; each round times {CALLS} `getppid` calls and {TRIPS} \
             pipe round trips with a partner on its CPU, per side, the sides' order \
             rotating; the rounds' medians):\n",
            rows.first().map_or(0, Vec::len)
        ),
        "| side | per getppid | added | per pipe round trip | added |".into(),
        "|---|---:|---:|---:|---:|".into(),
    ];
    let base = &rows[0];
    for (mode, figs) in SIDES.iter().zip(rows) {
        let added = |f: fn(&Figures) -> f64| {
            median(figs.iter().zip(base).map(|(a, b)| f(a) - f(b)).collect())
        };
        let call = median(figs.iter().map(|f| f.call_ns).collect());
        let trip = median(figs.iter().map(|f| f.trip_ns).collect());
        let (add_call, add_trip) = if mode == &Mode::Untraced {
            ("–".to_string(), "–".to_string())
        } else {
            (
                format!("{:.0} ns", added(|f| f.call_ns)),
                fmt_us(added(|f| f.trip_ns)),
            )
        };
        out.push(format!(
            "| {} | {call:.0} ns | {add_call} | {} | {add_trip} |",
            mode.label(),
            fmt_us(trip)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_differences_are_per_round() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(Vec::new()), 0.0);
        let f = |c: f64, t: f64| Figures {
            call_ns: c,
            trip_ns: t,
        };
        let rows = vec![
            vec![f(100.0, 4_000.0), f(120.0, 4_200.0), f(110.0, 4_100.0)],
            vec![f(500.0, 7_000.0), f(540.0, 7_600.0), f(530.0, 7_300.0)],
            vec![f(150.0, 5_000.0); 3],
            vec![f(400.0, 6_000.0); 3],
            vec![f(200.0, 6_700.0); 3],
        ];
        let lines = report(&rows, 1);
        assert_eq!(lines.len(), 3 + SIDES.len(), "{lines:?}");
        assert_eq!(lines[3], "| untraced | 110 ns | – | 4.10 µs | – |");
        // Per round: 400, 420, 420 and 3.0, 3.4, 3.2 µs: the medians 420 ns and 3.2 µs.
        assert_eq!(
            lines[4],
            "| program | 530 ns | 420 ns | 7.30 µs | 3.20 µs |"
        );
        assert_eq!(
            lines[5],
            "| program, BPF | 150 ns | 40 ns | 5.00 µs | 0.90 µs |"
        );
        assert_eq!(
            lines[7],
            "| program, pid list | 200 ns | 90 ns | 6.70 µs | 2.60 µs |"
        );
    }
}
