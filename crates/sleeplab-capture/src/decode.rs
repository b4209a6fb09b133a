//! The events a wake's account needs, and their decoding from raw records by the
//! running kernel's layouts.

use crate::TraceError;
use crate::event::{Comm, Event, Interrupt, Kind};
use crate::format::{BytesField, Format, FormatError, IntField};
use crate::tracefs::Tracefs;

/// The tracepoints recorded, in the order they are opened: the five every wake's
/// account needs, then the guest's interrupts and softirqs, recorded where the
/// running kernel has them ([`Tracepoint::required`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracepoint {
    /// `timer:hrtimer_start`.
    TimerStart,
    /// `timer:hrtimer_expire_entry`.
    TimerExpire,
    /// `sched:sched_waking`.
    Waking,
    /// `sched:sched_switch`.
    Switch,
    /// `raw_syscalls:sys_exit`.
    SysExit,
    /// `irq:irq_handler_entry`.
    IrqHandlerEntry,
    /// `irq:irq_handler_exit`.
    IrqHandlerExit,
    /// `irq:softirq_entry`.
    SoftirqEntry,
    /// `irq:softirq_exit`.
    SoftirqExit,
    /// `irq_vectors:local_timer_entry`.
    LocalTimerEntry,
    /// `irq_vectors:local_timer_exit`.
    LocalTimerExit,
    /// `irq_vectors:reschedule_entry`.
    RescheduleEntry,
    /// `irq_vectors:reschedule_exit`.
    RescheduleExit,
    /// `irq_vectors:call_function_entry`.
    CallFunctionEntry,
    /// `irq_vectors:call_function_exit`.
    CallFunctionExit,
    /// `irq_vectors:call_function_single_entry`.
    CallFunctionSingleEntry,
    /// `irq_vectors:call_function_single_exit`.
    CallFunctionSingleExit,
    /// `irq_vectors:irq_work_entry`.
    IrqWorkEntry,
    /// `irq_vectors:irq_work_exit`.
    IrqWorkExit,
    /// `power:cpu_idle`: where the idle loop stopped the CPU or polled.
    CpuIdle,
    /// `raw_syscalls:sys_enter`: recorded for a followed program only.
    SysEnter,
}

/// How many tracepoints there are.
const TRACEPOINTS: usize = 21;

impl Tracepoint {
    /// Every tracepoint, required ones first.
    pub const ALL: [Tracepoint; TRACEPOINTS] = [
        Tracepoint::TimerStart,
        Tracepoint::TimerExpire,
        Tracepoint::Waking,
        Tracepoint::Switch,
        Tracepoint::SysExit,
        Tracepoint::IrqHandlerEntry,
        Tracepoint::IrqHandlerExit,
        Tracepoint::SoftirqEntry,
        Tracepoint::SoftirqExit,
        Tracepoint::LocalTimerEntry,
        Tracepoint::LocalTimerExit,
        Tracepoint::RescheduleEntry,
        Tracepoint::RescheduleExit,
        Tracepoint::CallFunctionEntry,
        Tracepoint::CallFunctionExit,
        Tracepoint::CallFunctionSingleEntry,
        Tracepoint::CallFunctionSingleExit,
        Tracepoint::IrqWorkEntry,
        Tracepoint::IrqWorkExit,
        Tracepoint::CpuIdle,
        Tracepoint::SysEnter,
    ];

    /// The five a session cannot do without, in [`Decoders::from_formats`] order.
    pub const REQUIRED: [Tracepoint; 5] = [
        Tracepoint::TimerStart,
        Tracepoint::TimerExpire,
        Tracepoint::Waking,
        Tracepoint::Switch,
        Tracepoint::SysExit,
    ];

    /// Whether a session needs it (the interrupts' and the idle states' are recorded
    /// where the kernel has them; x86's `irq_vectors` exist nowhere else).
    pub fn required(self) -> bool {
        Self::REQUIRED.contains(&self)
    }

    /// For an interrupt's tracepoint: which kind, whether it is the entry, and the
    /// name of its number field.
    pub fn interrupt(self) -> Option<(Interrupt, bool, &'static str)> {
        use Interrupt::*;
        use Tracepoint as T;
        Some(match self {
            T::IrqHandlerEntry => (Device, true, "irq"),
            T::IrqHandlerExit => (Device, false, "irq"),
            T::SoftirqEntry => (Softirq, true, "vec"),
            T::SoftirqExit => (Softirq, false, "vec"),
            T::LocalTimerEntry => (LocalTimer, true, "vector"),
            T::LocalTimerExit => (LocalTimer, false, "vector"),
            T::RescheduleEntry | T::CallFunctionEntry | T::CallFunctionSingleEntry => {
                (Vector, true, "vector")
            }
            T::IrqWorkEntry => (Vector, true, "vector"),
            T::RescheduleExit | T::CallFunctionExit | T::CallFunctionSingleExit => {
                (Vector, false, "vector")
            }
            T::IrqWorkExit => (Vector, false, "vector"),
            _ => return None,
        })
    }

    /// Whether a session recording `events` in `detail` records this tracepoint (the
    /// kernel having it).
    pub fn recorded_by(self, events: crate::event::Events, detail: crate::event::Detail) -> bool {
        match self {
            Tracepoint::SysExit => events.records_sys_exit(),
            Tracepoint::SysEnter => events.records_sys_enter(),
            Tracepoint::CpuIdle | Tracepoint::LocalTimerEntry | Tracepoint::LocalTimerExit => {
                detail.records_idle_path()
            }
            _ if self.interrupt().is_some() => detail.records_interrupts(),
            _ => true,
        }
    }

    /// `(system, event)` in tracefs.
    pub fn path(self) -> (&'static str, &'static str) {
        use Tracepoint as T;
        match self {
            T::TimerStart => ("timer", "hrtimer_start"),
            T::TimerExpire => ("timer", "hrtimer_expire_entry"),
            T::Waking => ("sched", "sched_waking"),
            T::Switch => ("sched", "sched_switch"),
            T::SysExit => ("raw_syscalls", "sys_exit"),
            T::IrqHandlerEntry => ("irq", "irq_handler_entry"),
            T::IrqHandlerExit => ("irq", "irq_handler_exit"),
            T::SoftirqEntry => ("irq", "softirq_entry"),
            T::SoftirqExit => ("irq", "softirq_exit"),
            T::LocalTimerEntry => ("irq_vectors", "local_timer_entry"),
            T::LocalTimerExit => ("irq_vectors", "local_timer_exit"),
            T::RescheduleEntry => ("irq_vectors", "reschedule_entry"),
            T::RescheduleExit => ("irq_vectors", "reschedule_exit"),
            T::CallFunctionEntry => ("irq_vectors", "call_function_entry"),
            T::CallFunctionExit => ("irq_vectors", "call_function_exit"),
            T::CallFunctionSingleEntry => ("irq_vectors", "call_function_single_entry"),
            T::CallFunctionSingleExit => ("irq_vectors", "call_function_single_exit"),
            T::IrqWorkEntry => ("irq_vectors", "irq_work_entry"),
            T::IrqWorkExit => ("irq_vectors", "irq_work_exit"),
            T::CpuIdle => ("power", "cpu_idle"),
            T::SysEnter => ("raw_syscalls", "sys_enter"),
        }
    }

    /// Whether the tracepoint is recorded only in the context of the followed threads:
    /// `raw_syscalls:sys_exit` (and `sys_enter`) fire in the context of the thread whose
    /// system call returns (or begins), and are kept to the followed threads by the
    /// kernel's pid list of an instance of their own or, for a program, by an event
    /// filter (see `session.rs`).
    pub fn per_thread(self) -> bool {
        matches!(self, Tracepoint::SysExit | Tracepoint::SysEnter)
    }

    /// Whether every occurrence is kept, whichever thread it concerns: the timer
    /// events, because the timer that wakes a thread may be re-armed in interrupt
    /// context by no thread of ours.
    pub fn of_every_thread(self) -> bool {
        matches!(self, Tracepoint::TimerStart | Tracepoint::TimerExpire)
    }
}

/// Whether `e` concerns one of the threads `tids`: a timer event (any), the wakeup of
/// one, any switch (who held a CPU while a followed thread waited for it is named from
/// the switches between other tasks), a system call's return in one, an interrupt that
/// interrupted one or an idle CPU (the one a sleeping thread's timer fires on), an
/// idle state's entry or exit (the idle task's). The
/// scheduler's events are kept by this test rather than by a filter in the kernel: on
/// the kernels here a filtered `sched_switch` loses, at random and for whole runs, the
/// switches of a thread onto a CPU that was idle (of 100 switches in, 0 to 102 recorded
/// behind `prev_pid == T || next_pid == T`; all of them unfiltered).
pub fn concerns(e: &Event, tids: &[i32]) -> bool {
    match e.kind {
        Kind::TimerStart { .. } | Kind::TimerExpire { .. } | Kind::Switch { .. } => true,
        Kind::Waking { pid, .. } => tids.contains(&pid),
        Kind::SysExit { .. } | Kind::SysEnter { .. } => tids.contains(&e.pid),
        Kind::IrqEntry { .. } | Kind::IrqExit { .. } => e.pid == 0 || tids.contains(&e.pid),
        Kind::IdleEnter { .. } | Kind::IdleExit => e.pid == 0,
    }
}

/// Field readers every event has.
#[derive(Debug, Clone, Copy)]
struct Common {
    flags: IntField,
    pid: IntField,
}

/// How to read the fields of each recorded event.
#[derive(Debug, Clone)]
pub struct Decoders {
    /// Per tracepoint ([`Tracepoint::ALL`] order), its id where the kernel has it.
    ids: [Option<u64>; TRACEPOINTS],
    common: [Option<Common>; TRACEPOINTS],
    start: (IntField, IntField, IntField),
    expire: (IntField, IntField),
    waking: (IntField, IntField),
    switch: (IntField, IntField, BytesField, IntField, BytesField),
    /// `raw_syscalls:sys_exit`'s `id` and `ret`.
    sys_exit: (IntField, IntField),
    /// `raw_syscalls:sys_enter`'s `id` and `args[0..6]`, where loaded.
    sys_enter: Option<(IntField, [IntField; 6])>,
    /// Per tracepoint, an interrupt's number field.
    number: [Option<IntField>; TRACEPOINTS],
    /// `power:cpu_idle`'s state, where the kernel has it.
    idle_state: Option<IntField>,
}

impl Decoders {
    /// Reads every recorded event's layout from `fs`: the five required, and the
    /// interrupts' where the kernel has them.
    pub fn load(fs: &Tracefs) -> Result<Self, TraceError> {
        let formats: Vec<Format> = Tracepoint::REQUIRED
            .iter()
            .map(|t| {
                let (sys, ev) = t.path();
                fs.format(sys, ev)
            })
            .collect::<Result<_, _>>()?;
        let interrupts: Vec<(Tracepoint, Format)> = Tracepoint::ALL
            .into_iter()
            .filter(|t| t.interrupt().is_some())
            .filter_map(|t| {
                let (sys, ev) = t.path();
                Some((t, fs.format(sys, ev).ok()?))
            })
            .collect();
        let (sys, ev) = Tracepoint::CpuIdle.path();
        let idle = fs.format(sys, ev).ok();
        let (sys, ev) = Tracepoint::SysEnter.path();
        let enter = fs.format(sys, ev).ok();
        Self::from_formats(&formats)
            .and_then(|d| d.with_interrupts(&interrupts))
            .and_then(|d| match &idle {
                Some(f) => d.with_idle(f),
                None => Ok(d),
            })
            .and_then(|d| match &enter {
                Some(f) => d.with_sys_enter(f),
                None => Ok(d),
            })
            .map_err(|e| TraceError::Format(e.to_string()))
    }

    /// The decoders of `formats`, the five required given in [`Tracepoint::REQUIRED`]
    /// order (no interrupt's: see [`Decoders::with_interrupts`]).
    pub fn from_formats(formats: &[Format]) -> Result<Self, FormatError> {
        let common = |f: &Format| -> Result<Option<Common>, FormatError> {
            Ok(Some(Common {
                flags: f.int("common_flags")?,
                pid: f.int("common_pid")?,
            }))
        };
        let [start, expire, waking, switch, sys_exit] = formats else {
            return Err(FormatError::NoField("the five tracepoints".into()));
        };
        let mut ids = [None; TRACEPOINTS];
        let mut commons = [None; TRACEPOINTS];
        for (i, f) in formats.iter().enumerate() {
            ids[i] = Some(f.id);
            commons[i] = common(f)?;
        }
        Ok(Self {
            ids,
            common: commons,
            start: (
                start.int("hrtimer")?,
                start.int("softexpires")?,
                start.int("expires")?,
            ),
            expire: (expire.int("hrtimer")?, expire.int("now")?),
            waking: (waking.int("pid")?, waking.int("target_cpu")?),
            switch: (
                switch.int("prev_pid")?,
                switch.int("prev_state")?,
                switch.bytes("prev_comm")?,
                switch.int("next_pid")?,
                switch.bytes("next_comm")?,
            ),
            sys_exit: (sys_exit.int("id")?, sys_exit.int("ret")?),
            sys_enter: None,
            number: [None; TRACEPOINTS],
            idle_state: None,
        })
    }

    /// The same decoders, also reading `power:cpu_idle` by its layout `format`.
    pub fn with_idle(mut self, format: &Format) -> Result<Self, FormatError> {
        let i = Tracepoint::CpuIdle as usize;
        self.idle_state = Some(format.int("state")?);
        self.common[i] = Some(Common {
            flags: format.int("common_flags")?,
            pid: format.int("common_pid")?,
        });
        self.ids[i] = Some(format.id);
        Ok(self)
    }

    /// The same decoders, also reading `raw_syscalls:sys_enter` by its layout `format`.
    pub fn with_sys_enter(mut self, format: &Format) -> Result<Self, FormatError> {
        let i = Tracepoint::SysEnter as usize;
        let args = [0, 1, 2, 3, 4, 5].map(|k| format.int_at("args", k, 6));
        let [a0, a1, a2, a3, a4, a5] = args;
        self.sys_enter = Some((format.int("id")?, [a0?, a1?, a2?, a3?, a4?, a5?]));
        self.common[i] = Some(Common {
            flags: format.int("common_flags")?,
            pid: format.int("common_pid")?,
        });
        self.ids[i] = Some(format.id);
        Ok(self)
    }

    /// The same decoders, also reading the interrupts' tracepoints `formats` (any
    /// subset, any order; a required tracepoint among them is an error).
    pub fn with_interrupts(
        mut self,
        formats: &[(Tracepoint, Format)],
    ) -> Result<Self, FormatError> {
        for (t, f) in formats {
            let Some((_, _, field)) = t.interrupt() else {
                return Err(FormatError::NoField(format!(
                    "{:?} is no interrupt",
                    t.path()
                )));
            };
            let i = *t as usize;
            self.number[i] = Some(f.int(field)?);
            self.common[i] = Some(Common {
                flags: f.int("common_flags")?,
                pid: f.int("common_pid")?,
            });
            self.ids[i] = Some(f.id);
        }
        Ok(self)
    }

    /// Whether the guest's interrupts are decoded: the device handlers' and softirqs'
    /// entries and exits at least (the local timer's exist on x86 only).
    pub fn interrupts(&self) -> bool {
        [
            Tracepoint::IrqHandlerEntry,
            Tracepoint::IrqHandlerExit,
            Tracepoint::SoftirqEntry,
            Tracepoint::SoftirqExit,
        ]
        .into_iter()
        .all(|t| self.has(t))
    }

    /// Whether `t`'s layout was loaded (a session records it).
    pub fn has(&self, t: Tracepoint) -> bool {
        self.ids[t as usize].is_some()
    }

    /// The kernel's event id of `t` (a record's `common_type`), where it has `t`.
    pub fn id(&self, t: Tracepoint) -> Option<u64> {
        self.ids[t as usize]
    }

    /// The tracepoint whose id is `id`, if it is one recorded.
    pub fn tracepoint_of(&self, id: u64) -> Option<Tracepoint> {
        Tracepoint::ALL
            .into_iter()
            .find(|&t| self.id(t) == Some(id))
    }

    /// Decodes a record of any recorded tracepoint (told apart by its leading
    /// `common_type`, a u16); `None` for another event or a short record.
    pub fn decode_record(&self, raw: &[u8], time_ns: u64, cpu: u32) -> Option<Event> {
        let id = u16::from_le_bytes(raw.get(..2)?.try_into().ok()?);
        self.decode(self.tracepoint_of(u64::from(id))?, raw, time_ns, cpu)
    }

    /// Decodes the raw record of a `t` event recorded at `time_ns` on `cpu`; `None`
    /// when the record is too short for its layout, or `t` was not loaded.
    pub fn decode(&self, t: Tracepoint, raw: &[u8], time_ns: u64, cpu: u32) -> Option<Event> {
        let c = self.common[t as usize]?;
        let kind = match t {
            Tracepoint::TimerStart => Kind::TimerStart {
                timer: self.start.0.read(raw)? as u64,
                soft_ns: self.start.1.read(raw)?,
                hard_ns: self.start.2.read(raw)?,
            },
            Tracepoint::TimerExpire => Kind::TimerExpire {
                timer: self.expire.0.read(raw)? as u64,
                now_ns: self.expire.1.read(raw)?,
            },
            Tracepoint::Waking => Kind::Waking {
                pid: self.waking.0.read(raw)? as i32,
                target_cpu: self.waking.1.read(raw)? as i32,
            },
            Tracepoint::Switch => Kind::Switch {
                prev_pid: self.switch.0.read(raw)? as i32,
                prev_state: self.switch.1.read(raw)?,
                prev_comm: Comm(self.switch.2.read16(raw)?),
                next_pid: self.switch.3.read(raw)? as i32,
                next_comm: Comm(self.switch.4.read16(raw)?),
            },
            Tracepoint::SysExit => Kind::SysExit {
                id: self.sys_exit.0.read(raw)?,
                ret: self.sys_exit.1.read(raw)?,
            },
            Tracepoint::SysEnter => {
                let (id, fields) = self.sys_enter.as_ref()?;
                let mut args = [0u64; 6];
                for (a, f) in args.iter_mut().zip(fields) {
                    *a = f.read(raw)? as u64;
                }
                Kind::SysEnter {
                    id: id.read(raw)?,
                    args,
                }
            }
            Tracepoint::CpuIdle => match self.idle_state?.read(raw)? as u32 {
                crate::event::IDLE_EXIT_STATE => Kind::IdleExit,
                state => Kind::IdleEnter { state },
            },
            _ => {
                let (what, entry, _) = t.interrupt()?;
                let number = self.number[t as usize]?.read(raw)? as i32;
                if entry {
                    Kind::IrqEntry { what, number }
                } else {
                    Kind::IrqExit { what, number }
                }
            }
        };
        Some(Event {
            time_ns,
            cpu,
            pid: c.pid.read(raw)? as i32,
            flags: c.flags.read(raw)? as u8,
            kind,
        })
    }
}

#[cfg(test)]
mod tests;
