//! The explain_groundtruth example's tests: its arithmetic on numbers given by hand,
//! and, as root, its core causes on the real kernel (a few hundred wakes each: the
//! whole file in a few seconds). Where tracing is unavailable (not root) the traced
//! tests say so and pass, unless `CI` is set: CI runs them as root.

use super::*;
use companion::{Block, Verdict};
use judge::{Baseline, Booked, Outcome, Row, share_over_blocks, table};
use scenarios::{Scored, window};
use sleeplab_account::{Component, Holder, Timeline, WakeAccount, account};
use sleeplab_capture::{Comm, Event, FLAG_HARDIRQ, Kind};

fn scored(injected_ns: u64, parts: &[(Component, u64)], holder_named: Option<bool>) -> Scored {
    Scored {
        injected_ns,
        measured_ns: injected_ns,
        account: WakeAccount::of_parts(parts),
        holder_named,
        window: window(1, 0, 1_000, 2_000),
        events: Vec::new(),
    }
}

#[test]
fn a_measured_size_is_taken_net_of_the_uninjected_measure() {
    // The uninjected wakes' measure (the clock reads alone) comes off: its median, the
    // lower middle of an even count.
    let mut sizes = [22_400, 22_300, 24_700, 1_000];
    scenarios::net_of_uninjected(&mut sizes, &[2_500, 2_300, 2_400, 9_000]);
    assert_eq!(sizes, [20_000, 19_900, 22_300, 0]);
    let mut odd = [10_000];
    scenarios::net_of_uninjected(&mut odd, &[3_000, 1_000, 2_000]);
    assert_eq!(odd, [8_000]);
    let mut none = [10_000];
    scenarios::net_of_uninjected(&mut none, &[]);
    assert_eq!(
        none,
        [10_000],
        "nothing to take off without uninjected wakes"
    );
    assert!(Scenario::Return(1).measured() && Scenario::Entry(1).measured());
    assert!(Scenario::RunQueue(1).measured() && Scenario::RunQueueOther(1).measured());
    assert!(!Scenario::Slack(1).measured() && !Scenario::Overrun(1).measured());
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
        ..Row::of(Scenario::Slack(50_000), &[], &Baseline::default())
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

/// The two-sided rule, by hand: injected 50 µs of slack, the bounds are
/// 0.9 · 50 − 2 = 43 µs and 1.1 · 50 + 2 = 57 µs; a baseline whose timer_irq p99 is
/// 10 µs lets timer_irq hold 20 µs (+ 10 µs floor), and every other component 10 µs;
/// a baseline slack of 3 µs (its median with nothing injected) is taken off first.
#[test]
fn a_wake_passes_within_bounds_and_with_every_other_component_at_its_baseline() {
    let c = Component::Slack;
    let s = Scenario::Slack(50_000);
    let mut b = sleeplab_account::Parts::default();
    b.add(Component::TimerIrq, 10_000);
    let baseline = Baseline::of([&b]);
    assert_eq!(baseline.bound(Component::TimerIrq), 20_000);
    assert_eq!(baseline.bound(Component::IdleWakeup), 10_000);
    let verdict =
        |parts: &[(Component, u64)]| judge::Verdict::of(&scored(50_000, parts, None), s, &baseline);
    // Pass: at both bounds, other components at their bound.
    for got in [43_000, 57_000] {
        let v = verdict(&[
            (c, got),
            (Component::TimerIrq, 20_000),
            (Component::IdleWakeup, 10_000),
        ]);
        assert!(v.passes(), "{got}: {v:?}");
        assert_eq!(v.booked, Booked::Within);
    }
    // Under-booked, over-booked.
    let v = verdict(&[(c, 42_999)]);
    assert_eq!((v.booked, v.passes()), (Booked::Under, false));
    let v = verdict(&[(c, 57_001)]);
    assert_eq!((v.booked, v.passes()), (Booked::Over, false));
    // Another component above its baseline: booked right, yet failing.
    let v = verdict(&[(c, 50_000), (Component::TimerIrq, 20_001)]);
    assert_eq!(v.booked, Booked::Within);
    assert_eq!(v.above, vec![Component::TimerIrq]);
    assert!(!v.passes());
    let v = verdict(&[(c, 50_000), (Component::Unexplained, 10_001)]);
    assert_eq!(v.above, vec![Component::Unexplained]);
    // The cause's component with nothing injected (3 µs of slack in each uninjected
    // wake) is taken off: 60 µs booked is 57 µs injected's, at the upper bound.
    let mut b3 = sleeplab_account::Parts::default();
    b3.add(Component::Slack, 3_000);
    let three = Baseline::of([&b3, &b3]);
    let at = |got| judge::Verdict::of(&scored(50_000, &[(c, got)], None), s, &three).booked;
    assert_eq!(
        (at(60_000), at(60_001), at(46_000), at(45_999)),
        (Booked::Within, Booked::Over, Booked::Within, Booked::Under)
    );
    // The floor rules a small injection: 2 µs injected may book 0 to 4.2 µs.
    assert_eq!(judge::booked(0, 2_000), Booked::Within);
    assert_eq!(judge::booked(4_200, 2_000), Booked::Within);
    assert_eq!(judge::booked(4_201, 2_000), Booked::Over);
    // The run queue's holder must be named.
    let rq = Scenario::RunQueue(1_000);
    let one = |named| {
        let w = scored(1_000, &[(Component::RunQueue, 1_000)], Some(named));
        judge::Verdict::of(&w, rq, &baseline).passes()
    };
    assert!(one(true) && !one(false));
    // Overrun's own share is arithmetic: any size passes; its other components count.
    let o = Scenario::Overrun(300_000);
    let w = scored(300_000, &[(Component::Overrun, 1)], None);
    let v = judge::Verdict::of(&w, o, &baseline);
    assert_eq!((v.booked, v.passes()), (Booked::Arithmetic, true));
    let w = scored(
        300_000,
        &[(Component::Overrun, 300_000), (Component::Slack, 10_001)],
        None,
    );
    assert!(!judge::Verdict::of(&w, o, &baseline).passes());
}

/// The baseline is each component's nearest-rank p99 and median over the uninjected
/// wakes: of 200 wakes holding 1..=200 µs of timer_irq, the 198th and the 100th
/// smallest; of 10, the largest and the 5th.
#[test]
fn the_baseline_is_each_components_p99() {
    let parts = |n: u64| -> Vec<sleeplab_account::Parts> {
        (1..=n)
            .map(|k| {
                let mut p = sleeplab_account::Parts::default();
                p.add(Component::TimerIrq, k * 1_000);
                p
            })
            .collect()
    };
    let irq = Component::TimerIrq.index();
    let b = Baseline::of(&parts(200));
    assert_eq!((b.p99[irq], b.median[irq]), (198_000, 100_000));
    assert_eq!(b.p99[Component::Slack.index()], 0);
    let b = Baseline::of(&parts(10));
    assert_eq!((b.p99[irq], b.median[irq]), (10_000, 5_000));
    assert_eq!(Baseline::of(&[]), Baseline::default());
}

#[test]
fn a_row_counts_its_passing_wakes_and_judges_at_95_percent() {
    let s = Scenario::Slack(50_000);
    let base = Baseline::default();
    let mut wakes: Vec<Scored> = (0..19)
        .map(|_| scored(50_000, &[(Component::Slack, 50_000)], None))
        .collect();
    wakes.push(scored(50_000, &[(Component::Slack, 10_000)], None));
    let row = Row::of(s, &wakes, &base);
    assert_eq!(
        (row.wakes, row.passing, row.under, row.over),
        (20, 19, 1, 0)
    );
    assert!(row.passed(), "19 of 20 is 95 %");
    assert_eq!(row.injected_median_ns, Some(50_000.0));
    assert_eq!(row.ratio_median, Some(1.0));
    assert_eq!(row.failures.len(), 1);
    assert!(
        row.failures[0] == "injected 50 µs, late 10 µs: slack 10 µs [under-booked]",
        "{:?}",
        row.failures
    );
    wakes.push(scored(50_000, &[(Component::Slack, 90_000)], None));
    wakes.push(scored(
        50_000,
        &[(Component::Slack, 50_000), (Component::TimerIrq, 10_001)],
        None,
    ));
    let worse = Row::of(s, &wakes, &base);
    assert!(!worse.passed(), "19 of 22 is under 95 %");
    assert_eq!((worse.under, worse.over), (1, 1));
    assert_eq!(worse.above, (1, vec![(Component::TimerIrq, 1)]));
    let lines = table(&[row, worse]).join("\n");
    assert!(
        lines.contains("| timer slack 50 µs | slack | 50 µs | 0 | 20 | – 19 of 20 (95.0 %)"),
        "{lines}"
    );
    assert!(
        lines.contains("| 1 / 1 | 1 (timer_irq 1, baseline 0) |"),
        "{lines}"
    );
    assert!(
        lines.contains("slack 90 µs [over-booked]")
            && lines.contains("[above baseline: timer_irq]"),
        "{lines}"
    );
    // Overrun: arithmetic, not judged on its own share.
    let o = Row::of(
        Scenario::Overrun(300_000),
        &[scored(300_000, &[(Component::Overrun, 300_000)], None)],
        &base,
    );
    assert!(table(&[o]).join("\n").contains("| overrun (arithmetic) |"));
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
    let row = Row::of(s, &[a, b], &Baseline::default());
    assert_eq!(row.holder_named, Some((1, 2)));
    assert_eq!(row.passing, 1);
}

/// A block of `n` wakes, each late by `late` with `idle` in idle_wakeup and `irq` in
/// timer_irq.
fn block(n: usize, late: i64, idle: u64, irq: u64) -> Block {
    let mut p = sleeplab_account::Parts::default();
    p.add(Component::IdleWakeup, idle);
    p.add(Component::TimerIrq, irq);
    Block {
        lateness: vec![late; n],
        parts: vec![p; n],
        untraced: 0,
    }
}

#[test]
fn the_companions_own_run_queue_wait_is_counted() {
    // Without: 60 µs late, 20 µs idle wakeup, 30 µs timer irq. With: no idle wakeup,
    // 12 µs timer irq and 10 µs in the run queue (waiting for the companion to be
    // preempted), 32 µs late. The lateness fell by 28 µs: the idle wakeup and the timer
    // irq alone fell by 38 µs, the run queue's rise of 10 µs makes up the rest.
    let rounds: Vec<[Block; 2]> = (0..8)
        .map(|_| {
            let mut with = block(5, 32_000, 0, 12_000);
            for p in &mut with.parts {
                p.add(Component::RunQueue, 10_000);
            }
            [block(5, 60_000, 20_000, 30_000), with]
        })
        .collect();
    let v = Verdict::of(&rounds);
    assert_eq!(v.fall.0, Some(28_000.0));
    assert_eq!(v.said.0, Some(28_000.0));
    assert_eq!(v.fall_agrees(), Some(true));
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
    // No delivery on either side in these blocks: zero with the companion, as claimed.
    assert_eq!(v.delivery_is_zero(), Some(true));
    assert_eq!(v.delivery_without.0, Some(0.0));
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
    assert_eq!(v.delivery_is_zero(), None);
    // The delivery: 15 µs of it without the companion, 0 with; the lateness falls by
    // that and the 20 µs idle wakeup (35 µs); a delivery left with the companion (3 µs)
    // is not about zero.
    let with_delivery = |b: Block, ns: u64| Block {
        parts: b
            .parts
            .into_iter()
            .map(|mut p| {
                p.add(Component::IdleDelivery, ns);
                p
            })
            .collect(),
        ..b
    };
    let rounds: Vec<[Block; 2]> = (0..8)
        .map(|_| {
            [
                with_delivery(block(5, 60_000, 20_000, 10_000), 15_000),
                with_delivery(block(5, 15_000, 0, 10_000), 0),
            ]
        })
        .collect();
    let v = Verdict::of(&rounds);
    assert_eq!(v.delivery_without.0, Some(15_000.0));
    assert_eq!(v.delivery_is_zero(), Some(true));
    assert_eq!(v.said.0, Some(35_000.0));
    assert_eq!(v.fall.0, Some(45_000.0));
    assert_eq!(
        v.fall_agrees(),
        Some(false),
        "10 µs fell that no component said"
    );
    let lines = companion::report(&rounds, 5).join("\n");
    assert!(
        lines.contains(
            "- ✅ with the companion, idle_delivery's median is 0 [0–0] (without it 15 µs"
        ),
        "{lines}"
    );
    let left: Vec<[Block; 2]> = rounds
        .into_iter()
        .map(|[a, b]| [a, with_delivery(b, 3_000)])
        .collect();
    assert_eq!(Verdict::of(&left).delivery_is_zero(), Some(false));
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

mod kernel;
mod timeline;
