//! The kernel events a wake is explained from, decoded into plain values: the contract
//! between capture (which records and decodes them) and analysis (which splits wakes on
//! them, live or from a saved trace).

/// The `common_flags` bit set when an event was recorded in hard-interrupt context
/// (`TRACE_FLAG_HARDIRQ`).
pub const FLAG_HARDIRQ: u8 = 0x08;

/// The `common_flags` bit set in softirq context (`TRACE_FLAG_SOFTIRQ`).
pub const FLAG_SOFTIRQ: u8 = 0x10;

/// The `common_flags` bit set in NMI context (`TRACE_FLAG_NMI`).
pub const FLAG_NMI: u8 = 0x40;

/// The bits of `sched_switch`'s `prev_state` that name a sleeping state (S, D, T, …);
/// zero means the task was still runnable (preempted, or it yielded).
pub const SLEEPING_STATES: i64 = 0xff;

/// A task's name as the kernel keeps it (at most 15 bytes and a NUL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Comm(pub [u8; 16]);

impl Comm {
    /// The name from a string (tests; longer names are cut at 15 bytes).
    pub fn new(s: &str) -> Self {
        let mut b = [0u8; 16];
        let n = s.len().min(15);
        b[..n].copy_from_slice(&s.as_bytes()[..n]);
        Self(b)
    }

    /// The name as text (lossy).
    pub fn as_string(&self) -> String {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(16);
        String::from_utf8_lossy(&self.0[..end]).into_owned()
    }
}

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `timer:hrtimer_start`: a high-resolution timer armed (by a task, or re-armed by
    /// its own interrupt), with its soft and hard expiry (CLOCK_MONOTONIC ns for the
    /// timers waits use).
    TimerStart {
        /// The timer's kernel address (its identity).
        timer: u64,
        /// Soft expiry: the earliest it may fire.
        soft_ns: i64,
        /// Hard expiry: soft + the slack; the interrupt is programmed for this.
        hard_ns: i64,
    },
    /// `timer:hrtimer_expire_entry`: the interrupt handler runs the timer's callback.
    TimerExpire {
        /// The timer's kernel address.
        timer: u64,
        /// The handler's clock reading, ns.
        now_ns: i64,
    },
    /// `sched:sched_waking`: a task is being woken.
    Waking {
        /// The woken task.
        pid: i32,
        /// The CPU it will run on.
        target_cpu: i32,
    },
    /// `sched:sched_switch`: the CPU switches from one task to another.
    Switch {
        /// The task leaving the CPU.
        prev_pid: i32,
        /// Its state: sleeping bits ([`SLEEPING_STATES`]) or runnable (0, or the
        /// preemption flag).
        prev_state: i64,
        /// Its name.
        prev_comm: Comm,
        /// The task taking the CPU.
        next_pid: i32,
        /// Its name.
        next_comm: Comm,
    },
    /// `raw_syscalls:sys_enter`: a system call begins (recorded only for a followed
    /// program, [`Events::Program`]).
    SysEnter {
        /// The system call's number.
        id: i64,
        /// Its six arguments as the kernel received them (pointers are addresses in the
        /// caller's memory, not what they point to).
        args: [u64; 6],
    },
    /// `raw_syscalls:sys_exit`: a system call returns.
    SysExit {
        /// The system call's number.
        id: i64,
        /// What it returns (a negative errno on failure; the kernel's own value, before
        /// a signal's restart rewrites it).
        ret: i64,
    },
    /// The guest kernel began handling an interrupt or a softirq on `cpu` (its `pid`:
    /// the task it interrupted, 0 for the idle task).
    IrqEntry {
        /// Which kind.
        what: Interrupt,
        /// The irq number, vector or softirq number.
        number: i32,
    },
    /// The guest kernel finished handling an interrupt or a softirq.
    IrqExit {
        /// Which kind.
        what: Interrupt,
        /// The irq number, vector or softirq number.
        number: i32,
    },
    /// `power:cpu_idle` entering an idle state: the guest's idle loop is about to stop
    /// the CPU (`state` ≥ 1: HLT or a deeper state, where a VM's vCPU leaves the guest)
    /// or to poll (`state` 0: the CPU keeps running guest code).
    IdleEnter {
        /// The idle state's index.
        state: u32,
    },
    /// `power:cpu_idle` leaving the idle state (the kernel's `PWR_EVENT_EXIT`): back in
    /// the idle loop, after any interrupt that ended the state.
    IdleExit,
}

/// `power:cpu_idle`'s state on leaving an idle state (`PWR_EVENT_EXIT`, −1 as a u32).
pub const IDLE_EXIT_STATE: u32 = u32::MAX;

/// The kind of interrupt an [`Kind::IrqEntry`] or [`Kind::IrqExit`] marks: time the
/// guest's own kernel spent, not the interrupted task's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// A device's handler (`irq:irq_handler_entry/exit`).
    Device,
    /// The local timer interrupt, which runs expired high-resolution timers
    /// (`irq_vectors:local_timer_entry/exit`, x86).
    LocalTimer,
    /// Another system vector: a reschedule or function-call IPI, irq work
    /// (`irq_vectors:*_entry/exit`, x86).
    Vector,
    /// A softirq (`irq:softirq_entry/exit`), run after an interrupt or in ksoftirqd.
    Softirq,
}

/// How a followed program's system calls are kept to its threads (the kernel fires
/// `raw_syscalls` events for every process's calls).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SyscallsBy {
    /// An event filter on `common_pid` naming the program's threads and the pids not
    /// handed out yet, moved on as the drains see it fork (`lineage.rs`): no hook is
    /// added to the machine's switches and wakeups, and every other process's system
    /// calls cost more (each builds its records before the filter drops them).
    #[default]
    Filter,
    /// The kernel's pid list (`set_event_pid` with `event-fork`): other processes'
    /// system calls are skipped before a record is built, and every switch and wakeup
    /// on the machine passes its hooks, the program's wakes among them.
    PidList,
    /// The BPF recorder (`bpf/`): every event recorded by BPF programs rather than
    /// tracefs, and the system calls kept to the program's threads in the kernel by a
    /// map of their ids that follows its forks as they happen (`explain --pid --bpf`).
    /// It needs the kernel's BTF and a build with the `bpf` feature; see `bpf/mod.rs`
    /// for what it was measured to cost and to miss.
    Bpf,
}

/// How much of the machine's own work a session records beside the timers, the
/// scheduler and the system calls of [`Events`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Detail {
    /// The guest's interrupts, softirqs and idle states, where the kernel has them: a
    /// wake's account then tells the host's share of a timer's delivery from the guest's
    /// own work (its interrupt entry, its polling before the CPU halted), and names the
    /// interrupts that held a CPU.
    #[default]
    Full,
    /// The guest's interrupts and softirqs but the local timer's, and no idle states:
    /// those three tracepoints (the local timer's entry and exit, the idle state's exit)
    /// lie on the way of every wake from an idle CPU, and together they add to its
    /// lateness (docs/BENCHMARKS.md, "What the tracer costs": the side with the idle
    /// states). The account still names the
    /// interrupts that held a CPU, and tells an idle CPU's timer delivery up to the
    /// timer handler's own clock read; a CPU that polled is not told from one that
    /// halted, nor the interrupt's entry from its delivery.
    Interrupts,
    /// No interrupts, softirqs or idle states: the account tells no host share and names
    /// no interrupt.
    Light,
}

impl Detail {
    /// Whether the guest's interrupts and softirqs are recorded.
    pub fn records_interrupts(self) -> bool {
        self != Detail::Light
    }

    /// Whether the local timer's interrupt and the idle loop's states are recorded.
    pub fn records_idle_path(self) -> bool {
        self == Detail::Full
    }
}

/// Which of the machine's interrupts a recording holds (a session's, a saved trace's,
/// a timeline's): the local timer's is only ever recorded with the others.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InterruptsRecorded {
    /// None: a light session, or a kernel without their tracepoints.
    #[default]
    None,
    /// Every interrupt and softirq but the local timer's ([`Detail::Interrupts`]).
    ButLocalTimer,
    /// Every one, the local timer's too ([`Detail::Full`] where the kernel has its
    /// tracepoints).
    All,
}

impl InterruptsRecorded {
    /// Whether the interrupts and softirqs are recorded (all, or all but one).
    pub fn any(self) -> bool {
        self != InterruptsRecorded::None
    }

    /// Whether the local timer's interrupt is recorded (with the others).
    pub fn local_timer(self) -> bool {
        self == InterruptsRecorded::All
    }

    /// All of them where `recorded`, else none.
    pub fn all_or_none(recorded: bool) -> Self {
        if recorded {
            InterruptsRecorded::All
        } else {
            InterruptsRecorded::None
        }
    }
}

/// Which tracepoints a session records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Events {
    /// Every tracepoint the account reads: it tells the kernel's way out of the system
    /// call (`kernel exit`) from the way back to the caller's clock read (`return`).
    #[default]
    All,
    /// All but `raw_syscalls:sys_exit`: kernel exit and return are one component
    /// (`return`). Enabling any system-call tracepoint makes the kernel take the slow
    /// path of every system call of every thread (its `SYSCALL_TRACEPOINT` work flag is
    /// set on all of them, whatever `set_event_pid` says), the measured one included;
    /// this leaves every system call on its fast path.
    NoSyscallExit,
    /// Everything [`Events::All`] records, and the system calls' entries
    /// (`raw_syscalls:sys_enter`) of the followed threads: what a program's own waits
    /// are found from (which call, its arguments, when it began).
    Program,
}

impl Events {
    /// Whether the system calls' returns (`raw_syscalls:sys_exit`) are recorded.
    pub fn records_sys_exit(self) -> bool {
        matches!(self, Events::All | Events::Program)
    }

    /// Whether the system calls' entries (`raw_syscalls:sys_enter`) are recorded.
    pub fn records_sys_enter(self) -> bool {
        self == Events::Program
    }
}

/// One recorded event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// When, CLOCK_MONOTONIC ns (the clock the measured code reads).
    pub time_ns: u64,
    /// The CPU it happened on.
    pub cpu: u32,
    /// The task that was current (`common_pid`: for interrupt-context events, whoever
    /// was interrupted).
    pub pid: i32,
    /// `common_flags` (interrupt context and the like).
    pub flags: u8,
    /// What happened.
    pub kind: Kind,
}

impl Event {
    /// Whether the event was recorded in hard-interrupt context.
    pub fn in_hardirq(&self) -> bool {
        self.flags & FLAG_HARDIRQ != 0
    }

    /// Whether the event was recorded in the context of its task (`pid`), not in an
    /// interrupt that only happened to interrupt it: a timer armed so was armed by
    /// that task's own system call.
    pub fn in_task(&self) -> bool {
        self.flags & (FLAG_HARDIRQ | FLAG_SOFTIRQ | FLAG_NMI) == 0
    }
}

/// What a tracer captured: the events (any order), which tracepoints it recorded, and
/// how many events the kernel could not record. All analysis needs: a wake's account
/// runs on this, live or saved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The events.
    pub events: Vec<Event>,
    /// What was recorded (an event not recorded is not missing).
    pub recorded: Events,
    /// Events the kernel could not record (a full buffer).
    pub lost: u64,
    /// Which of the guest's interrupts and softirqs were recorded ([`Kind::IrqEntry`],
    /// [`Kind::IrqExit`]): without any, no time is told to be the host's; without the
    /// local timer's ([`Interrupt::LocalTimer`]), an idle CPU's timer delivery ends at
    /// the timer handler's own clock read ([`Kind::TimerExpire`]'s `now_ns`).
    pub interrupts: InterruptsRecorded,
    /// The kernel stacks of the tasks that left a CPU, where they were recorded
    /// (`explain --stacks`; never in a saved trace), in the order drained.
    pub stacks: Vec<crate::stacks::SwitchStack>,
    /// Stack records that followed no switch on their CPU (a record lost between them).
    pub unpaired_stacks: u64,
    /// Threads of a followed program born where its filter did not reach: their first
    /// system calls may be missing (never in a saved trace).
    pub late_threads: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comm_is_cut_at_its_nul_and_at_15_bytes() {
        assert_eq!(Comm::new("cc1").as_string(), "cc1");
        assert_eq!(
            Comm::new("a-very-long-task-name").as_string(),
            "a-very-long-tas"
        );
        assert_eq!(Comm::default().as_string(), "");
    }
}
