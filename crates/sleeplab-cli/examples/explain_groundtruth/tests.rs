//! The explain_groundtruth example's tests: its arithmetic on numbers given by hand,
//! and, as root, its core causes on the real kernel (a few hundred wakes each: the
//! whole file in a few seconds). Where tracing is unavailable (not root) the traced
//! tests say so and pass, unless `CI` is set: CI runs them as root.

use super::*;
use companion::{Block, Verdict};
use judge::{Outcome, Row, passes, share_over_blocks, table};
use scenarios::{Scored, window};
use sleeplab_cli::trace::event::{Comm, Event, FLAG_HARDIRQ, Kind};
use sleeplab_cli::trace::{Component, Holder, Timeline, WakeAccount, account};

fn scored(injected_ns: u64, parts: &[(Component, u64)], holder_named: Option<bool>) -> Scored {
    Scored {
        injected_ns,
        account: WakeAccount::of_parts(parts),
        holder_named,
        window: window(1, 0, 1_000, 2_000),
        events: Vec::new(),
    }
}

#[test]
fn the_share_is_judged_over_blocks() {
    // Nine blocks of 50 all passing and one at 25 of 50: 95 % pooled; over blocks the
    // ratio estimator's standard error is √(10/9 · 562.5) / 500 = 0.05, t(9) = 2.2622.
    let mut blocks = vec![(50, 50); 9];
    blocks.push((25, 50));
    let (lo, hi) = share_over_blocks(&blocks).unwrap();
    assert!((lo - (0.95 - 2.262_157_162_8 * 0.05)).abs() < 1e-6, "{lo}");
    assert_eq!(hi, 1.0, "clamped");
    assert_eq!(share_over_blocks(&[(50, 50); 10]), Some((1.0, 1.0)));
    assert_eq!(share_over_blocks(&[(50, 50); 7]), None, "7 blocks: too few");
    let row = |blocks: Vec<(usize, usize)>| Row {
        passing: blocks.iter().map(|b| b.0).sum(),
        wakes: blocks.iter().map(|b| b.1).sum(),
        blocks,
        ..Row::of(Scenario::Slack(50_000), &[])
    };
    // The same 95 % pooled share: undecided when one block carries every failure,
    // met when none fails, missed when every block is at 90 %, and by point value
    // below eight blocks.
    assert_eq!(row(blocks).outcome(), Outcome::Undecided);
    assert_eq!(row(vec![(50, 50); 10]).outcome(), Outcome::Met);
    assert_eq!(row(vec![(45, 50); 10]).outcome(), Outcome::Missed);
    assert_eq!(
        row(vec![(48, 50); 7]).outcome(),
        Outcome::ByPointValue(true)
    );
    assert_eq!(
        row(vec![(40, 50); 7]).outcome(),
        Outcome::ByPointValue(false)
    );
}

#[test]
fn deadlines_sit_at_the_offset_past_a_millisecond() {
    let ms = 1_000_000;
    assert_eq!(inject::grid_deadline(5 * ms, ms, 400_000), 6 * ms + 400_000);
    assert_eq!(
        inject::grid_deadline(5 * ms + 500_000, ms, 400_000),
        7 * ms + 400_000
    );
    assert_eq!(
        inject::grid_deadline(5 * ms - 600_000, ms, 400_000),
        5 * ms + 400_000
    );
    assert_eq!(inject::grid_deadline(0, 0, 400_000), 400_000);
}

#[test]
fn a_wake_passes_at_90_percent_in_its_component_and_with_its_holder() {
    let c = Component::Slack;
    assert!(passes(&scored(50_000, &[(c, 45_000)], None), c));
    assert!(!passes(&scored(50_000, &[(c, 44_999)], None), c));
    assert!(!passes(
        &scored(50_000, &[(Component::TimerIrq, 50_000)], None),
        c
    ));
    let rq = Component::RunQueue;
    assert!(passes(&scored(1_000, &[(rq, 1_000)], Some(true)), rq));
    assert!(!passes(&scored(1_000, &[(rq, 1_000)], Some(false)), rq));
}

#[test]
fn a_row_counts_its_passing_wakes_and_judges_at_95_percent() {
    let s = Scenario::Slack(50_000);
    let mut wakes: Vec<Scored> = (0..19)
        .map(|_| scored(50_000, &[(Component::Slack, 50_000)], None))
        .collect();
    wakes.push(scored(50_000, &[(Component::Slack, 10_000)], None));
    let row = Row::of(s, &wakes);
    assert_eq!((row.wakes, row.passing), (20, 19));
    assert!(row.passed(), "19 of 20 is 95 %");
    assert_eq!(row.injected_median_ns, Some(50_000.0));
    assert_eq!(row.ratio_median, Some(1.0));
    assert_eq!(row.failures.len(), 1);
    assert!(
        row.failures[0] == "injected 50 µs, late 10 µs: slack 10 µs",
        "{:?}",
        row.failures
    );
    wakes.push(scored(50_000, &[(Component::Slack, 10_000)], None));
    assert!(!Row::of(s, &wakes).passed(), "19 of 21 is under 95 %");
    let lines = table(&[row]).join("\n");
    assert!(
        lines.contains("| timer slack 50 µs | slack | 50 µs | 0 | 20 | – 19 of 20 (95.0 %)"),
        "{lines}"
    );
}

#[test]
fn a_run_queue_row_counts_the_holder_named() {
    let s = Scenario::RunQueue(200_000);
    let mut a = scored(200_000, &[(Component::RunQueue, 199_000)], Some(true));
    a.account.holder = Some(Holder {
        comm: inject::HOG_COMM.into(),
        pid: 7,
    });
    let b = scored(200_000, &[(Component::RunQueue, 199_000)], Some(false));
    let row = Row::of(s, &[a, b]);
    assert_eq!(row.holder_named, Some((1, 2)));
    assert_eq!(row.passing, 1);
}

/// A block of `n` wakes, each late by `late` with `idle` in idle_wakeup and `irq` in
/// timer_irq.
fn block(n: usize, late: i64, idle: u64, irq: u64) -> Block {
    let mut p = sleeplab_cli::trace::Parts::default();
    p.add(Component::IdleWakeup, idle);
    p.add(Component::TimerIrq, irq);
    Block {
        lateness: vec![late; n],
        parts: vec![p; n],
        untraced: 0,
    }
}

#[test]
fn the_companion_is_judged_over_rounds() {
    // Eight rounds: without, 60 µs late with 20 µs idle wakeup and 30 µs timer irq;
    // with, 25 + r µs late, no idle wakeup, 12 µs timer irq. The fall (35 − r) and what
    // the components said (38) per round.
    let rounds: Vec<[Block; 2]> = (0..8)
        .map(|r| {
            [
                block(5, 60_000, 20_000, 30_000),
                block(5, 25_000 + r * 1_000, 0, 12_000),
            ]
        })
        .collect();
    let v = Verdict::of(&rounds);
    assert_eq!(v.idle_with.0, Some(0.0));
    assert_eq!(v.idle_is_zero(), Some(true));
    assert_eq!(v.said.0, Some(38_000.0));
    assert_eq!(v.fall.0, Some(31_500.0));
    // The falls run 28–35 µs, the components' 38 µs each: 3–10 µs apart per round.
    assert_eq!(v.fall_agrees(), Some(false));
    assert_eq!(v.intervals_overlap(), Some(false));
    let lines = companion::report(&rounds, 5).join("\n");
    assert!(
        lines.contains("- ✅ with the companion, idle_wakeup's median is 0 [0–0]"),
        "{lines}"
    );
    assert!(
        lines.contains("- ❌ the median lateness fell by 31.5 µs [28–35 µs] (per round"),
        "{lines}"
    );
    assert!(
        lines.contains("| fell by | 31.5 µs [28–35 µs] | 0 [0–0] | 18 µs [18–18 µs] | 20 µs"),
        "{lines}"
    );
    // Agreeing: the lateness falls by what the components said, to within ±400 ns.
    let rounds: Vec<[Block; 2]> = (0..8)
        .map(|r| {
            [
                block(5, 60_000, 20_000, 29_600 + r * 100),
                block(5, 22_000, 0, 12_000),
            ]
        })
        .collect();
    let v = Verdict::of(&rounds);
    assert_eq!(v.fall_agrees(), Some(true));
    // Rounds that move both by as much (the host's moment) overlap widely, but each
    // round's fall is 5 µs more than its components said: the paired difference decides.
    let rounds: Vec<[Block; 2]> = (0..8)
        .map(|r| {
            [
                block(5, 60_000 + r as i64 * 5_000, 20_000, 25_000 + r * 5_000),
                block(5, 20_000, 0, 10_000),
            ]
        })
        .collect();
    let v = Verdict::of(&rounds);
    assert_eq!(v.intervals_overlap(), Some(true));
    assert_eq!(v.fall_agrees(), Some(false));
    // Too few rounds for an interval: not judged.
    let v = Verdict::of(&rounds[..2]);
    assert_eq!((v.idle_is_zero(), v.fall_agrees()), (None, None));
}

/// A timer interrupt on the measuring CPU `cpu` at `now` (its events recorded 1 µs
/// later).
fn expiry(cpu: u32, timer: u64, now: u64) -> Event {
    Event {
        cpu,
        ..ev(
            now + 1_000,
            0,
            FLAG_HARDIRQ,
            Kind::TimerExpire {
                timer,
                now_ns: now as i64,
            },
        )
    }
}

#[test]
fn the_slack_in_effect_ends_at_the_first_timer_interrupt_after_the_soft_expiry() {
    let w = window(TID, 0, 1_000_000, 1_300_000);
    let slack =
        |events: Vec<Event>| scenarios::slack_in_effect(&Timeline::new(events), &w, 0, 200_000);
    // Nothing recorded: the slack set; the wake's own timer at its hard expiry: the same.
    assert_eq!(slack(vec![]), 200_000);
    assert_eq!(slack(vec![expiry(0, TIMER, 1_200_000)]), 200_000);
    // Another timer's interrupt 30 µs into the slack ran it; one before the soft
    // expiry, or on the other CPU, did not.
    assert_eq!(
        slack(vec![
            expiry(0, 0xb, 990_000),
            expiry(1, 0xc, 1_010_000),
            expiry(0, 0xb, 1_030_000),
            expiry(0, TIMER, 1_030_000),
        ]),
        30_000
    );
}

#[test]
fn an_events_line_reads_from_the_deadline() {
    let e = Event {
        time_ns: 1_012_500,
        cpu: 0,
        pid: 9,
        flags: FLAG_HARDIRQ,
        kind: Kind::Waking {
            pid: 100,
            target_cpu: 0,
        },
    };
    assert_eq!(
        evidence::line(&e, 1_000_000),
        "+12.50 µs cpu0 pid 9 [irq] sched_waking 100 → CPU 0"
    );
}

// ---- What the account does not do yet, shown on timelines built by hand after what
// the real scenarios recorded (run the example with `--events` to see them).

const TID: i32 = 100;
const HOG: i32 = 200;
const OTHER: i32 = 300;
const TIMER: u64 = 0xa;

fn ev(time_ns: u64, pid: i32, flags: u8, kind: Kind) -> Event {
    Event {
        time_ns,
        cpu: 0,
        pid,
        flags,
        kind,
    }
}

fn switch(t: u64, prev: (i32, &str), state: i64, next: (i32, &str)) -> Event {
    ev(
        t,
        prev.0,
        0,
        Kind::Switch {
            prev_pid: prev.0,
            prev_state: state,
            prev_comm: Comm::new(prev.1),
            next_pid: next.0,
            next_comm: Comm::new(next.1),
        },
    )
}

/// The start of a 1 ms absolute sleep (deadline 1 ms, no slack), woken on time.
fn sleep_and_wake() -> Vec<Event> {
    vec![
        ev(
            0,
            TID,
            0,
            Kind::TimerStart {
                timer: TIMER,
                soft_ns: 1_000_000,
                hard_ns: 1_000_000,
            },
        ),
        switch(100, (TID, "measuring"), 1, (OTHER, "other")),
        ev(
            1_000_200,
            OTHER,
            FLAG_HARDIRQ,
            Kind::TimerExpire {
                timer: TIMER,
                now_ns: 1_000_000,
            },
        ),
        ev(
            1_000_500,
            HOG,
            FLAG_HARDIRQ,
            Kind::Waking {
                pid: TID,
                target_cpu: 0,
            },
        ),
    ]
}

/// The run-queue cause with the measuring thread SCHED_OTHER on a busy machine: the
/// FIFO thread holds the CPU from before the deadline until 1 ms after it, then another
/// task runs 40 µs before the measuring thread gets the CPU. The account names the
/// task found on the CPU at the switch-in, not the one that kept the thread longest
/// (as `WakeAccount::holder` says it does); and the session does not record the FIFO
/// thread's switches (neither side is a followed thread), so the account could not
/// tell even if it looked.
#[test]

fn the_holder_is_the_task_that_held_the_cpu_longest() {
    let mut events = sleep_and_wake();
    events.extend([
        switch(800_000, (OTHER, "other"), 0, (HOG, inject::HOG_COMM)),
        switch(2_000_000, (HOG, inject::HOG_COMM), 1, (OTHER, "other")),
        switch(2_040_000, (OTHER, "other"), 1, (TID, "measuring")),
        ev(2_041_000, TID, 0, Kind::SysExit { id: 230 }),
    ]);
    let w = window(TID, 0, 1_000_000, 2_042_000);
    let a = account(&Timeline::new(events), &w);
    assert_eq!(a.parts.get(Component::RunQueue), 1_039_500);
    assert_eq!(
        a.holder.map(|h| h.pid),
        Some(HOG),
        "the FIFO thread held 999.5 µs of it"
    );
}

/// A wake whose switch onto the CPU was not recorded (the kernel drops a few; the
/// return-path cause lost 1 % of its wakes so) but whose system call's return was: the
/// stretch from that return to the clock read is known, and still comes out
/// unexplained with everything from the wakeup on.
#[test]

fn the_return_path_is_known_without_the_switch_in() {
    let mut events = sleep_and_wake();
    events.push(ev(1_020_000, TID, 0, Kind::SysExit { id: 230 }));
    let w = window(TID, 0, 1_000_000, 1_120_000);
    let a = account(&Timeline::new(events), &w);
    assert_eq!(a.parts.get(Component::Return), 100_000);
}

// ---- The core causes on the real kernel, as root.

/// The lock that runs these tests one at a time (each one's threads would change what
/// the others measure).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Wakes per cause. At the rule's thresholds (at least 95 % of wakes, each with at
/// least 90 % of the injected size), a busy 2-core VM fails a few wakes in a hundred
/// for reasons outside the account: another task's timer or a late tick interrupt ends
/// a slack early, the host delays an interrupt by tens or hundreds of µs, the kernel
/// drops a switch; 400 wakes keep a share of 95 % a bound those rare wakes do not reach
/// by chance (in about a second per cause).
const WAKES: usize = 400;

/// Holds [`SERIAL`] and pins this thread to CPU 0 when the kernel can be traced here;
/// `None` (skipped) when not, but under `CI`, which runs as root, it fails.
fn traced_on_cpu0() -> Option<std::sync::MutexGuard<'static, ()>> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    match sleeplab_cli::trace::available() {
        Ok(()) => {
            sleeplab::system::pin_to_cpu(0).expect("pinning to CPU 0");
            Some(guard)
        }
        Err(e) if std::env::var_os("CI").is_some() => panic!("tracing unavailable under CI: {e}"),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// Runs each of `list` for [`WAKES`] wakes and asserts that it passes (as root; see
/// [`traced_on_cpu0`]).
fn each_passes(list: &[Scenario]) {
    let Some(_alone) = traced_on_cpu0() else {
        return;
    };
    let rows = run_all(list, WAKES, 0).expect("running the causes");
    let text = table(&rows).join("\n");
    eprintln!("{text}");
    for r in &rows {
        assert!(r.passed(), "{}:\n{text}", r.label);
    }
}

#[test]
fn timer_slack_lands_in_slack() {
    each_passes(&[
        Scenario::Slack(10_000),
        Scenario::Slack(50_000),
        Scenario::Slack(200_000),
    ]);
}

/// The FIFO thread's burns, 1 ms and 5 ms: widened from the benchmark's 200 µs, not
/// the rule loosened. While the FIFO thread spins, a VM's host delays the timer
/// interrupt of the running vCPU by tens of µs in bursts (a tenth of the wakes in one
/// busy run) and by hundreds at times; until that interrupt the measuring thread is
/// not yet woken, so the account rightly counts the delay as the timer interrupt's,
/// and a 200 µs burn then falls under 90 % in the run queue.
#[test]
fn a_fifo_thread_on_the_cpu_lands_in_run_queue_and_is_named() {
    each_passes(&[Scenario::RunQueue(1_000_000), Scenario::RunQueue(5_000_000)]);
}

#[test]
fn busy_stretches_land_in_timer_arming_and_return_path() {
    each_passes(&[
        Scenario::Entry(20_000),
        Scenario::Entry(200_000),
        Scenario::Return(20_000),
        Scenario::Return(200_000),
    ]);
}

#[test]
fn an_overrunning_frame_lands_in_overrun() {
    each_passes(&[Scenario::Overrun(300_000)]);
}

/// With a SCHED_IDLE thread spinning on the measuring CPU, no wake finds the CPU idle:
/// idle_wakeup's median over blocks is about zero. (How far the lateness falls is not
/// asserted: on a busy machine the CPU is rarely idle without the companion either.)
#[test]
fn a_sched_idle_companion_ends_the_idle_wakeup() {
    let Some(_alone) = traced_on_cpu0() else {
        return;
    };
    let rounds = companion::run(6, 50, 0).expect("the companion's rounds");
    let lines = companion::report(&rounds, 50).join("\n");
    eprintln!("{lines}");
    assert_eq!(Verdict::of(&rounds).idle_is_zero(), Some(true), "{lines}");
}
