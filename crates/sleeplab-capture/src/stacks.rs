//! Kernel stacks of the tasks that leave a CPU (`explain --stacks`): a `stacktrace`
//! trigger on `sched:sched_switch` makes the kernel record, right after each switch
//! whose outgoing task is not the idle task, the kernel stack of that task
//! (`ftrace:kernel_stack` records: where it called into the scheduler, preempted or
//! blocking). The drain pairs each with the switch before it on the same CPU
//! ([`SwitchStack`]); [`Symbols`] names the addresses from `/proc/kallsyms`.
//!
//! The trigger walks a stack inside every such switch: it adds that walk's time to
//! every context switch on the machine while it is set, so the lateness read beside it
//! is a little higher than without.

use crate::format::{Format, IntField};

/// The trigger written to `events/sched/sched_switch/trigger` (and, prefixed with `!`,
/// to remove it). The condition makes the kernel record the stack after the switch's
/// own record (a trigger with a condition runs once the event is written), so a stack
/// always follows its switch.
pub(crate) const TRIGGER: &str = "stacktrace if prev_pid != 0";

/// The kernel stack of the task a switch took off its CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchStack {
    /// The CPU of the switch.
    pub cpu: u32,
    /// The switch's time, CLOCK_MONOTONIC ns.
    pub time_ns: u64,
    /// The return addresses, innermost first.
    pub frames: Vec<u64>,
}

/// Pairs each stack record with the switch recorded just before it on the same CPU,
/// across the pages and drains of a session (a CPU's records are read in order): a
/// stack whose switch is not the record before it (a lost record between them) is
/// counted, not paired.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pairing {
    /// Per CPU, the time of its last record when that record was a switch.
    last_switch: Vec<Option<u64>>,
    /// Stacks with no switch just before them.
    pub(crate) unpaired: u64,
}

impl Pairing {
    /// Notes a record on `cpu` other than a stack: a switch at `switch_ns`, or not.
    pub(crate) fn record(&mut self, cpu: u32, switch_ns: Option<u64>) {
        let i = cpu as usize;
        if self.last_switch.len() <= i {
            self.last_switch.resize(i + 1, None);
        }
        self.last_switch[i] = switch_ns;
    }

    /// A stack on `cpu`: the time of the switch it belongs to, or `None` (counted).
    pub(crate) fn stack(&mut self, cpu: u32) -> Option<u64> {
        let paired = self
            .last_switch
            .get_mut(cpu as usize)
            .and_then(Option::take);
        self.unpaired += u64::from(paired.is_none());
        paired
    }
}

/// Reads `ftrace:kernel_stack` records by the running kernel's layout: the record
/// holds `size` addresses from `caller` on (the format declares a fixed array, but the
/// record is as long as the stack).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StackDecoder {
    id: u16,
    size: IntField,
    callers: usize,
}

impl StackDecoder {
    /// From the `ftrace:kernel_stack` format; `None` where it lacks a field.
    pub(crate) fn from_format(f: &Format) -> Option<Self> {
        Some(Self {
            id: u16::try_from(f.id).ok()?,
            size: f.int("size").ok()?,
            callers: f.field("caller").ok()?.offset,
        })
    }

    /// Whether `raw` is a kernel stack record.
    pub(crate) fn is_stack(&self, raw: &[u8]) -> bool {
        raw.get(..2)
            .is_some_and(|t| u16::from_le_bytes([t[0], t[1]]) == self.id)
    }

    /// The addresses of the stack record `raw` (as many as it holds, at most `size`).
    pub(crate) fn frames(&self, raw: &[u8]) -> Vec<u64> {
        let n = self
            .size
            .read(raw)
            .map_or(0, |n| usize::try_from(n).unwrap_or(0));
        raw.get(self.callers..)
            .unwrap_or_default()
            .chunks_exact(8)
            .take(n)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .take_while(|&a| a != 0 && a != u64::MAX)
            .collect()
    }
}

/// The kernel's symbols, from `/proc/kallsyms` (real addresses as root).
#[derive(Debug, Clone, Default)]
pub struct Symbols {
    /// Text symbols by address, sorted.
    by_addr: Vec<(u64, String)>,
}

impl Symbols {
    /// Reads `/proc/kallsyms`; none where it cannot be read (or shows zeros, not root).
    pub fn load() -> Self {
        Self::parse(&std::fs::read_to_string("/proc/kallsyms").unwrap_or_default())
    }

    /// From the text of `/proc/kallsyms`: its text symbols (`t`, `T`, `w`, `W`).
    pub fn parse(text: &str) -> Self {
        let mut by_addr: Vec<(u64, String)> = text
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                let addr = u64::from_str_radix(w.next()?, 16).ok()?;
                let kind = w.next()?;
                let name = w.next()?;
                (addr != 0 && matches!(kind, "t" | "T" | "w" | "W"))
                    .then(|| (addr, name.to_string()))
            })
            .collect();
        by_addr.sort_unstable();
        Self { by_addr }
    }

    /// `name+0xoffset` of `addr`, or the address in hex where no symbol holds it.
    pub fn name(&self, addr: u64) -> String {
        let i = self.by_addr.partition_point(|(a, _)| *a <= addr);
        match i.checked_sub(1).and_then(|i| self.by_addr.get(i)) {
            Some((a, name)) => format!("{name}+{:#x}", addr - a),
            None => format!("{addr:#x}"),
        }
    }

    /// The frames of `stack` worth reading, named: without the tracer's own frames and
    /// the scheduler's core, which every such stack begins with, so the first is how
    /// the task came to switch (`schedule`, `preempt_schedule_irq`, …).
    pub fn shown(&self, frames: &[u64]) -> Vec<String> {
        let named: Vec<String> = frames.iter().map(|&a| self.name(a)).collect();
        let plain = |n: &str| n.split('+').next().unwrap_or(n).to_string();
        let skip = named
            .iter()
            .position(|n| plain(n) == "__schedule")
            .map_or(0, |i| i + 1);
        named
            .into_iter()
            .skip(skip)
            .filter(|n| {
                let p = plain(n);
                !p.starts_with("trace_event_raw_event_") && !p.starts_with("__traceiter_")
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KALLSYMS: &str = "ffffffff81000000 T _stext\n\
        ffffffff81100000 t trace_event_raw_event_sched_switch\n\
        ffffffff81100200 T __traceiter_sched_switch\n\
        ffffffff81200000 T __schedule\n\
        ffffffff81200800 T schedule\n\
        ffffffff81300000 T worker_thread\n\
        ffffffff81300400 d some_data\n\
        0000000000000000 T hidden\n";

    /// A stack goes with the switch just before it on its own CPU, however the CPUs'
    /// records interleave; one after another record, or a second after one switch, is
    /// counted unpaired.
    #[test]
    fn a_stack_pairs_with_the_switch_just_before_it_on_its_cpu() {
        let mut p = Pairing::default();
        p.record(1, Some(100));
        p.record(0, Some(200));
        assert_eq!(p.stack(1), Some(100));
        assert_eq!(p.stack(1), None, "one stack a switch");
        p.record(0, None);
        assert_eq!(p.stack(0), None, "another record came between");
        assert_eq!(p.stack(7), None, "a CPU never seen");
        p.record(0, Some(300));
        assert_eq!(p.stack(0), Some(300));
        assert_eq!(p.unpaired, 3);
    }

    #[test]
    fn addresses_are_named_by_the_symbol_that_holds_them() {
        let s = Symbols::parse(KALLSYMS);
        assert_eq!(s.name(0xffffffff81200810), "schedule+0x10");
        assert_eq!(s.name(0xffffffff81200000), "__schedule+0x0");
        // Data symbols name nothing: the text symbol before it does.
        assert_eq!(s.name(0xffffffff81300410), "worker_thread+0x410");
        assert_eq!(s.name(0x1000), "0x1000");
        assert_eq!(
            Symbols::default().name(0xffffffff81200810),
            "0xffffffff81200810"
        );
    }

    #[test]
    fn a_stack_is_shown_from_how_the_task_came_to_switch() {
        let s = Symbols::parse(KALLSYMS);
        let frames = [
            0xffffffff81100010,
            0xffffffff81100210,
            0xffffffff81200020,
            0xffffffff81200830,
            0xffffffff81300040,
        ];
        assert_eq!(s.shown(&frames), ["schedule+0x30", "worker_thread+0x40"]);
        // No scheduler core in it: only the tracer's frames are left out.
        assert_eq!(
            s.shown(&frames[3..]),
            ["schedule+0x30", "worker_thread+0x40"]
        );
    }

    #[test]
    fn a_stack_record_gives_as_many_frames_as_it_says_and_holds() {
        let f = Format::parse(
            "ID: 4\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
             \tfield:int size;\toffset:8;\tsize:4;\tsigned:1;\n\
             \tfield:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;\n",
        )
        .unwrap();
        let d = StackDecoder::from_format(&f).unwrap();
        let mut raw = vec![0u8; 16];
        raw[..2].copy_from_slice(&4u16.to_le_bytes());
        raw[8..12].copy_from_slice(&3i32.to_le_bytes());
        for a in [0xffffffff81200830u64, 0xffffffff81300040, 7, 9] {
            raw.extend_from_slice(&a.to_le_bytes());
        }
        assert!(d.is_stack(&raw));
        assert_eq!(d.frames(&raw), [0xffffffff81200830, 0xffffffff81300040, 7]);
        // A record shorter than its count: what it holds.
        assert_eq!(d.frames(&raw[..16 + 8]), [0xffffffff81200830]);
        assert!(!d.is_stack(&[5, 0, 0, 0]));
        assert!(d.frames(&[4, 0]).is_empty());
    }
}
