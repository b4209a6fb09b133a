//! The decoders on hand-made layouts and on a real kernel's.
use super::*;

fn format(id: u64, fields: &[(&str, usize, usize, bool)]) -> Format {
    let mut text = format!(
        "ID: {id}\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    );
    for (name, off, size, signed) in fields {
        text += &format!(
            "\tfield:x {name};\toffset:{off};\tsize:{size};\tsigned:{};\n",
            u8::from(*signed)
        );
    }
    Format::parse(&text).unwrap()
}

fn decoders() -> Decoders {
    Decoders::from_formats(&[
        format(
            1,
            &[
                ("hrtimer", 8, 8, false),
                ("expires", 24, 8, true),
                ("softexpires", 32, 8, true),
            ],
        ),
        format(2, &[("hrtimer", 8, 8, false), ("now", 16, 8, true)]),
        format(3, &[("pid", 24, 4, true), ("target_cpu", 32, 4, true)]),
        format(
            4,
            &[
                ("prev_comm[16]", 8, 16, false),
                ("prev_pid", 24, 4, true),
                ("prev_state", 32, 8, true),
                ("next_comm[16]", 40, 16, false),
                ("next_pid", 56, 4, true),
            ],
        ),
        format(5, &[("id", 8, 8, true), ("ret", 16, 8, true)]),
    ])
    .unwrap()
}

#[test]
fn decodes_each_event_by_its_layout() {
    let d = decoders();
    assert_eq!(d.id(Tracepoint::Switch), Some(4));
    let mut raw = vec![0u8; 64];
    raw[2] = 0x08;
    raw[4..8].copy_from_slice(&42i32.to_ne_bytes());
    raw[8..16].copy_from_slice(&0xdeadu64.to_ne_bytes());
    raw[24..32].copy_from_slice(&2_050i64.to_ne_bytes());
    raw[32..40].copy_from_slice(&2_000i64.to_ne_bytes());
    let e = d.decode(Tracepoint::TimerStart, &raw, 7, 1).unwrap();
    assert_eq!((e.time_ns, e.cpu, e.pid, e.in_hardirq()), (7, 1, 42, true));
    assert_eq!(
        e.kind,
        Kind::TimerStart {
            timer: 0xdead,
            soft_ns: 2_000,
            hard_ns: 2_050
        }
    );
    assert!(d.decode(Tracepoint::Switch, &raw[..40], 0, 0).is_none());
    let e = d.decode(Tracepoint::SysExit, &raw, 0, 0).unwrap();
    assert_eq!(e.kind, Kind::SysExit { id: 0xdead, ret: 0 });
}

#[test]
fn the_followed_threads_events_and_every_switch_are_kept() {
    let ev = |pid: i32, kind: Kind| Event {
        time_ns: 0,
        cpu: 0,
        pid,
        flags: 0,
        kind,
    };
    let switch = |prev_pid, next_pid| Kind::Switch {
        prev_pid,
        prev_state: 0,
        prev_comm: Comm::new("a"),
        next_pid,
        next_comm: Comm::new("b"),
    };
    let timer = Kind::TimerExpire {
        timer: 1,
        now_ns: 0,
    };
    assert!(concerns(&ev(9, timer), &[1]));
    let waking = |pid| Kind::Waking { pid, target_cpu: 0 };
    assert!(concerns(&ev(9, waking(1)), &[1, 2]));
    assert!(!concerns(&ev(1, waking(3)), &[1, 2]));
    assert!(concerns(&ev(0, switch(0, 3)), &[3]));
    assert!(concerns(&ev(3, switch(3, 0)), &[3]));
    // Every switch: the tasks that held a CPU are named from them.
    assert!(concerns(&ev(3, switch(4, 5)), &[3]));
    assert!(concerns(&ev(4, Kind::SysExit { id: 0, ret: 0 }), &[4]));
    assert!(!concerns(&ev(5, Kind::SysExit { id: 0, ret: 0 }), &[4]));
    let enter = Kind::SysEnter {
        id: 7,
        args: [0; 6],
    };
    assert!(concerns(&ev(4, enter), &[4]));
    assert!(!concerns(&ev(5, enter), &[4]));
    // The idle loop's states: the idle task's only.
    assert!(concerns(&ev(0, Kind::IdleEnter { state: 1 }), &[4]));
    assert!(concerns(&ev(0, Kind::IdleExit), &[4]));
    assert!(!concerns(&ev(4, Kind::IdleExit), &[4]));
    let of = |f: fn(Tracepoint) -> bool| -> Vec<_> {
        Tracepoint::ALL.into_iter().filter(|&t| f(t)).collect()
    };
    assert_eq!(
        of(Tracepoint::per_thread),
        vec![Tracepoint::SysExit, Tracepoint::SysEnter]
    );
    assert_eq!(
        of(Tracepoint::of_every_thread),
        vec![Tracepoint::TimerStart, Tracepoint::TimerExpire]
    );
}

/// The decoders of a real kernel's five required layouts (6.18, x86_64, read from
/// its tracefs).
fn a_real_kernels_decoders() -> Decoders {
    let texts = [
        include_str!("../../testdata/linux-6.18/hrtimer_start.format"),
        include_str!("../../testdata/linux-6.18/hrtimer_expire_entry.format"),
        include_str!("../../testdata/linux-6.18/sched_waking.format"),
        include_str!("../../testdata/linux-6.18/sched_switch.format"),
        include_str!("../../testdata/linux-6.18/sys_exit.format"),
    ];
    let formats: Vec<Format> = texts.iter().map(|t| Format::parse(t).unwrap()).collect();
    Decoders::from_formats(&formats).unwrap()
}

/// The layouts of a real kernel (6.18, x86_64, read from its tracefs) load, and a
/// record built by them decodes to what was put in.
#[test]
fn a_real_kernels_layouts_decode_its_records() {
    let d = a_real_kernels_decoders();
    assert_eq!(d.id(Tracepoint::Switch), Some(372));
    let mut raw = vec![0u8; 64];
    raw[..2].copy_from_slice(&372u16.to_le_bytes());
    raw[2] = 0x08;
    raw[4..8].copy_from_slice(&77i32.to_le_bytes());
    raw[8..11].copy_from_slice(b"cc1");
    raw[24..28].copy_from_slice(&77i32.to_le_bytes());
    raw[32..40].copy_from_slice(&1i64.to_le_bytes());
    raw[40..45].copy_from_slice(b"probe");
    raw[56..60].copy_from_slice(&9i32.to_le_bytes());
    let e = d.decode_record(&raw, 5, 1).unwrap();
    assert_eq!((e.time_ns, e.cpu, e.pid, e.flags), (5, 1, 77, 0x08));
    assert_eq!(
        e.kind,
        Kind::Switch {
            prev_pid: 77,
            prev_state: 1,
            prev_comm: Comm::new("cc1"),
            next_pid: 9,
            next_comm: Comm::new("probe"),
        }
    );
    // Too short for its layout: no event.
    assert_eq!(d.decode_record(&raw[..40], 5, 1), None);
}

/// A system call's entry decodes by the real kernel's layout, its six arguments in
/// order; its return carries the value; without the entry's layout, no entry decodes.
#[test]
fn a_real_kernels_system_calls_decode() {
    let base = a_real_kernels_decoders();
    assert!(!base.has(Tracepoint::SysEnter));
    let enter = Format::parse(include_str!("../../testdata/linux-6.18/sys_enter.format")).unwrap();
    let d = base.with_sys_enter(&enter).unwrap();
    let mut raw = vec![0u8; 64];
    raw[..2].copy_from_slice(&(enter.id as u16).to_le_bytes());
    raw[4..8].copy_from_slice(&31i32.to_le_bytes());
    raw[8..16].copy_from_slice(&232i64.to_le_bytes());
    for k in 0..6u64 {
        let at = 16 + 8 * k as usize;
        raw[at..at + 8].copy_from_slice(&(10 + k).to_le_bytes());
    }
    let e = d.decode_record(&raw, 9, 0).unwrap();
    assert_eq!(e.pid, 31);
    assert_eq!(
        e.kind,
        Kind::SysEnter {
            id: 232,
            args: [10, 11, 12, 13, 14, 15]
        }
    );
    assert_eq!(d.decode_record(&raw[..60], 9, 0), None, "short record");
    let mut exit = vec![0u8; 24];
    exit[..2].copy_from_slice(&(d.id(Tracepoint::SysExit).unwrap() as u16).to_le_bytes());
    exit[8..16].copy_from_slice(&232i64.to_le_bytes());
    exit[16..24].copy_from_slice(&(-4i64).to_le_bytes());
    assert_eq!(
        d.decode_record(&exit, 9, 0).unwrap().kind,
        Kind::SysExit { id: 232, ret: -4 }
    );
}

/// The interrupts' layouts of the real kernel load beside the five; an interrupt's
/// record decodes to its kind, entry or exit, and number; without them, none
/// decodes and the decoders say the interrupts are not recorded.
#[test]
fn a_real_kernels_interrupts_decode() {
    let base = a_real_kernels_decoders();
    assert!(!base.interrupts() && !base.has(Tracepoint::LocalTimerEntry));
    let texts: [(Tracepoint, &str); 14] = [
        (
            Tracepoint::IrqHandlerEntry,
            include_str!("../../testdata/linux-6.18/irq_handler_entry.format"),
        ),
        (
            Tracepoint::IrqHandlerExit,
            include_str!("../../testdata/linux-6.18/irq_handler_exit.format"),
        ),
        (
            Tracepoint::SoftirqEntry,
            include_str!("../../testdata/linux-6.18/softirq_entry.format"),
        ),
        (
            Tracepoint::SoftirqExit,
            include_str!("../../testdata/linux-6.18/softirq_exit.format"),
        ),
        (
            Tracepoint::LocalTimerEntry,
            include_str!("../../testdata/linux-6.18/local_timer_entry.format"),
        ),
        (
            Tracepoint::LocalTimerExit,
            include_str!("../../testdata/linux-6.18/local_timer_exit.format"),
        ),
        (
            Tracepoint::RescheduleEntry,
            include_str!("../../testdata/linux-6.18/reschedule_entry.format"),
        ),
        (
            Tracepoint::RescheduleExit,
            include_str!("../../testdata/linux-6.18/reschedule_exit.format"),
        ),
        (
            Tracepoint::CallFunctionEntry,
            include_str!("../../testdata/linux-6.18/call_function_entry.format"),
        ),
        (
            Tracepoint::CallFunctionExit,
            include_str!("../../testdata/linux-6.18/call_function_exit.format"),
        ),
        (
            Tracepoint::CallFunctionSingleEntry,
            include_str!("../../testdata/linux-6.18/call_function_single_entry.format"),
        ),
        (
            Tracepoint::CallFunctionSingleExit,
            include_str!("../../testdata/linux-6.18/call_function_single_exit.format"),
        ),
        (
            Tracepoint::IrqWorkEntry,
            include_str!("../../testdata/linux-6.18/irq_work_entry.format"),
        ),
        (
            Tracepoint::IrqWorkExit,
            include_str!("../../testdata/linux-6.18/irq_work_exit.format"),
        ),
    ];
    let formats: Vec<(Tracepoint, Format)> = texts
        .iter()
        .map(|(t, text)| (*t, Format::parse(text).unwrap()))
        .collect();
    let d = base.clone().with_interrupts(&formats).unwrap();
    assert!(d.interrupts());
    assert!(!d.has(Tracepoint::CpuIdle));
    let idle = Format::parse(include_str!("../../testdata/linux-6.18/cpu_idle.format")).unwrap();
    let d = d.with_idle(&idle).unwrap();
    let enter = Format::parse(include_str!("../../testdata/linux-6.18/sys_enter.format")).unwrap();
    let d = d.with_sys_enter(&enter).unwrap();
    assert!(Tracepoint::ALL.into_iter().all(|t| d.has(t)));
    // Every id is told apart from every other.
    let mut ids: Vec<u64> = Tracepoint::ALL.iter().filter_map(|&t| d.id(t)).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), Tracepoint::ALL.len());
    let record = |id: u64, number: i32| {
        let mut raw = vec![0u8; 16];
        raw[..2].copy_from_slice(&(id as u16).to_le_bytes());
        raw[2] = 0x09;
        raw[4..8].copy_from_slice(&0i32.to_le_bytes());
        raw[8..12].copy_from_slice(&number.to_le_bytes());
        raw
    };
    let e = d.decode_record(&record(165, 236), 9, 0).unwrap();
    assert_eq!(
        (e.kind, e.pid, e.in_hardirq()),
        (
            Kind::IrqEntry {
                what: Interrupt::LocalTimer,
                number: 236
            },
            0,
            true
        )
    );
    let e = d.decode_record(&record(222, 1), 9, 0).unwrap();
    assert_eq!(
        e.kind,
        Kind::IrqExit {
            what: Interrupt::Softirq,
            number: 1
        }
    );
    let e = d.decode_record(&record(225, 11), 9, 0).unwrap();
    assert_eq!(
        e.kind,
        Kind::IrqEntry {
            what: Interrupt::Device,
            number: 11
        }
    );
    let e = d.decode_record(&record(155, 246), 9, 0).unwrap();
    assert_eq!(
        e.kind,
        Kind::IrqEntry {
            what: Interrupt::Vector,
            number: 246
        }
    );
    // The idle loop's states: entering state 1 (HLT), then leaving it (−1 as a u32).
    let e = d.decode_record(&record(568, 1), 9, 0).unwrap();
    assert_eq!((e.kind, e.pid), (Kind::IdleEnter { state: 1 }, 0));
    let e = d.decode_record(&record(568, -1), 9, 0).unwrap();
    assert_eq!(e.kind, Kind::IdleExit);
    assert!(!Tracepoint::CpuIdle.required() && Tracepoint::CpuIdle.interrupt().is_none());
    // Too short for the number: no event; unknown to decoders without them: none.
    assert_eq!(d.decode_record(&record(165, 1)[..10], 9, 0), None);
    assert_eq!(base.decode_record(&record(165, 236), 9, 0), None);
    // A required tracepoint is no interrupt.
    let sw = Format::parse(include_str!(
        "../../testdata/linux-6.18/sched_switch.format"
    ))
    .unwrap();
    assert!(base.with_interrupts(&[(Tracepoint::Switch, sw)]).is_err());
}

/// Each detail records what its documentation says: the default program detail all of
/// the full one but the local timer's entry and exit and the idle states; the light one
/// no interrupt and no idle state; the timers, the scheduler and the calls all three.
#[test]
fn each_detail_records_its_tracepoints() {
    use crate::event::{Detail, Events};
    use Tracepoint as T;
    let by = |d| -> Vec<T> {
        T::ALL
            .into_iter()
            .filter(|t| t.recorded_by(Events::Program, d))
            .collect()
    };
    let (full, interrupts, light) = (by(Detail::Full), by(Detail::Interrupts), by(Detail::Light));
    assert_eq!(full.len(), T::ALL.len());
    let left_out: Vec<T> = full
        .iter()
        .filter(|t| !interrupts.contains(t))
        .copied()
        .collect();
    assert_eq!(
        left_out,
        [T::LocalTimerEntry, T::LocalTimerExit, T::CpuIdle]
    );
    assert!(interrupts.contains(&T::IrqHandlerEntry) && interrupts.contains(&T::SoftirqEntry));
    let (in_light, beyond_light): (Vec<T>, Vec<T>) = full.iter().partition(|t| light.contains(t));
    assert!(
        beyond_light
            .iter()
            .all(|t| t.interrupt().is_some() || *t == T::CpuIdle)
    );
    assert!(
        in_light
            .iter()
            .all(|t| t.interrupt().is_none() && *t != T::CpuIdle)
    );
    assert!(light.contains(&T::TimerExpire) && light.contains(&T::SysExit));
}
