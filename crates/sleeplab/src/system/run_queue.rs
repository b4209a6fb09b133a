//! Time spent runnable but not running: the second field of
//! `/proc/thread-self/schedstat` (on-CPU ns, run-queue ns, timeslices), which tells a
//! wakeup that the scheduler delayed from one that a timer or the host delayed.

use std::cell::RefCell;
use std::fs::File;
use std::os::unix::fs::FileExt;

thread_local! {
    /// This thread's schedstat file, opened on first use (`thread-self` resolves to the
    /// opening thread, so each thread opens its own); `None` where it cannot be read.
    static SCHEDSTAT: RefCell<Option<Option<File>>> = const { RefCell::new(None) };
}

/// The calling thread's total time spent waiting on a run queue, ns; `None` where the
/// kernel does not report it (no `CONFIG_SCHED_INFO`, or `/proc` not mounted). One
/// `pread` of an open file, a few µs.
pub fn run_queue_ns() -> Option<u64> {
    SCHEDSTAT.with(|cell| {
        let mut slot = cell.borrow_mut();
        let file = slot.get_or_insert_with(|| File::open("/proc/thread-self/schedstat").ok());
        let mut buf = [0u8; 96];
        let n = file.as_ref()?.read_at(&mut buf, 0).ok()?;
        parse_run_delay(std::str::from_utf8(&buf[..n]).ok()?)
    })
}

/// The second number of a schedstat line, ns.
pub fn parse_run_delay(line: &str) -> Option<u64> {
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_field_is_the_run_queue_time_and_it_never_decreases() {
        assert_eq!(parse_run_delay("123 456 7\n"), Some(456));
        assert_eq!(parse_run_delay("123"), None);
        assert_eq!(parse_run_delay("a b c"), None);
        if let Some(a) = run_queue_ns() {
            let b = run_queue_ns().expect("readable once, readable again");
            assert!(b >= a);
        }
    }
}
