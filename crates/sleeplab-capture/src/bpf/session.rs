//! The BPF recorder's session: the object's maps created and the programs a detail
//! asks for loaded and attached (by aya, a loader in Rust: no C library to link); its
//! ring buffer drained into events; the followed threads' map kept.

use std::sync::Mutex;

use aya::maps::{Array, HashMap, MapData, PerCpuArray, PerCpuValues, RingBuf};
use aya::programs::{BtfTracePoint, links::FdLink};
use aya::{Btf, Ebpf, EbpfLoader, Pod};

use super::btf::KernelTypes;
use super::record::decode;
use crate::TraceError;
use crate::event::{Detail, Event, InterruptsRecorded};
use crate::session::Drained;

/// The compiled BPF object (`bpf/recorder.bpf.c`), built by `build.rs`.
const OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/recorder.bpf.o"));

/// Where the kernel describes its own types, which the programs are typed against.
const VMLINUX_BTF: &str = "/sys/kernel/btf/vmlinux";

/// What a program records, and so when it is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Always, or no account: a kernel without it cannot be recorded.
    Required,
    /// A device interrupt's or a softirq's: with interrupts, all four or none.
    Interrupts,
    /// An x86 system vector's: with interrupts, where the kernel has it.
    Vector,
    /// The local timer's or the idle states': with the idle path only.
    IdlePath,
}

/// Each program of the object, the tracepoint it attaches to, and its part.
const PROGRAMS: [(&str, &str, Part); 23] = [
    ("on_waking", "sched_waking", Part::Required),
    ("on_switch", "sched_switch", Part::Required),
    ("on_timer_start", "hrtimer_start", Part::Required),
    ("on_timer_expire", "hrtimer_expire_entry", Part::Required),
    ("on_sys_enter", "sys_enter", Part::Required),
    ("on_sys_exit", "sys_exit", Part::Required),
    ("on_fork", "sched_process_fork", Part::Required),
    ("on_exit", "sched_process_exit", Part::Required),
    ("on_irq_entry", "irq_handler_entry", Part::Interrupts),
    ("on_irq_exit", "irq_handler_exit", Part::Interrupts),
    ("on_softirq_entry", "softirq_entry", Part::Interrupts),
    ("on_softirq_exit", "softirq_exit", Part::Interrupts),
    ("on_reschedule_entry", "reschedule_entry", Part::Vector),
    ("on_reschedule_exit", "reschedule_exit", Part::Vector),
    (
        "on_call_function_entry",
        "call_function_entry",
        Part::Vector,
    ),
    ("on_call_function_exit", "call_function_exit", Part::Vector),
    (
        "on_call_function_single_entry",
        "call_function_single_entry",
        Part::Vector,
    ),
    (
        "on_call_function_single_exit",
        "call_function_single_exit",
        Part::Vector,
    ),
    ("on_irq_work_entry", "irq_work_entry", Part::Vector),
    ("on_irq_work_exit", "irq_work_exit", Part::Vector),
    ("on_local_timer_entry", "local_timer_entry", Part::IdlePath),
    ("on_local_timer_exit", "local_timer_exit", Part::IdlePath),
    ("on_cpu_idle", "cpu_idle", Part::IdlePath),
];

/// A CPU's entry of the `preempt_count` map (`struct preempt_count` in the source).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct PreemptCount {
    /// How far the CPU's preempt count lies from its run queue, bytes.
    from_runqueue: i64,
    /// The count's address, once the CPU's first event found it.
    address: u64,
}

// SAFETY: two plain integers, no padding; any bit pattern is a value.
unsafe impl Pod for PreemptCount {}

/// A program recorded by BPF (see the module's documentation in `bpf/mod.rs`).
pub struct BpfSession {
    /// The object: its maps and loaded programs (behind a lock: pausing detaches them
    /// from a shared reference).
    ebpf: Mutex<Ebpf>,
    /// The attached programs (none while paused): each detaches when dropped.
    links: Mutex<Vec<FdLink>>,
    /// The names of the programs loaded.
    loaded: Vec<&'static str>,
    ring: RingBuf<MapData>,
    interrupts: InterruptsRecorded,
    /// Records no event could be decoded from (counted lost).
    undecoded: u64,
    /// Lost records as of the last drain.
    lost: u64,
}

impl std::fmt::Debug for BpfSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BpfSession")
            .field("loaded", &self.loaded)
            .field("interrupts", &self.interrupts)
            .field("lost", &self.lost)
            .finish()
    }
}

fn io(what: &str, e: impl std::fmt::Display) -> TraceError {
    let text = e.to_string();
    if text.contains("Operation not permitted") || text.contains("Permission denied") {
        TraceError::NotPermitted(format!("{what}: {text} (BPF needs root)"))
    } else {
        TraceError::Io(format!("{what}: {text}"))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl BpfSession {
    /// Whether a BPF recording could start here, without loading it: root, and the
    /// kernel's BTF; else why not.
    pub fn usable() -> Result<(), String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("the BPF recorder needs root".into());
        }
        if !std::path::Path::new(VMLINUX_BTF).exists() {
            return Err(format!("the kernel has no BTF ({VMLINUX_BTF})"));
        }
        Ok(())
    }

    /// Starts recording a running program: the system calls' entries and returns of
    /// its threads `tids` and of every thread they create from now on (kept to them in
    /// the kernel), and the scheduling and timer events of every thread; the machine's
    /// own work in `detail`. `TraceError::NoEvent` where the kernel has no BTF or lacks
    /// a tracepoint the account needs.
    pub fn start_program(tids: &[i32], detail: Detail) -> Result<Self, TraceError> {
        // Read once: this walk finds the tracepoints and per-CPU offsets, aya's parse
        // relocates the programs' field reads.
        let vmlinux = std::fs::read(VMLINUX_BTF)
            .map_err(|e| TraceError::NoEvent(format!("the kernel's BTF ({VMLINUX_BTF}: {e})")))?;
        let kernel = KernelTypes::parse(&vmlinux)
            .ok_or_else(|| TraceError::NoEvent(format!("the kernel's BTF ({VMLINUX_BTF})")))?;
        if let Some((_, tp, _)) = PROGRAMS
            .iter()
            .find(|(_, tp, part)| *part == Part::Required && !kernel.has_tracepoint(tp))
        {
            return Err(TraceError::NoEvent(format!("{tp} (as a BTF tracepoint)")));
        }
        let all = |part: Part| {
            PROGRAMS
                .iter()
                .filter(|(_, _, p)| *p == part)
                .all(|(_, tp, _)| kernel.has_tracepoint(tp))
        };
        let interrupts_here = detail.records_interrupts() && all(Part::Interrupts);
        let idle_path_here = interrupts_here && detail.records_idle_path() && all(Part::IdlePath);
        let wanted: Vec<(&'static str, &'static str)> = PROGRAMS
            .iter()
            .filter(|(_, tp, part)| match part {
                Part::Required => true,
                Part::Interrupts => interrupts_here,
                Part::Vector => interrupts_here && kernel.has_tracepoint(tp),
                Part::IdlePath => idle_path_here,
            })
            .map(|&(name, tp, _)| (name, tp))
            .collect();
        // The preempt count's distance from the run queue in every CPU's per-CPU area.
        let from_runqueue = match (
            kernel.percpu_offset("__preempt_count"),
            kernel.percpu_offset("runqueues"),
        ) {
            (Some(count), Some(rq)) if count != rq => i64::from(count) - i64::from(rq),
            _ => {
                return Err(TraceError::NoEvent(
                    "the per-CPU preempt count and run queue in the kernel's BTF (x86-64's \
                     `__preempt_count`, `runqueues`)"
                        .into(),
                ));
            }
        };
        let btf = Btf::parse(&vmlinux, aya::Endianness::default())
            .map_err(|e| TraceError::NoEvent(format!("the kernel's BTF ({e})")))?;
        // The loader parses the ELF in place: a copy on the heap is aligned as it
        // expects, which `include_bytes!` does not promise.
        let object = OBJECT.to_vec();
        let mut ebpf = EbpfLoader::new()
            .btf(Some(&btf))
            .load(&object)
            .map_err(|e| io("loading the BPF recorder", e))?;
        for &(name, tp) in &wanted {
            let prog: &mut BtfTracePoint = ebpf
                .program_mut(name)
                .ok_or_else(|| TraceError::Io(format!("the BPF recorder has no program {name}")))?
                .try_into()
                .map_err(|e| io(name, e))?;
            prog.load(tp, &btf)
                .map_err(|e| io(&format!("loading the BPF program of {tp}"), e))?;
        }
        {
            let map = ebpf
                .map_mut("preempt_count")
                .ok_or_else(|| TraceError::Io("the BPF recorder has no preempt_count".into()))?;
            let mut counts: PerCpuArray<_, PreemptCount> =
                PerCpuArray::try_from(map).map_err(|e| io("preempt_count", e))?;
            let cpus =
                aya::util::nr_cpus().map_err(|(_, e)| io("counting the possible CPUs", e))?;
            let entry = PreemptCount {
                from_runqueue,
                address: 0,
            };
            let values =
                PerCpuValues::try_from(vec![entry; cpus]).map_err(|e| io("preempt_count", e))?;
            counts
                .set(0, values, 0)
                .map_err(|e| io("setting the preempt count's place", e))?;
        }
        let ring = RingBuf::try_from(
            ebpf.take_map("records")
                .ok_or_else(|| TraceError::Io("the BPF recorder has no ring buffer".into()))?,
        )
        .map_err(|e| io("reading the BPF ring buffer", e))?;
        let mut session = Self {
            ebpf: Mutex::new(ebpf),
            links: Mutex::new(Vec::new()),
            loaded: wanted.iter().map(|&(name, _)| name).collect(),
            ring,
            interrupts: match (interrupts_here, idle_path_here) {
                (false, _) => InterruptsRecorded::None,
                (true, false) => InterruptsRecorded::ButLocalTimer,
                (true, true) => InterruptsRecorded::All,
            },
            undecoded: 0,
            lost: 0,
        };
        session.follow(tids)?;
        session.resume()?;
        Ok(session)
    }

    /// Follows the threads `tids` from now on (replacing the set, the children the
    /// kernel added included).
    pub fn follow(&mut self, tids: &[i32]) -> Result<(), TraceError> {
        let mut ebpf = lock(&self.ebpf);
        let map = ebpf
            .map_mut("followed")
            .ok_or_else(|| TraceError::Io("the BPF recorder has no followed map".into()))?;
        let mut followed: HashMap<_, i32, u8> =
            HashMap::try_from(map).map_err(|e| io("followed", e))?;
        let known: Vec<i32> = followed.keys().filter_map(Result::ok).collect();
        for tid in known {
            // A thread that exited meanwhile is gone already.
            let _ = followed.remove(&tid);
        }
        for &tid in tids.iter().filter(|&&t| t > 0) {
            followed
                .insert(tid, 1, 0)
                .map_err(|e| io("following a thread", e))?;
        }
        Ok(())
    }

    /// Moves every record into `into` (in the ring's order: each CPU's in time order).
    pub fn drain(&mut self, into: &mut Vec<Event>) -> Drained {
        let before = into.len();
        while let Some(item) = self.ring.next() {
            match decode(&item) {
                Some(e) => into.push(e),
                None => self.undecoded += 1,
            }
        }
        let total = self.total_lost();
        let lost = total.saturating_sub(self.lost);
        self.lost = total;
        Drained {
            events: into.len() - before,
            lost,
        }
    }

    /// Stops recording until [`BpfSession::resume`]: the programs are detached.
    pub fn pause(&self) -> Result<(), TraceError> {
        lock(&self.links).clear();
        Ok(())
    }

    /// Records again after [`BpfSession::pause`] (attaches every loaded program).
    pub fn resume(&self) -> Result<(), TraceError> {
        let mut links = lock(&self.links);
        if !links.is_empty() {
            return Ok(());
        }
        let mut ebpf = lock(&self.ebpf);
        for &name in &self.loaded {
            let prog: &mut BtfTracePoint =
                ebpf.program_mut(name)
                    .and_then(|p| p.try_into().ok())
                    .ok_or_else(|| TraceError::Io(format!("the BPF recorder lost {name}")))?;
            let id = prog
                .attach()
                .map_err(|e| io(&format!("attaching {name}"), e))?;
            let link = prog
                .take_link(id)
                .map_err(|e| io(&format!("attaching {name}"), e))?;
            links.push(link.into());
        }
        Ok(())
    }

    /// Which of the guest's interrupts and softirqs are recorded.
    pub fn interrupts(&self) -> InterruptsRecorded {
        self.interrupts
    }

    /// Records lost over the whole session: those the ring had no room for, those no
    /// event could be decoded from, and the events a program missed because it was
    /// running already on that CPU (an interrupt's event while the same program
    /// recorded the task's: the kernel skips the nested run and counts it).
    pub fn lost(&self) -> u64 {
        self.total_lost()
    }

    fn total_lost(&self) -> u64 {
        let ebpf = lock(&self.ebpf);
        let dropped = ebpf
            .map("dropped")
            .and_then(|m| PerCpuArray::<_, u64>::try_from(m).ok())
            .and_then(|a| a.get(&0, 0).ok())
            .map_or(0, |cpus| cpus.iter().sum::<u64>());
        let missed: u64 = self.misses(&ebpf).into_iter().flatten().sum();
        self.undecoded + dropped + missed
    }

    /// Each loaded program's skipped runs, where the kernel says.
    fn misses(&self, ebpf: &Ebpf) -> Vec<Option<u64>> {
        use std::os::fd::{AsFd, AsRawFd};
        self.loaded
            .iter()
            .map(|&name| {
                let fd = ebpf.program(name)?.fd().ok()?;
                recursion_misses(fd.as_fd().as_raw_fd())
            })
            .collect()
    }

    /// Whether the kernel told every loaded program's skipped runs (tests).
    #[cfg(test)]
    pub(crate) fn misses_told(&self) -> bool {
        self.misses(&lock(&self.ebpf)).iter().all(Option::is_some)
    }

    /// Children of followed threads the kernel's map had no room for: their system
    /// calls are missing.
    pub fn late_threads(&self) -> u64 {
        let ebpf = lock(&self.ebpf);
        ebpf.map("late")
            .and_then(|m| Array::<_, u64>::try_from(m).ok())
            .and_then(|a| a.get(&0, 0).ok())
            .unwrap_or(0)
    }
}

/// `struct bpf_prog_info`'s size and where it keeps `recursion_misses` (the uapi's
/// layout, stable since Linux 5.12).
const PROG_INFO_SIZE: usize = 232;
const RECURSION_MISSES_AT: usize = 208;
/// `BPF_OBJ_GET_INFO_BY_FD`.
const BPF_OBJ_GET_INFO_BY_FD: libc::c_long = 15;

/// How many times the kernel skipped the program `fd` because it was running already on
/// the same CPU; `None` where the kernel does not say.
fn recursion_misses(fd: i32) -> Option<u64> {
    let mut info = [0u8; PROG_INFO_SIZE];
    // `union bpf_attr`'s `info` member: the object's fd, the buffer's length, its address.
    #[repr(C)]
    struct InfoByFd {
        fd: u32,
        len: u32,
        info: u64,
    }
    let mut attr = InfoByFd {
        fd: fd as u32,
        len: PROG_INFO_SIZE as u32,
        info: info.as_mut_ptr() as u64,
    };
    // SAFETY: the kernel writes at most `len` bytes into `info`, which outlives the call,
    // and reads `attr`'s size given.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_OBJ_GET_INFO_BY_FD,
            &mut attr as *mut InfoByFd,
            std::mem::size_of::<InfoByFd>() as u32,
        )
    };
    if rc != 0 || (attr.len as usize) < RECURSION_MISSES_AT + 8 {
        return None;
    }
    Some(u64::from_ne_bytes(
        info[RECURSION_MISSES_AT..RECURSION_MISSES_AT + 8]
            .try_into()
            .ok()?,
    ))
}
