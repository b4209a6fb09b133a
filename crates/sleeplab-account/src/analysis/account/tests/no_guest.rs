//! The stretches with no guest event: a spin's gaps, split where the guest's
//! interrupts ran; an idle CPU's timer delivery told from the guest's handling and
//! from the guest's own work recorded inside it (interrupts, the idle loop, polling);
//! and neither told without the guest's interrupts recorded.

use super::*;
use crate::analysis::explanation::{Explanation, WakeRecord};
use crate::capture::{Interrupt, InterruptsRecorded};

fn irq_at(t: u64, pid: i32, entry: bool, what: Interrupt) -> Event {
    let kind = if entry {
        Kind::IrqEntry { what, number: 236 }
    } else {
        Kind::IrqExit { what, number: 236 }
    };
    Event {
        flags: FLAG_HARDIRQ,
        ..ev(t, 0, pid, kind)
    }
}

/// A spin (a wait that never blocks) from 1 000 to 101 000 for a deadline at 1 000.
fn spin_window() -> Window {
    Window::until(TID, 1_000, 1_000, 101_000).never_blocking(true)
}

/// A gap of the spin with no guest event in it is a spin gap; the rest is spin.
#[test]
fn a_spin_gap_without_a_guest_event_is_told() {
    let tl = Timeline::new(vec![])
        .with_interrupts(true)
        .with_spin_gaps(TID, [(20_000, 28_000)]);
    let a = account(&tl, &spin_window());
    assert_parts!(a, Spin 92_000, SpinGap 8_000);
    assert!(a.host_told && a.traced && !a.blocked);
}

/// A gap holding the guest's own timer interrupt (and its softirq, nested after it) is
/// split at their stamps: entry to exit is the guest's (spin), the rest a spin gap.
#[test]
fn a_gap_with_a_guest_interrupt_is_split_at_its_stamps() {
    let tl = Timeline::new(vec![
        irq_at(22_000, TID, true, Interrupt::LocalTimer),
        irq_at(23_000, TID, false, Interrupt::LocalTimer),
        irq_at(23_100, TID, true, Interrupt::Softirq),
        irq_at(24_000, TID, false, Interrupt::Softirq),
        // Another task's interrupt (another CPU) says nothing of this gap.
        Event {
            cpu: 1,
            ..irq_at(25_000, 7, true, Interrupt::Device)
        },
    ])
    .with_interrupts(true)
    .with_spin_gaps(TID, [(20_000, 28_000)]);
    let a = account(&tl, &spin_window());
    // Spin gap: 20 000–22 000, 23 000–23 100, 24 000–28 000.
    assert_eq!(a.parts.get(Component::SpinGap), 2_000 + 100 + 4_000);
    assert_eq!(a.parts.get(Component::Spin), 100_000 - 6_100);
    assert_eq!(a.parts.total(), 100_000);
}

/// A preemption inside a gap is run queue, never a spin gap.
#[test]
fn a_preemption_inside_a_gap_is_run_queue() {
    let tl = Timeline::new(vec![
        switch(21_000, TID, 0, "sleeplab", 7, "cc1"),
        switch(25_000, 7, 0, "cc1", TID, "sleeplab"),
    ])
    .with_interrupts(true)
    .with_spin_gaps(TID, [(20_000, 28_000)]);
    let a = account(&tl, &spin_window());
    assert_eq!(a.parts.get(Component::RunQueue), 4_000);
    assert_eq!(a.parts.get(Component::SpinGap), 1_000 + 3_000);
    assert_eq!(a.parts.total(), 100_000);
}

/// Without the guest's interrupts recorded, or without the spin's gaps, nothing is a
/// spin gap and its share is not told (unknown, not zero).
#[test]
fn without_interrupts_or_gaps_the_hosts_share_is_not_told() {
    let gaps = [(20_000, 28_000)];
    let no_irqs = Timeline::new(vec![]).with_spin_gaps(TID, gaps);
    let no_gaps = Timeline::new(vec![]).with_interrupts(true);
    for tl in [no_irqs, no_gaps] {
        let a = account(&tl, &spin_window());
        assert_parts!(a, Spin 100_000);
        assert!(!a.host_told);
        let x = Explanation::of(std::slice::from_ref(&a), 0, false);
        assert!(x.component(Component::SpinGap).is_none());
        let r = WakeRecord::of(&spin_window(), &a);
        assert!(!r.components.contains_key(&Component::SpinGap));
    }
    // Told, its zero is a zero.
    let tl = Timeline::new(vec![])
        .with_interrupts(true)
        .with_spin_gaps(TID, []);
    let a = account(&tl, &spin_window());
    let x = Explanation::of(&[a], 0, false);
    assert_eq!(x.component(Component::SpinGap).unwrap().mean_ns, 0.0);
}

/// The plain sleep of `a_plain_sleep_splits_into_its_stretches` (hard expiry at
/// 2 050 300), its CPU idle, with the guest's local-timer entry recorded 4 000 ns after
/// the hard expiry, and `more` events: the delivery until then is the idle CPU's, the
/// entry to the wakeup the guest's handling.
fn idle_sleep(interrupts: bool, idle: bool, more: &[Event]) -> WakeAccount {
    let mut events = PLAIN.events();
    events.push(irq_at(2_054_300, 0, true, Interrupt::LocalTimer));
    if !idle {
        // Another task took the CPU after the thread blocked: not idle.
        events.push(switch(1_000_600, 0, 0, "swapper/0", 7, "cc1"));
    }
    events.extend_from_slice(more);
    let tl = Timeline::new(events).with_interrupts(interrupts);
    account(&tl, &plain_window())
}

#[test]
fn an_idle_cpus_timer_delivery_is_told_from_its_handling() {
    let a = idle_sleep(true, true, &[]);
    assert_parts!(
        a, Entry 300, Slack 50_000, IdleDelivery 4_000, TimerIrq 2_200, IdleWakeup 3_000,
        KernelExit 1_000, Return 500
    );
    assert!(a.host_told && a.traced);
    // Not recorded: the whole interrupt as before, the delivery not told.
    let b = idle_sleep(false, true, &[]);
    assert_eq!(b.parts.get(Component::IdleDelivery), 0);
    assert_eq!(b.parts.get(Component::TimerIrq), 6_200);
    assert!(!b.host_told);
    // A CPU that was not idle: the delivery is the timer interrupt's.
    let c = idle_sleep(true, false, &[]);
    assert_eq!(c.parts.get(Component::IdleDelivery), 0);
    assert!(c.host_told);
    for x in [a, b, c] {
        assert_eq!(x.parts.total(), 61_000);
    }
}

/// Without the local timer on record (a program's default detail), an idle CPU's
/// delivery runs from the hard expiry to the timer handler's own clock read (2 055 500),
/// less the guest's other interrupts recorded inside it; a CPU that was not idle has
/// none; a spin's gaps are not told (the ticks that interrupt it are not on record).
#[test]
fn without_the_local_timer_the_delivery_runs_to_the_handlers_clock() {
    let sleep = |more: &[Event]| {
        let mut events = PLAIN.events();
        events.extend_from_slice(more);
        let tl = Timeline::new(events).with_interrupts_recorded(InterruptsRecorded::ButLocalTimer);
        account(&tl, &plain_window())
    };
    let a = sleep(&[]);
    assert_parts!(
        a, Entry 300, Slack 50_000, IdleDelivery 5_200, TimerIrq 1_000, IdleWakeup 3_000,
        KernelExit 1_000, Return 500
    );
    assert!(a.host_told && a.traced);
    let b = sleep(&[
        irq_at(2_051_000, 0, true, Interrupt::Device),
        irq_at(2_051_400, 0, false, Interrupt::Device),
    ]);
    assert_eq!(b.parts.get(Component::IdleDelivery), 5_200 - 400);
    assert_eq!(b.parts.get(Component::TimerIrq), 1_000 + 400);
    let c = sleep(&[switch(1_000_600, 0, 0, "swapper/0", 7, "cc1")]);
    assert_eq!(c.parts.get(Component::IdleDelivery), 0);
    assert!(c.host_told);
    for x in [a, b, c] {
        assert_eq!(x.parts.total(), 61_000);
    }
    let spin = Timeline::new(vec![])
        .with_interrupts_recorded(InterruptsRecorded::ButLocalTimer)
        .with_spin_gaps(TID, [(20_000, 28_000)]);
    let d = account(&spin, &spin_window());
    assert_eq!(d.parts.get(Component::SpinGap), 0);
    assert!(!d.host_told);
}

/// An idle-state event on the idle CPU at `t` (`None`: the state's exit).
fn idle_state(t: u64, state: Option<u32>) -> Event {
    let kind = state.map_or(Kind::IdleExit, |state| Kind::IdleEnter { state });
    ev(t, 0, 0, kind)
}

/// Another interrupt that ran on the idle CPU inside the delivery (a device's, then
/// its softirq) is the guest's work: the timer interrupt's, not the delivery's.
#[test]
fn the_guests_interrupts_inside_a_delivery_are_the_timer_interrupts() {
    let a = idle_sleep(
        true,
        true,
        &[
            irq_at(2_051_000, 0, true, Interrupt::Device),
            irq_at(2_051_400, 0, false, Interrupt::Device),
            irq_at(2_051_400, 0, true, Interrupt::Softirq),
            irq_at(2_051_900, 0, false, Interrupt::Softirq),
            // Another CPU's interrupt says nothing of this one's delivery.
            Event {
                cpu: 1,
                ..irq_at(2_052_000, 0, true, Interrupt::Device)
            },
        ],
    );
    // Delivery 2 050 300–2 054 300 less 2 051 000–2 051 900.
    assert_eq!(a.parts.get(Component::IdleDelivery), 4_000 - 900);
    assert_eq!(a.parts.get(Component::TimerIrq), 2_200 + 900);
    assert_eq!(a.parts.total(), 61_000);
}

/// With the idle loop's states on record, only the time the CPU was stopped in one is
/// delivery: the idle loop that still ran after the hard expiry (it entered HLT late,
/// the timer's interrupt pending) is the guest's.
#[test]
fn the_idle_loop_before_it_halts_is_the_guests() {
    let a = idle_sleep(
        true,
        true,
        &[
            // Entered and left a stop before the expiry (a wakeup of nothing), then
            // ran the idle loop until it stopped again 1 500 ns after the expiry.
            idle_state(1_000_700, Some(1)),
            idle_state(1_500_000, None),
            idle_state(2_051_800, Some(1)),
            idle_state(2_054_800, None),
        ],
    );
    assert_eq!(a.parts.get(Component::IdleDelivery), 2_054_300 - 2_051_800);
    assert_eq!(a.parts.get(Component::TimerIrq), 2_200 + 1_500);
    assert_eq!(a.parts.total(), 61_000);
    // Stopped all along (entered before the expiry, left after the entry): all of it.
    let b = idle_sleep(
        true,
        true,
        &[idle_state(1_000_700, Some(1)), idle_state(2_054_800, None)],
    );
    assert_eq!(b.parts.get(Component::IdleDelivery), 4_000);
}

/// A polling idle loop (state 0) never stops the CPU: the guest ran all along, and no
/// time is the delivery's; an interrupt ends a stop, after which the guest ran until
/// it stopped again.
#[test]
fn a_polling_idle_loop_delivers_nothing_and_an_interrupt_ends_a_stop() {
    let poll = idle_sleep(
        true,
        true,
        &[idle_state(1_000_700, Some(0)), idle_state(2_054_800, None)],
    );
    assert_eq!(poll.parts.get(Component::IdleDelivery), 0);
    assert_eq!(poll.parts.get(Component::TimerIrq), 6_200);
    assert!(poll.host_told);
    let irq = idle_sleep(
        true,
        true,
        &[
            idle_state(1_000_700, Some(1)),
            // A device's interrupt ended the stop at 2 051 000; the guest ran its
            // handler and the idle loop until it stopped again at 2 052 000.
            irq_at(2_051_000, 0, true, Interrupt::Device),
            irq_at(2_051_300, 0, false, Interrupt::Device),
            idle_state(2_051_600, None),
            idle_state(2_052_000, Some(1)),
        ],
    );
    assert_eq!(
        irq.parts.get(Component::IdleDelivery),
        (2_051_000 - 2_050_300) + (2_054_300 - 2_052_000)
    );
    assert_eq!(irq.parts.total(), 61_000);
}

/// Where the timer's CPU left no switch on record since the wake began (a CPU whose
/// idle task's events the kernel does not record), whether it was halted is unknown:
/// the interrupt stays whole, and the delivery is not told rather than told 0.
/// An interrupt that entered before the hard expiry had nothing to deliver: told.
#[test]
fn an_unknown_cpu_state_leaves_the_hosts_share_untold() {
    let tl = |entry_ns| {
        // The plain sleep, armed and slept on CPU 0; the timer ran on CPU 1, which woke
        // the thread.
        let mut events: Vec<Event> = PLAIN
            .events()
            .into_iter()
            .map(|e| match e.kind {
                Kind::TimerExpire { .. } | Kind::Waking { .. } => Event { cpu: 1, ..e },
                _ => e,
            })
            .collect();
        events.push(Event {
            cpu: 1,
            ..irq_at(entry_ns, 0, true, Interrupt::LocalTimer)
        });
        Timeline::new(events).with_interrupts(true)
    };
    let w = plain_window();
    let unknown = account(&tl(2_054_300), &w);
    assert_eq!(unknown.parts.get(Component::SpinGap), 0);
    assert!(!unknown.host_told);
    // Entered before the hard expiry (2 050 300): running when the timer came due.
    let before = account(&tl(2_049_000), &w);
    assert_eq!(before.parts.get(Component::SpinGap), 0);
    assert!(before.host_told);
    assert_eq!(before.parts.get(Component::TimerIrq), 6_200);
    // Entered and exited before it: the interrupt that ran the timer is not on record.
    let mut events = tl(2_049_000).range(0, u64::MAX).to_vec();
    events.push(Event {
        cpu: 1,
        ..irq_at(2_049_500, 0, false, Interrupt::LocalTimer)
    });
    let gone = account(&Timeline::new(events).with_interrupts(true), &w);
    assert!(!gone.host_told);
}

/// The precise sleeper's final spin: its gaps after the native wake are spin gaps
/// too, and only inside the spin.
#[test]
fn a_precise_sleepers_spin_gaps_are_the_hosts() {
    let native = Sleep {
        arm: (1_000_300, 1_900_300, 1_900_300),
        expire: (1_900_500, 1_900_400),
        woken: 1_900_600,
        back: 1_900_700,
        exit: Some(1_900_800),
        ..PLAIN
    };
    let mut events = native.events();
    events.push(irq_at(1_900_350, 0, true, Interrupt::LocalTimer));
    let tl = Timeline::new(events)
        .with_interrupts(true)
        // A gap before the deadline (not late) and one in the spin after it.
        .with_spin_gaps(TID, [(1_950_000, 1_960_000), (2_001_000, 2_011_000)]);
    let w = Window::until(TID, 1_000_000, 2_000_000, 2_020_000).spinning(119_000);
    let a = account(&tl, &w);
    assert_parts!(a, Spin 10_000, SpinGap 10_000);
    assert!(a.host_told);
}
