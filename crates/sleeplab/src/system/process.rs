//! A process's identity over time: its pid with its start time, which a reused pid does
//! not share (what a file left by a process is named for, to tell whether its owner
//! still runs).

/// When process `pid` started, in clock ticks since boot (field 22 of
/// `/proc/<pid>/stat`); `None` where it does not run.
pub fn start_ticks(pid: u32) -> Option<u64> {
    parse_start_ticks(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Field 22 of a `/proc/<pid>/stat` line. The command name may hold spaces and
/// parentheses, so fields are counted after the last `)`.
fn parse_start_ticks(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_is_field_22_after_the_name() {
        let stat = "42 (a) b (c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 777 0 0";
        assert_eq!(parse_start_ticks(stat), Some(777));
        assert_eq!(parse_start_ticks("42 (x) S 1"), None);
    }

    #[test]
    fn this_process_has_a_start_and_a_gone_one_none() {
        assert!(start_ticks(std::process::id()).is_some());
        assert_eq!(start_ticks(u32::MAX - 1), None);
    }
}
