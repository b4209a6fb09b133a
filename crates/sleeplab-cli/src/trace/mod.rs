//! Why a wake was late, from the kernel's own timestamps.
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
//! * [`capture`] (the crate `sleeplab-capture`): tracefs instances that record the
//!   tracepoints, their ring pages, the session, a drain thread, which CPUs are
//!   recorded fully; its [`event`]: the decoded events, the one type capture hands
//!   analysis;
//! * [`analysis`]: each wake's split into [`Component`]s (pure: runs on a saved trace)
//!   and a cell's statistics ([`Explanation`]);
//! * [`recording`]: the one harness every traced run uses ([`Recording`]), and the
//!   run's status ([`Tracing`]) with its notes worded once; [`log`]: a cell's wakes;
//! * [`render`]: the terminal table of where the time went; [`why`]: the sentence that
//!   says it per cell ([`why::CellAccount`]: a traced cell of any result); [`steal`]: the
//!   guest kernel's steal time beside the host's share.

pub mod analysis;
pub mod log;
pub mod recording;
pub mod render;
pub mod steal;
pub mod why;

pub use sleeplab_capture as capture;
pub use sleeplab_capture::event;

pub use analysis::account::{Holder, WakeAccount, Window, account};
pub use analysis::component::{Component, Machine, Parts};
pub use analysis::explanation::{ComponentsNs, Explanation, WakeRecord};
pub use analysis::timeline::Timeline;
pub use capture::coverage::{Placement, placement};
pub use capture::{TraceError, available, this_tid};
pub use event::Events;
pub use log::{Before, WakeLog};
pub use recording::{Follow, Recording, Recordings, Tracing};

/// Splits every window of `windows` on `timeline`, and summarises them.
pub fn explain_windows(timeline: &Timeline, windows: &[Window], lost_events: u64) -> Explanation {
    let accounts: Vec<WakeAccount> = windows.iter().map(|w| account(timeline, w)).collect();
    Explanation::of(&accounts, lost_events, false)
}
