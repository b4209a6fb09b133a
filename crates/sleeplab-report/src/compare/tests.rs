//! The matched table both views are drawn from, and the runs section they share.
use super::*;
use crate::html::Block;
use crate::testdata::host;
use sleeplab_stats::Cell;

fn named(rs: &[ResultFile]) -> Vec<(String, &ResultFile)> {
    rs.iter()
        .map(|r| (format!("{}.json", r.fingerprint.hostname), r))
        .collect()
}

#[test]
fn rows_are_the_keys_two_results_hold_in_order_of_first_appearance() {
    let rs = [
        host("h1", &[("poll", 1.0), ("nanosleep", 2.0), ("spin", 3.0)]),
        host("h2", &[("timerfd", 4.0), ("nanosleep", 5.0)]),
        host("h3", &[("timerfd", 6.0), ("poll", 7.0)]),
    ];
    let m = Matched::of(&named(&rs)).unwrap();
    // spin is held by h1 alone; timerfd first appears in h2, after h1's keys.
    let keys: Vec<&str> = m.rows.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "poll 1 µs load 0",
            "nanosleep 1 µs load 0",
            "timerfd 1 µs load 0"
        ]
    );
    let medians = |i: usize| -> Vec<Option<f64>> {
        m.rows[i]
            .by_result
            .iter()
            .map(|x| x.as_ref().map(|x| x.point.median_ns))
            .collect()
    };
    assert_eq!(medians(0), [Some(1.0), None, Some(7.0)]);
    assert_eq!(medians(2), [None, Some(4.0), Some(6.0)]);
    assert_eq!(m.runs().len(), 3);
}

/// The one behaviour the two former engines disagreed on: a key a result holds twice.
/// The pair matched every copy in a (one row each), the fleet the first; now both
/// views match the first, once.
#[test]
fn a_key_held_twice_is_matched_once_by_its_first() {
    let a = host("a", &[("nanosleep", 60_000.0), ("nanosleep", 70_000.0)]);
    let b = host("b", &[("nanosleep", 12_000.0)]);
    let rs = [a, b];
    let m = Matched::of(&named(&rs)).unwrap();
    assert_eq!(m.rows.len(), 1);
    assert_eq!(
        m.rows[0].by_result[0].as_ref().map(|x| x.point.median_ns),
        Some(60_000.0)
    );
    let p = Pair::of(&m).unwrap();
    assert_eq!(p.rows.len(), 1);
    assert_eq!(Fleet::of(&m).cells.len(), 1);
}

#[test]
fn a_pair_is_two_results_and_the_fleet_any_number() {
    let rs = [
        host("h1", &[("nanosleep", 1.0)]),
        host("h2", &[("nanosleep", 2.0)]),
        host("h3", &[("nanosleep", 3.0)]),
    ];
    let three = Matched::of(&named(&rs)).unwrap();
    assert!(Pair::of(&three).is_none());
    assert_eq!(Fleet::of(&three).machines.len(), 3);
    let two = Matched::of(&named(&rs[..2])).unwrap();
    assert_eq!(Pair::of(&two).unwrap().rows.len(), 1);
    assert_eq!(Fleet::of(&two).machines.len(), 2);
}

#[test]
fn both_views_share_the_runs_section_and_mark_what_differs() {
    let mut rs = [
        host("h1", &[("nanosleep", 1.0)]),
        host("h2", &[("nanosleep", 2.0)]),
        host("h3", &[("nanosleep", 3.0)]),
    ];
    rs[2].fingerprint.kernel_release = "7.0".into();
    let runs_of = |page: crate::html::Page| {
        let s = page
            .sections
            .into_iter()
            .find(|s| s.id == "runs")
            .expect("a runs section");
        let Some(Block::Table(t)) = s.blocks.into_iter().next() else {
            panic!("the runs section holds a table");
        };
        t
    };
    let m = Matched::of(&named(&rs)).unwrap();
    let t = runs_of(Fleet::of(&m).page());
    assert_eq!(t.header, ["", "h1.json", "h2.json", "h3.json"]);
    let row = |t: &sleeplab_stats::Table, k: &str| {
        t.rows
            .iter()
            .find(|r| r[0] == Cell::Text(k.into()))
            .unwrap_or_else(|| panic!("no {k} row"))
            .clone()
    };
    // Hosts and kernels differ: marked in every column; the CPU is the same: plain.
    assert!(
        row(&t, "host")[1..]
            .iter()
            .all(|c| matches!(c, Cell::Warn(_)))
    );
    assert!(
        row(&t, "kernel")[1..]
            .iter()
            .all(|c| matches!(c, Cell::Warn(_)))
    );
    assert!(
        row(&t, "CPU")[1..]
            .iter()
            .all(|c| matches!(c, Cell::Text(_)))
    );
    // The file differs by nature and is never marked.
    assert_eq!(row(&t, "file")[3], Cell::Text("h3.json".into()));
    let two = Matched::of(&named(&rs[..2])).unwrap();
    let t = runs_of(Pair::of(&two).unwrap().page());
    assert_eq!(t.header, ["", "a", "b"]);
    assert!(
        row(&t, "kernel")[1..]
            .iter()
            .all(|c| matches!(c, Cell::Text(_)))
    );
}
