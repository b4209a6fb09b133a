//! Verdicts, changes and sentences on synthetic arms whose rounds vary.

use super::*;
use crate::tuning::catalogue::Scope;
use rand::{RngExt, SeedableRng};

/// A cell of `rounds` rounds of `per` waits around `center` ns, spread `spread`.
fn cell(rng: &mut rand_pcg::Pcg64, rounds: usize, per: usize, center: f64, spread: f64) -> ArmCell {
    let groups: Vec<Vec<u64>> = (0..rounds)
        .map(|_| {
            (0..per)
                .map(|_| (center + spread * rng.random::<f64>()).max(0.0) as u64)
                .collect()
        })
        .collect();
    let mut all: Vec<u64> = groups.iter().flatten().copied().collect();
    all.sort_unstable();
    ArmCell {
        mechanism: "clock-nanosleep-abs".into(),
        requested_ns: 1_000_000,
        waits: all.len() as u64,
        p50_ns: crate::stats::tail_quantile(&all, 0.5),
        p99_ns: crate::stats::tail_quantile(&all, 0.99),
        units: Some(UnitIntervals::of_ns(Unit::Round, &groups)),
        p50_change_ns: None,
        p50_change_ci_ns: None,
        p99_change_ns: None,
        p99_change_ci_ns: None,
        verdict: None,
    }
}

fn arm(name: &str, cells: Vec<ArmCell>, rounds: u64) -> Arm {
    Arm {
        setting: SettingInfo {
            name: name.into(),
            scope: Scope::Process,
            what: "w".into(),
            how: "h".into(),
        },
        error: None,
        rounds,
        cpus: Some(0.5),
        cpus_ci: Some(Ci(Some(0.4), Some(0.6))),
        cpus_change: None,
        cpus_change_ci: None,
        cells,
    }
}

fn data(arms: Vec<Arm>) -> TuneData {
    TuneData {
        cpu: 0,
        rounds: 8,
        root: false,
        arms,
        unavailable: vec![],
        boot: vec![],
    }
}

/// Over random arms, every verdict agrees with the intervals, every change's sign with
/// the values, and every sentence's claims check.
#[test]
fn verdicts_and_sentences_agree_with_their_numbers() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
    for _ in 0..200 {
        let rounds = rng.random_range(3..12usize);
        let per = rng.random_range(20..300usize);
        let base_center = rng.random_range(5_000.0..50_000.0);
        let base = cell(&mut rng, rounds, per, base_center, base_center);
        let center = base_center * rng.random_range(0.2..2.0);
        let spread = center * rng.random_range(0.1..2.0);
        let other = cell(&mut rng, rounds, per, center, spread);
        let mut d = data(vec![
            arm(AS_IS, vec![base], rounds as u64),
            arm("x", vec![other], rounds as u64),
        ]);
        judge(&mut d);
        let (b, a) = (&d.arms[0].cells[0], &d.arms[1].cells[0]);
        let v = a.verdict.expect("judged");
        if let (Some(x), Some(y)) = (a.p99_ns, b.p99_ns) {
            assert_eq!(a.p99_change_ns, Some(x - y));
        }
        let ci = |c: &ArmCell| c.units.as_ref().and_then(|u| u.p99_ci_ns);
        match v {
            Verdict::Helps => assert!(crate::stats::ci_below(ci(a), ci(b))),
            Verdict::Hurts => assert!(crate::stats::ci_below(ci(b), ci(a))),
            _ => {}
        }
        if (rounds as u64) < crate::stats::MIN_UNITS {
            assert_eq!(v, Verdict::Undecided, "too few rounds decide nothing");
        }
        for s in sentence::sentences(&d) {
            s.check().unwrap_or_else(|e| panic!("{}: {e}", s.text));
        }
        assert_eq!(d.arms[1].cpus_change, Some(0.0));
    }
}

#[test]
fn the_best_setting_helps_and_hurts_nothing() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
    let base = cell(&mut rng, 10, 200, 40_000.0, 10_000.0);
    let fast = cell(&mut rng, 10, 200, 4_000.0, 1_000.0);
    let slow = cell(&mut rng, 10, 200, 400_000.0, 10_000.0);
    let mut d = data(vec![
        arm(AS_IS, vec![base], 10),
        arm("slow", vec![slow], 10),
        arm("fast", vec![fast], 10),
    ]);
    judge(&mut d);
    assert_eq!(d.arms[1].cells[0].verdict, Some(Verdict::Hurts));
    assert_eq!(d.arms[2].cells[0].verdict, Some(Verdict::Helps));
    let (best, cells) = best_setting(&d).unwrap();
    assert_eq!((best.setting.name.as_str(), cells.len()), ("fast", 1));
    assert!(render(&d).contains("helps"));
    let text = String::from_utf8(csv(&d).unwrap()).unwrap();
    assert_eq!(
        text.lines().count(),
        4,
        "a header and a row per arm and wait"
    );
}

#[test]
fn waits_follow_the_budget_within_bounds() {
    let c = TuneConfig {
        cells: default_cells(),
        settings: None,
        system: false,
        rounds: 8,
        budget_ns: BUDGET_NS,
        cpu: 0,
    };
    assert_eq!(c.waits(1_000_000), 150);
    assert_eq!(c.waits(100), MAX_WAITS);
    assert_eq!(c.waits(16_666_667), 8);
    assert!(
        c.estimate_ns(17) < 180_000_000_000,
        "a full run fits in 3 minutes"
    );
    let q = TuneConfig {
        budget_ns: QUICK_BUDGET_NS,
        ..c
    };
    assert!(
        q.estimate_ns(17) < 40_000_000_000,
        "a quick run fits in 40 s"
    );
}
