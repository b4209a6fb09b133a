//! The window, the filter text and the lineage, on hand-made forks and exits.
use super::*;

/// Whether the filter `text` (as [`filter_text`] writes it) admits `pid`: a reading of
/// its grammar, independent of the code that wrote it.
fn admits(text: &str, pid: i32) -> bool {
    text.split(" || ").any(|part| {
        let part = part.trim_matches(|c| c == '(' || c == ')');
        part.split(" && ").all(|cond| {
            let mut words = cond.split_whitespace();
            let (_, op, value) = (words.next(), words.next(), words.next());
            let v: i32 = value.unwrap().parse().unwrap();
            match op.unwrap() {
                "==" => pid == v,
                ">=" => pid >= v,
                "<=" => pid <= v,
                ">" => pid > v,
                other => panic!("operator {other} in {text}"),
            }
        })
    })
}

fn fork_format() -> Format {
    Format::parse(
        "ID: 366\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
         \tfield:pid_t parent_pid;\toffset:12;\tsize:4;\tsigned:1;\n\
         \tfield:pid_t child_pid;\toffset:20;\tsize:4;\tsigned:1;\n",
    )
    .unwrap()
}

fn exit_format() -> Format {
    Format::parse(
        "ID: 369\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
         \tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n",
    )
    .unwrap()
}

fn fork(parent: i32, child: i32) -> Vec<u8> {
    let mut raw = vec![0u8; 24];
    raw[..2].copy_from_slice(&366u16.to_le_bytes());
    raw[12..16].copy_from_slice(&parent.to_ne_bytes());
    raw[20..24].copy_from_slice(&child.to_ne_bytes());
    raw
}

fn exit(pid: i32) -> Vec<u8> {
    let mut raw = vec![0u8; 32];
    raw[..2].copy_from_slice(&369u16.to_le_bytes());
    raw[24..28].copy_from_slice(&pid.to_ne_bytes());
    raw
}

fn lineage(tids: &[i32], newest: i32) -> Lineage {
    let d = LineageDecoders::from_formats(&fork_format(), &exit_format()).unwrap();
    Lineage::new(d, tids, newest, 100, 32_768)
}

#[test]
fn the_window_holds_the_next_pids_and_wraps_to_the_reserved_ones() {
    let w = Window::after(1_000, 100, 32_768);
    assert_eq!(
        (w.after, w.through, w.low_through),
        (1_000, 1_000 + 100 + HEADROOM, None)
    );
    assert!(!w.holds(1_000) && w.holds(1_001) && w.holds(w.through) && !w.holds(w.through + 1));
    let w = Window::after(32_000, 100, 32_768);
    assert_eq!(w.through, 32_767);
    assert_eq!(w.low_through, Some(RESERVED_PIDS + 100 + HEADROOM));
    assert!(w.holds(32_767) && w.holds(RESERVED_PIDS) && w.holds(RESERVED_PIDS + 100 + HEADROOM));
    assert!(!w.holds(RESERVED_PIDS - 1) && !w.holds(31_999) && !w.holds(5_000));
}

#[test]
fn the_filter_admits_the_known_threads_and_the_window_only() {
    let known: BTreeSet<i32> = [10, 11, 12, 20, 1_500].into_iter().collect();
    let w = Window::after(1_000, 100, 32_768);
    let text = filter_text(&known, w);
    assert_eq!(
        text,
        format!(
            "(common_pid >= 10 && common_pid <= 12) || common_pid == 20 || \
             (common_pid > 1000 && common_pid <= {})",
            w.through
        )
    );
    for pid in 1..5_000 {
        assert_eq!(
            admits(&text, pid),
            known.contains(&pid) || w.holds(pid),
            "{pid}"
        );
    }
    let wrapped = filter_text(&known, Window::after(32_000, 100, 32_768));
    assert!(admits(&wrapped, 32_767) && admits(&wrapped, RESERVED_PIDS));
    assert!(!admits(&wrapped, RESERVED_PIDS - 1) && admits(&wrapped, 20));
}

#[test]
fn too_many_threads_merge_into_ranges_that_still_admit_each() {
    // 600 threads, every seventh pid: named one by one the text would be ~10 KiB.
    let known: BTreeSet<i32> = (0..600).map(|i| 5_000 + 7 * i).collect();
    let w = Window::after(20_000, 100, 32_768);
    let text = filter_text(&known, w);
    assert!(text.len() <= MAX_FILTER, "{}", text.len());
    assert!(known.iter().all(|&p| admits(&text, p)));
    assert!(!admits(&text, 4_999) && !admits(&text, 1));
}

#[test]
fn children_of_known_threads_join_in_time_order_and_exits_leave() {
    let mut l = lineage(&[100], 1_000);
    // Drained out of order (CPU after CPU): the grandchild's fork comes first.
    assert!(l.take(&fork(1_001, 1_002), 30));
    assert!(l.take(&fork(100, 1_001), 20));
    assert!(l.take(&fork(555, 1_003), 40));
    assert!(l.take(&exit(100), 50));
    assert!(
        !l.take(&[0x05, 0x00, 0, 0], 60),
        "another event is left alone"
    );
    let kept = l.apply();
    assert_eq!(kept, [100, 1_001, 1_002].into_iter().collect());
    assert_eq!(l.newest(), 1_003);
    assert_eq!(l.late(), 0, "all born inside the window");
    // The exited thread is named no more; its calls before the exit were kept.
    let text = l.filter(1_003, 100).unwrap();
    assert!(!admits(&text, 100) && admits(&text, 1_001) && admits(&text, 1_002));
}

#[test]
fn a_child_born_outside_the_filter_is_counted_late() {
    let mut l = lineage(&[100], 1_000);
    l.initial_filter();
    // Past the window: the machine made more than the headroom's tasks in one drain.
    let far = 1_000 + 100 + HEADROOM + 5;
    l.take(&fork(100, far), 10);
    let kept = l.apply();
    assert!(kept.contains(&far));
    assert_eq!(l.late(), 1);
}

#[test]
fn the_filter_is_rewritten_when_the_program_grows_or_the_window_moves() {
    let mut l = lineage(&[100], 1_000);
    let first = l.initial_filter();
    assert!(admits(&first, 100) && admits(&first, 1_001));
    assert_eq!(
        l.filter(1_000, 100),
        None,
        "no pid handed out, no thread born"
    );
    let moved = l.filter(1_010, 100).unwrap();
    assert!(!admits(&moved, 1_010) && admits(&moved, 1_011) && admits(&moved, 100));
    l.take(&fork(100, 1_011), 5);
    l.apply();
    let grown = l.filter(1_010, 100).unwrap();
    assert!(admits(&grown, 1_011));
    assert_eq!(l.filter(1_010, 100), None);
    // Past the child, the window leaves it: it is named.
    let past = l.filter(1_500, 100).unwrap();
    assert!(admits(&past, 1_011) && !admits(&past, 1_012) && admits(&past, 1_501));
    // The pids wrapped: the floor is low again, and the window restarts there.
    let wrapped = l.filter(400, 100).unwrap();
    assert!(admits(&wrapped, 401) && !admits(&wrapped, 30_000) && admits(&wrapped, 1_011));
}

/// After each drain the window moves past the newest pid the drain before saw: a child
/// born since that drain, but before this one's, is still inside it.
#[test]
fn each_drains_filter_starts_past_the_drain_before() {
    let mut l = lineage(&[100], 1_000);
    l.initial_filter();
    l.take(&fork(100, 1_001), 10);
    l.take(&fork(555, 1_020), 20);
    l.apply();
    // First drain: the floor is the start's newest pid; the new thread is named.
    let first = l.next_filter(100).unwrap();
    assert!(admits(&first, 1_001) && admits(&first, 1_005));
    l.take(&fork(556, 1_030), 30);
    l.apply();
    // Second: past 1_020 (the first drain's newest), not yet past 1_030.
    let second = l.next_filter(100).unwrap();
    assert!(!admits(&second, 1_020) && admits(&second, 1_021) && admits(&second, 1_031));
    assert!(admits(&second, 1_001), "a known thread stays named");
    // Third, nothing new: past 1_030.
    let third = l.next_filter(100).unwrap();
    assert!(!admits(&third, 1_030) && admits(&third, 1_031));
    assert_eq!(l.next_filter(100), None, "nothing moved since");
}
