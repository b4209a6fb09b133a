//! The kernel's account of each wake: why it was late, from the kernel's own timestamps.
//!
//! The kernel's tracepoints mark every step of a wake: the timer armed with its slack
//! (`timer:hrtimer_start`), its interrupt (`timer:hrtimer_expire_entry`), the wakeup
//! (`sched:sched_waking`), the switch onto the CPU and who held it until then
//! (`sched:sched_switch`), the system call's return (`raw_syscalls:sys_exit`).
//!
//! ```text
//! capture ──► event (the contract: Event, Captured) ──► analysis
//!    ▲                                                     ▲
//!    └──────────── recording (the harness), log ───────────┘
//! ```
//!
//! * capture (the crate `sleeplab-capture`): tracefs instances that record the
//!   tracepoints, their ring pages, the session, a drain thread, which CPUs are
//!   recorded fully; its `event` module: the decoded events, the one type capture hands
//!   analysis;
//! * `analysis`: each wake's split into [`Component`]s (pure: runs on a saved trace)
//!   and a cell's statistics ([`Explanation`]);
//! * `program`: a running program's own waits, found from its system calls
//!   ([`find_waits`]), per call with the traps they fall into ([`CallSummary`], [`Trap`]);
//! * `recording`: the one harness every traced run uses ([`Recording`]), and the
//!   run's status ([`Tracing`]) with its notes worded once; `log`: a cell's wakes
//!   ([`WakeLog`]);
//! * `render`: the terminal table of where the time went ([`components_table`]); `why`:
//!   the sentence that says it per cell ([`CellAccount`]: a traced cell of any result);
//!   `steal`: the guest kernel's steal time beside the host's share ([`steal_note`]).
//!
//! Its modules are private: the list below is the crate's whole interface.

mod analysis;
mod log;
mod program;
mod recording;
mod render;
mod steal;
mod why;

use sleeplab_capture as capture;

// The account of one wake, and a cell's.
pub use analysis::account::{Holder, WakeAccount, Window, account};
pub use analysis::component::{Component, Machine, Parts};
pub use analysis::explanation::{ComponentsNs, Composition, Explanation, WakeRecord};
pub use analysis::timeline::Timeline;

// A running program's own waits.
pub use program::{
    CallSummary, Ending, Found, HeldBy, IrqTime, IrqTotal, KEEP_LOOKBACK_MAX_NS, KEEP_LOOKBACK_NS,
    Keep, Kept, ProgramWait, SLACK_DEFAULT_NS, Timeout, Trap, WaitCall, accounts, find_waits,
    irq_name, keep, keep_chosen, kept_waits, name_holder_stacks, summarise, traps,
};

// Recording: the harness, its status, a cell's wakes; what capture decides for it.
pub use capture::{
    Detail, Events, InterruptsRecorded, Placement, SavedTrace, SavedTraceError, SavedWindow,
    Symbols, SyscallsBy, TraceError, available, placement, this_tid,
};
pub use log::{Before, WakeLog};
pub use recording::{Follow, Recording, Recordings, Tracing, unavailable};

// What is said and drawn of it.
pub use render::{CELL_KEYS, cell_key, components_table, traced_counts};
pub use steal::{steal_note, steal_sentence};
pub use why::{CellAccount, TracedCells, cell_sentence, why_late};

/// Splits every window of `windows` on `timeline`, and summarises them.
pub fn explain_windows(timeline: &Timeline, windows: &[Window], lost_events: u64) -> Explanation {
    let accounts: Vec<WakeAccount> = windows.iter().map(|w| account(timeline, w)).collect();
    Explanation::of(&accounts, lost_events, false)
}
