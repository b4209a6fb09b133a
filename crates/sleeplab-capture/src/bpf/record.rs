//! The BPF recorder's records (`bpf/recorder.bpf.c`), decoded into [`Event`]s: the same
//! events the tracefs decoders give, so the account cannot tell the recorders apart.
//! Pure functions of bytes, tested here and fuzzed with the saved trace's reader.

use crate::event::{Comm, Event, IDLE_EXIT_STATE, Interrupt, Kind};

/// Every record's header: time, CPU, current task, context flags, kind.
const HEAD: usize = 24;

/// The record kinds, as `enum kind` in the BPF source numbers them.
mod kind {
    pub const WAKING: u8 = 1;
    pub const SWITCH: u8 = 2;
    pub const TIMER_START: u8 = 3;
    pub const TIMER_EXPIRE: u8 = 4;
    pub const SYS_ENTER: u8 = 5;
    pub const SYS_EXIT: u8 = 6;
    pub const IRQ_ENTRY: u8 = 7;
    pub const IRQ_EXIT: u8 = 8;
    pub const IDLE: u8 = 9;
}

/// `TASK_REPORT`: the task states `sched_switch` reports.
const TASK_REPORT: u32 = 0x7f;
/// `TASK_IDLE` (uninterruptible, not counted as load): reported as its own state.
const TASK_IDLE: u32 = 0x402;
/// `TASK_RTLOCK_WAIT`: reported as uninterruptible.
const TASK_RTLOCK_WAIT: u32 = 0x1000;
/// `TASK_REPORT_IDLE`: `TASK_IDLE`'s reported index bit.
const TASK_REPORT_IDLE: u32 = TASK_REPORT + 1;
/// `TASK_REPORT_MAX`: what `sched_switch` reports for a preempted task.
const TASK_REPORT_MAX: i64 = (TASK_REPORT_IDLE as i64) << 1;

/// `sched_switch`'s `prev_state` as ftrace records it (the kernel's
/// `__trace_sched_switch_state`), from what the raw tracepoint hands a BPF program:
/// a preempted task reports `TASK_REPORT_MAX` (runnable, beyond
/// [`crate::SLEEPING_STATES`]); else one bit, the highest reported state the task's
/// state and exit state hold.
pub fn switch_state(preempt: bool, prev_state: u32, exit_state: u32) -> i64 {
    if preempt {
        return TASK_REPORT_MAX;
    }
    let mut state = (prev_state | exit_state) & TASK_REPORT;
    if prev_state == TASK_IDLE {
        state = TASK_REPORT_IDLE;
    }
    if prev_state == TASK_RTLOCK_WAIT {
        state = 0x2;
    }
    // fls: the index of the highest set bit, from 1; 0 for none.
    let index = u32::BITS - state.leading_zeros();
    if index == 0 { 0 } else { 1i64 << (index - 1) }
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn i32_at(b: &[u8], at: usize) -> Option<i32> {
    u32_at(b, at).map(|v| v as i32)
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn i64_at(b: &[u8], at: usize) -> Option<i64> {
    u64_at(b, at).map(|v| v as i64)
}

fn comm_at(b: &[u8], at: usize) -> Option<Comm> {
    Some(Comm(b.get(at..at + 16)?.try_into().ok()?))
}

fn interrupt(what: u32) -> Option<Interrupt> {
    Some(match what {
        0 => Interrupt::Device,
        1 => Interrupt::LocalTimer,
        2 => Interrupt::Vector,
        3 => Interrupt::Softirq,
        _ => return None,
    })
}

/// The event one record holds; `None` for a record too short for its kind, or of a
/// kind (or interrupt) the decoder does not know.
pub fn decode(b: &[u8]) -> Option<Event> {
    let time_ns = u64_at(b, 0)?;
    let cpu = u32_at(b, 8)?;
    let pid = i32_at(b, 12)?;
    let flags = *b.get(16)?;
    let kind = match *b.get(17)? {
        kind::WAKING => Kind::Waking {
            pid: i32_at(b, HEAD)?,
            target_cpu: i32_at(b, HEAD + 4)?,
        },
        kind::SWITCH => Kind::Switch {
            prev_pid: i32_at(b, HEAD)?,
            next_pid: i32_at(b, HEAD + 4)?,
            prev_state: switch_state(
                u32_at(b, HEAD + 16)? != 0,
                u32_at(b, HEAD + 8)?,
                u32_at(b, HEAD + 12)?,
            ),
            prev_comm: comm_at(b, HEAD + 24)?,
            next_comm: comm_at(b, HEAD + 40)?,
        },
        kind::TIMER_START => Kind::TimerStart {
            timer: u64_at(b, HEAD)?,
            soft_ns: i64_at(b, HEAD + 8)?,
            hard_ns: i64_at(b, HEAD + 16)?,
        },
        kind::TIMER_EXPIRE => Kind::TimerExpire {
            timer: u64_at(b, HEAD)?,
            now_ns: i64_at(b, HEAD + 8)?,
        },
        kind::SYS_ENTER => {
            let mut args = [0u64; 6];
            for (i, a) in args.iter_mut().enumerate() {
                *a = u64_at(b, HEAD + 8 + 8 * i)?;
            }
            Kind::SysEnter {
                id: i64_at(b, HEAD)?,
                args,
            }
        }
        kind::SYS_EXIT => Kind::SysExit {
            id: i64_at(b, HEAD)?,
            ret: i64_at(b, HEAD + 8)?,
        },
        k @ (kind::IRQ_ENTRY | kind::IRQ_EXIT) => {
            let what = interrupt(u32_at(b, HEAD)?)?;
            let number = i32_at(b, HEAD + 4)?;
            if k == kind::IRQ_ENTRY {
                Kind::IrqEntry { what, number }
            } else {
                Kind::IrqExit { what, number }
            }
        }
        kind::IDLE => match u32_at(b, HEAD)? {
            IDLE_EXIT_STATE => Kind::IdleExit,
            state => Kind::IdleEnter { state },
        },
        _ => return None,
    };
    Some(Event {
        time_ns,
        cpu,
        pid,
        flags,
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{FLAG_HARDIRQ, SLEEPING_STATES};

    fn head(kind: u8, flags: u8) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(1_000u64.to_le_bytes());
        b.extend(1u32.to_le_bytes());
        b.extend(42i32.to_le_bytes());
        b.push(flags);
        b.push(kind);
        b.extend([0u8; 6]);
        b
    }

    #[test]
    fn a_switch_decodes_with_ftraces_state() {
        let mut b = head(kind::SWITCH, 0);
        b.extend(42i32.to_le_bytes());
        b.extend(7i32.to_le_bytes());
        b.extend(0x1u32.to_le_bytes()); // TASK_INTERRUPTIBLE
        b.extend(0u32.to_le_bytes());
        b.extend(0u32.to_le_bytes());
        b.extend(0u32.to_le_bytes());
        b.extend(Comm::new("waiter").0);
        b.extend(Comm::new("hog").0);
        let e = decode(&b).unwrap();
        assert_eq!(e.time_ns, 1_000);
        assert_eq!((e.cpu, e.pid), (1, 42));
        assert_eq!(
            e.kind,
            Kind::Switch {
                prev_pid: 42,
                prev_state: 1,
                prev_comm: Comm::new("waiter"),
                next_pid: 7,
                next_comm: Comm::new("hog"),
            }
        );
        // One byte short: no event.
        assert_eq!(decode(&b[..b.len() - 1]), None);
    }

    #[test]
    fn every_kind_decodes_and_unknown_ones_do_not() {
        let mut w = head(kind::WAKING, FLAG_HARDIRQ);
        w.extend(9i32.to_le_bytes());
        w.extend(0i32.to_le_bytes());
        let e = decode(&w).unwrap();
        assert!(e.in_hardirq());
        assert_eq!(
            e.kind,
            Kind::Waking {
                pid: 9,
                target_cpu: 0
            }
        );

        let mut t = head(kind::TIMER_START, 0);
        for v in [0xffff_8880_0000_1000u64, 5_000, 55_000] {
            t.extend(v.to_le_bytes());
        }
        assert_eq!(
            decode(&t).unwrap().kind,
            Kind::TimerStart {
                timer: 0xffff_8880_0000_1000,
                soft_ns: 5_000,
                hard_ns: 55_000
            }
        );

        let mut x = head(kind::TIMER_EXPIRE, FLAG_HARDIRQ);
        x.extend(3u64.to_le_bytes());
        x.extend(56_000i64.to_le_bytes());
        assert_eq!(
            decode(&x).unwrap().kind,
            Kind::TimerExpire {
                timer: 3,
                now_ns: 56_000
            }
        );

        let mut s = head(kind::SYS_ENTER, 0);
        s.extend(230i64.to_le_bytes());
        for a in 1..=6u64 {
            s.extend(a.to_le_bytes());
        }
        assert_eq!(
            decode(&s).unwrap().kind,
            Kind::SysEnter {
                id: 230,
                args: [1, 2, 3, 4, 5, 6]
            }
        );

        let mut r = head(kind::SYS_EXIT, 0);
        r.extend(230i64.to_le_bytes());
        r.extend((-4i64).to_le_bytes());
        assert_eq!(decode(&r).unwrap().kind, Kind::SysExit { id: 230, ret: -4 });

        let mut i = head(kind::IRQ_ENTRY, FLAG_HARDIRQ);
        i.extend(3u32.to_le_bytes());
        i.extend(7i32.to_le_bytes());
        assert_eq!(
            decode(&i).unwrap().kind,
            Kind::IrqEntry {
                what: Interrupt::Softirq,
                number: 7
            }
        );
        i[17] = kind::IRQ_EXIT;
        assert_eq!(
            decode(&i).unwrap().kind,
            Kind::IrqExit {
                what: Interrupt::Softirq,
                number: 7
            }
        );
        i[HEAD] = 4; // no such interrupt
        assert_eq!(decode(&i), None);

        let mut d = head(kind::IDLE, 0);
        d.extend(1u32.to_le_bytes());
        d.extend(0u32.to_le_bytes());
        assert_eq!(decode(&d).unwrap().kind, Kind::IdleEnter { state: 1 });
        d[HEAD..HEAD + 4].copy_from_slice(&IDLE_EXIT_STATE.to_le_bytes());
        assert_eq!(decode(&d).unwrap().kind, Kind::IdleExit);

        let mut unknown = head(0, 0);
        unknown.extend([0u8; 64]);
        assert_eq!(decode(&unknown), None);
        assert_eq!(decode(&[]), None);
    }

    #[test]
    fn the_switch_state_follows_the_kernels_rule() {
        // Preempted: runnable, beyond the sleeping bits.
        assert_eq!(switch_state(true, 0x1, 0), 0x100);
        assert_eq!(switch_state(true, 0x1, 0) & SLEEPING_STATES, 0);
        // Running (yielded): 0.
        assert_eq!(switch_state(false, 0, 0), 0);
        // S, D, and a dead task's exit state.
        assert_eq!(switch_state(false, 0x1, 0), 0x1);
        assert_eq!(switch_state(false, 0x2, 0), 0x2);
        assert_eq!(switch_state(false, 0, 0x20), 0x20);
        assert_eq!(switch_state(false, 0x1, 0x10), 0x10);
        // Flags outside the report (TASK_WAKEKILL, TASK_NOLOAD…) are not states.
        assert_eq!(switch_state(false, 0x100 | 0x1, 0), 0x1);
        // TASK_IDLE is its own state; an rt lock's wait reads as D.
        assert_eq!(switch_state(false, TASK_IDLE, 0), 0x80);
        assert_eq!(switch_state(false, TASK_RTLOCK_WAIT, 0), 0x2);
    }
}
