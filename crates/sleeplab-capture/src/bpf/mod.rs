//! A followed program recorded by BPF programs instead of tracefs instances: the same
//! tracepoints, attached as BTF-typed raw tracepoints (`bpf/recorder.bpf.c`, built with
//! clang when the crate's `bpf` feature is on), their records in one BPF ring buffer,
//! decoded into the same [`Event`]s (`record.rs`). Loaded by aya, in Rust, against the
//! kernel's BTF (`btf.rs` reads what the loader does not say).
//!
//! Why a second recorder: each event costs the traced task less. On the 2-core VM,
//! ftrace's five tracepoints a wake's account needs added 1.37–1.75 µs to a timed wait's
//! median wake, the same five under BPF 0.70–1.95 µs less (docs/BENCHMARKS.md, "The
//! floor under two recorders"). Measured whole, beside everything else a program's
//! session records, it cost each wake what ftrace's session costs; and on that VM it
//! recorded none of a CPU's events while some tasks ran there (the VM agent's threads),
//! which ftrace recorded, with nothing counted lost (the counts are in the message of
//! commit 424f5e1). So it is `explain --pid --bpf`, not the default. What else differs:
//! * The program's system calls are kept to its threads in the kernel: a map of their
//!   ids, to which a thread a followed thread creates is added as it is born (so its
//!   first call is kept, whatever the machine forks meanwhile), and from which a thread
//!   that exits is removed. No filter to rewrite, no window of pids.
//! * One ring buffer for every CPU, drained by the caller on a period, never woken per
//!   record; a record that finds it full is counted lost, per CPU, in the kernel, and so
//!   is a program run the kernel skipped (an interrupt's event while the same program
//!   ran on that CPU).
//! * An event's context (ftrace's `common_flags`) is read from the CPU's preempt count,
//!   found through its run queue (see `context_flags` in the source).
//! * No kernel stacks (`explain --stacks` is ftrace's).
//! * It needs the kernel's BTF (`/sys/kernel/btf/vmlinux`), root, and a build that had
//!   clang; it needs no tracefs.

#[cfg(any(sleeplab_bpf, test))]
mod btf;
#[cfg(any(sleeplab_bpf, test))]
mod record;

#[cfg(sleeplab_bpf)]
mod session;
#[cfg(sleeplab_bpf)]
pub use session::BpfSession;

#[cfg(not(sleeplab_bpf))]
mod absent;
#[cfg(not(sleeplab_bpf))]
pub use absent::BpfSession;

#[cfg(all(test, sleeplab_bpf))]
mod tests;
