//! Verdicts, changes and sentences on synthetic arms whose rounds vary.

use super::sentence::best_setting;
use super::*;
use crate::tuning::catalogue::{Scope, SettingInfo};
use rand::{RngExt, SeedableRng};
use sleeplab_stats::{Ci, Unit, UnitIntervals};

/// A cell of `rounds` rounds of `per` waits around `center` ns, spread `spread`.
fn cell(rng: &mut rand_pcg::Pcg64, rounds: usize, per: usize, center: f64, spread: f64) -> ArmCell {
    let groups: Vec<Vec<u64>> = (0..rounds)
        .map(|_| {
            (0..per)
                .map(|_| (center + spread * rng.random::<f64>()).max(0.0) as u64)
                .collect()
        })
        .collect();
    let spec = CellSpec {
        mechanism: "clock-nanosleep-abs".into(),
        requested_ns: 1_000_000,
    };
    ArmCell::of_rounds(&spec, &groups)
}

fn arm(name: &str, cells: Vec<ArmCell>, rounds: u64) -> Arm {
    let info = SettingInfo {
        name: name.into(),
        scope: Scope::Process,
        what: "w".into(),
        how: "h".into(),
    };
    Arm {
        cpus: Some(0.5),
        cpus_ci: Some(Ci(Some(0.4), Some(0.6))),
        round_cpus: vec![0.5; rounds as usize],
        ..Arm::new(info, cells, rounds)
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
        let paired = a.p99_change_paired_rounds.is_some();
        assert_eq!(
            paired,
            per >= 100,
            "paired where every round resolves the p99"
        );
        if let (Some(x), Some(y), false) = (a.p99_ns, b.p99_ns, paired) {
            assert_eq!(a.p99_change_ns, Some(x - y));
        }
        if paired {
            let diffs: Vec<f64> = a
                .round_p99_ns
                .iter()
                .zip(&b.round_p99_ns)
                .map(|(x, y)| x.unwrap() - y.unwrap())
                .collect();
            let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
            assert!((a.p99_change_ns.unwrap() - mean).abs() < 1e-6);
        }
        let ci = |c: &ArmCell| c.units.as_ref().and_then(|u| u.p99_ci_ns);
        let change = a.p99_change_ci_ns;
        let zero = Some(Ci::exact(0.0));
        match (v, paired) {
            (Verdict::Helps, true) => assert!(sleeplab_stats::ci_below(change, zero)),
            (Verdict::Hurts, true) => assert!(sleeplab_stats::ci_below(zero, change)),
            (Verdict::Helps, false) => assert!(sleeplab_stats::ci_below(ci(a), ci(b))),
            (Verdict::Hurts, false) => assert!(sleeplab_stats::ci_below(ci(b), ci(a))),
            _ => {}
        }
        if (rounds as u64) < sleeplab_stats::MIN_UNITS {
            assert_eq!(v, Verdict::Undecided, "too few rounds decide nothing");
        }
        for s in sentence::sentences(&d) {
            s.check().unwrap_or_else(|e| panic!("{}: {e}", s.text));
        }
        assert_eq!(d.arms[1].cpus_change, Some(0.0));
        assert_eq!(d.arms[1].cpus_change_paired_rounds, Some(rounds as u64));
    }
}

/// Rounds that move both arms together by far more than the setting's shift: each
/// arm's own interval over rounds cannot separate them, the paired change does.
#[test]
fn pairing_over_rounds_separates_what_the_arms_intervals_cannot() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
    let (mut base, mut fast) = (Vec::new(), Vec::new());
    for r in 0..10 {
        let center = 20_000.0 * (1.0 + r as f64);
        base.push(cell(&mut rng, 1, 400, center, 2_000.0));
        fast.push(cell(&mut rng, 1, 400, center - 3_000.0, 2_000.0));
    }
    let merge = |cells: Vec<ArmCell>| {
        let mut c = cells[0].clone();
        c.round_p50_ns = cells.iter().map(|x| x.round_p50_ns[0]).collect();
        c.round_p99_ns = cells.iter().map(|x| x.round_p99_ns[0]).collect();
        c.p99_ns = Some(c.round_p99_ns.iter().flatten().sum::<f64>() / 10.0);
        c.p50_ns = Some(c.round_p50_ns.iter().flatten().sum::<f64>() / 10.0);
        c.units = Some(UnitIntervals {
            unit: Unit::Round,
            units: 10,
            median_ci_ns: Some(Ci(Some(20_000.0), Some(200_000.0))),
            p90_ci_ns: None,
            p99_ci_ns: Some(Ci(Some(20_000.0), Some(200_000.0))),
            p999_ci_ns: None,
            mean_ci_ns: None,
        });
        c
    };
    let mut d = data(vec![
        arm(AS_IS, vec![merge(base)], 10),
        arm("fast", vec![merge(fast)], 10),
    ]);
    judge(&mut d);
    let c = &d.arms[1].cells[0];
    assert_eq!(c.p99_change_paired_rounds, Some(10));
    assert_eq!(c.verdict, Some(Verdict::Helps), "{c:?}");
    let s = sentence::sentences(&d);
    assert!(
        s[0].text.starts_with("fast lowers the p99"),
        "{}",
        s[0].text
    );
    assert!(s[0].text.contains("over 10 paired rounds"), "{}", s[0].text);
    s[0].check().unwrap();
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

/// The table shows the polling part of an arm's CPUs, and the host's settings apart from
/// this machine's boot-time ones.
#[test]
fn the_table_shows_polling_and_the_hosts_settings_apart() {
    use crate::tuning::catalogue::{BootSetting, host_halt_polling};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
    let mut polled = arm("cpu-dma-latency", vec![cell(&mut rng, 8, 100, 9e3, 1e3)], 8);
    polled.poll_cpus = Some(0.97);
    let base = arm(AS_IS, vec![cell(&mut rng, 8, 100, 9e3, 1e3)], 8);
    let mut d = data(vec![base, polled]);
    d.boot = vec![
        BootSetting {
            name: "isolcpus".into(),
            of_host: false,
            what: "w".into(),
            now: "not set".into(),
            how: "h".into(),
        },
        host_halt_polling(Some("kvm"), Some(200_000)),
    ];
    let text = render(&d);
    assert!(text.contains("(polling 0.97)"), "{text}");
    assert_eq!(text.matches("(polling").count(), 1, "{text}");
    let boot = text.find("boot-time settings").unwrap();
    let host = text.find("the host's settings").unwrap();
    let isolcpus = text.find("isolcpus").unwrap();
    let halt = text.find("host halt polling").unwrap();
    assert!(boot < isolcpus && isolcpus < host && host < halt, "{text}");
}

/// A round's p99 of few waits is stated with its n and where it sits: of 150 waits, about
/// the round's 3rd largest; a cell whose rounds cannot resolve a p99, or hold plenty of
/// waits, is not named.
#[test]
fn a_rounds_p99_of_few_waits_is_said_to_be_near_its_largest() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    let mut few = cell(&mut rng, 8, 150, 9e3, 1e3);
    few.mechanism = "timerfd".into();
    let many = cell(&mut rng, 8, 1500, 9e3, 1e3);
    let short = cell(&mut rng, 8, 20, 9e3, 1e3);
    let d = data(vec![arm(AS_IS, vec![few, many, short], 8)]);
    let note = render::round_p99_note(&d).unwrap();
    assert_eq!(
        note,
        "the paired p99 changes rest on each round's own p99, of few waits: timerfd 1.000 ms: 150 waits a round, its p99 about the round's 3rd largest"
    );
    assert!(render(&d).contains(&note));
    let d = data(vec![arm(AS_IS, vec![cell(&mut rng, 8, 1500, 9e3, 1e3)], 8)]);
    assert_eq!(render::round_p99_note(&d), None);
}
