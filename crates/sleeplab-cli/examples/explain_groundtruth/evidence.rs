//! The events around a failing wake, one a line, for reading why the account split it
//! as it did (`--events`).

use sleeplab_capture::{Event, Kind};

/// One event in a line: its time from the wake's deadline, CPU, current task, and what
/// happened (times of timers also from the deadline).
pub fn line(e: &Event, deadline_ns: u64) -> String {
    let rel = |t: i64| format!("{:+.2} µs", (t - deadline_ns as i64) as f64 / 1e3);
    let what = match e.kind {
        Kind::TimerStart {
            timer,
            soft_ns,
            hard_ns,
        } => format!(
            "hrtimer_start {timer:#x} soft {} hard {}",
            rel(soft_ns),
            rel(hard_ns)
        ),
        Kind::TimerExpire { timer, now_ns } => {
            format!("hrtimer_expire_entry {timer:#x} now {}", rel(now_ns))
        }
        Kind::Waking { pid, target_cpu } => format!("sched_waking {pid} → CPU {target_cpu}"),
        Kind::Switch {
            prev_pid,
            prev_state,
            prev_comm,
            next_pid,
            next_comm,
        } => format!(
            "sched_switch {}:{prev_pid} (state {prev_state:#x}) → {}:{next_pid}",
            prev_comm.as_string(),
            next_comm.as_string()
        ),
        Kind::SysExit { id, .. } => format!("sys_exit {id}"),
        Kind::SysEnter { id, .. } => format!("sys_enter {id}"),
        Kind::IrqEntry { what, number } => format!("{what:?} entry {number}"),
        Kind::IrqExit { what, number } => format!("{what:?} exit {number}"),
        Kind::IdleEnter { state } => format!("idle state {state} entry"),
        Kind::IdleExit => "idle state exit".into(),
    };
    format!(
        "{} cpu{} pid {}{} {what}",
        rel(e.time_ns as i64),
        e.cpu,
        e.pid,
        if e.in_hardirq() { " [irq]" } else { "" }
    )
}
