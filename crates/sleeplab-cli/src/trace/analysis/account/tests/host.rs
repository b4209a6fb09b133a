//! The host's share: a spin's gaps with no guest event, split where the guest's
//! interrupts ran; a halted CPU's timer delivery told from the guest's handling; and
//! nothing told without the guest's interrupts recorded.

use super::*;
use crate::trace::analysis::explanation::{Explanation, WakeRecord};
use crate::trace::event::Interrupt;

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

/// A gap of the spin with no guest event in it is the host's; the rest is spin.
#[test]
fn a_spin_gap_without_a_guest_event_is_the_hosts() {
    let tl = Timeline::new(vec![])
        .with_interrupts(true)
        .with_spin_gaps(TID, [(20_000, 28_000)]);
    let a = account(&tl, &spin_window());
    assert_parts!(a, Host 8_000, Spin 92_000);
    assert!(a.host_told && a.traced && !a.blocked);
}

/// A gap holding the guest's own timer interrupt (and its softirq, nested after it) is
/// split at their stamps: entry to exit is the guest's (spin), the rest the host's.
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
    // Host: 20 000–22 000, 23 000–23 100, 24 000–28 000.
    assert_eq!(a.parts.get(Component::Host), 2_000 + 100 + 4_000);
    assert_eq!(a.parts.get(Component::Spin), 100_000 - 6_100);
    assert_eq!(a.parts.total(), 100_000);
}

/// A preemption inside a gap is run queue, never the host's.
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
    assert_eq!(a.parts.get(Component::Host), 1_000 + 3_000);
    assert_eq!(a.parts.total(), 100_000);
}

/// Without the guest's interrupts recorded, or without the spin's gaps, nothing is
/// the host's and its share is not told (unknown, not zero).
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
        assert!(x.component(Component::Host).is_none());
        let r = WakeRecord::of(&spin_window(), &a);
        assert!(!r.components.contains_key(&Component::Host));
    }
    // Told, its zero is a zero.
    let tl = Timeline::new(vec![])
        .with_interrupts(true)
        .with_spin_gaps(TID, []);
    let a = account(&tl, &spin_window());
    let x = Explanation::of(&[a], 0, false);
    assert_eq!(x.component(Component::Host).unwrap().mean_ns, 0.0);
}

/// The plain sleep of `a_plain_sleep_splits_into_its_stretches`, its CPU halted, with
/// the guest's local-timer entry recorded 4 000 ns after the hard expiry: the delivery
/// until then is the host's, the entry to the wakeup the guest's handling.
fn halted_sleep(interrupts: bool, idle: bool) -> WakeAccount {
    let mut events = PLAIN.events();
    events.push(irq_at(2_054_300, 0, true, Interrupt::LocalTimer));
    if !idle {
        // Another task took the CPU after the thread blocked: not halted.
        events.push(switch(1_000_600, 0, 0, "swapper/0", 7, "cc1"));
    }
    let tl = Timeline::new(events).with_interrupts(interrupts);
    account(&tl, &plain_window())
}

#[test]
fn a_halted_cpus_timer_delivery_is_the_hosts_and_its_handling_the_guests() {
    let a = halted_sleep(true, true);
    assert_parts!(
        a, Entry 300, Slack 50_000, Host 4_000, TimerIrq 2_200, IdleWakeup 3_000, KernelExit 1_000,
        Return 500
    );
    assert!(a.host_told && a.traced);
    // Not recorded: the whole interrupt as before, the host's share not told.
    let b = halted_sleep(false, true);
    assert_eq!(b.parts.get(Component::Host), 0);
    assert_eq!(b.parts.get(Component::TimerIrq), 6_200);
    assert!(!b.host_told);
    // A CPU that was not halted: the delivery is the timer interrupt's.
    let c = halted_sleep(true, false);
    assert_eq!(c.parts.get(Component::Host), 0);
    assert!(c.host_told);
    for x in [a, b, c] {
        assert_eq!(x.parts.total(), 61_000);
    }
}

/// Where the timer's CPU left no switch on record since the wake began (a CPU whose
/// idle task's events the kernel does not record), whether it was halted is unknown:
/// the interrupt stays whole, and the host's share is not told rather than told 0.
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
    assert_eq!(unknown.parts.get(Component::Host), 0);
    assert!(!unknown.host_told);
    // Entered before the hard expiry (2 050 300): running when the timer came due.
    let before = account(&tl(2_049_000), &w);
    assert_eq!(before.parts.get(Component::Host), 0);
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

/// The precise sleeper's final spin: its gaps after the native wake are the host's
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
    assert_parts!(a, Host 10_000, Spin 10_000);
    assert!(a.host_told);
}
