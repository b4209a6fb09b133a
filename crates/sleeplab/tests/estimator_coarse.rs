//! Coarse mode of the margin estimator (rule 7 of `MarginEstimator`): on a scheduler
//! whose *ordinary* wakeups overshoot the cap, the cap rises to 50 ms and the p99 of the
//! oversleep is learned; rare stalls, huge stalls and a calm machine leave the classic
//! behaviour (and its CPU bound) untouched.

use sleeplab::precise::{
    EstimatorConfig, MarginEstimator, Observation, PreciseSleeper, SleepCall, VirtualCosts,
    VirtualEnv, Wake,
};

const MS: u64 = 1_000_000;
const BASE: u64 = 20_000;

/// A deterministic pseudo-random sequence (xorshift64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn rare_stalls_keep_the_cap() {
    let cap = EstimatorConfig::default().cap_ns;
    let mut e = MarginEstimator::default();
    for i in 0..2_000u64 {
        // One wakeup in five overshoots the cap by milliseconds: 20 % < a quarter.
        let o = if i % 5 == 4 { 3 * MS } else { BASE };
        e.observe(o);
        assert!(!e.is_coarse(), "wait {i}: share {}", e.coarse_share());
        assert!(e.margin_ns() <= cap);
    }
    assert_eq!(e.stalls(), 400);
    assert!((e.coarse_share() - 0.2).abs() < 0.01);
}

#[test]
fn a_ten_ms_tick_switches_to_coarse_mode_and_learns_its_p99() {
    let mut e = MarginEstimator::default();
    let mut rng = Rng(0x5eed_0002);
    let mut first_coarse = None;
    for i in 0..600u64 {
        let o = rng.next() % (10 * MS); // U(0, 10 ms): the tick alignment
        let obs = e.observe(o);
        if e.is_coarse() {
            first_coarse.get_or_insert(i);
            assert_eq!(obs, Observation::Learned, "ordinary wakeups are learned");
        }
    }
    // Decided as soon as 8 samples were in: 3/4 of U(0, 10 ms) lie beyond 500 µs.
    assert_eq!(
        first_coarse,
        Some(MarginEstimator::COARSE_MIN_SAMPLES as u64 - 1)
    );
    assert!(e.is_coarse());
    assert_eq!(e.ceiling_ns(), MarginEstimator::COARSE_CAP_NS);
    // The 3rd largest of 256 uniform samples on 10 ms is ≈ 9.9 ms (bucket edge ≤ +12.5 %).
    let m = e.margin_ns();
    assert!((9_500_000..=11_400_000).contains(&m), "margin {m}");
    // Beyond the coarse cap it is still a stall.
    assert_eq!(e.observe(60 * MS), Observation::Stall);
    assert!(e.margin_ns() <= 11_400_000);
}

#[test]
fn coarse_mode_ends_when_the_machine_calms_down() {
    let cap = EstimatorConfig::default().cap_ns;
    let mut e = MarginEstimator::default();
    for i in 0..300u64 {
        e.observe((i * 7_919_000) % (8 * MS));
    }
    assert!(e.is_coarse());
    let mut calm = 0;
    while e.is_coarse() {
        e.observe(BASE);
        calm += 1;
        assert!(calm < 256, "must leave coarse mode within a window");
    }
    // The cap is back at once, and with it the bound on spinning.
    assert!(e.margin_ns() <= cap);
    assert!(e.estimate_ns() <= cap);
    for _ in 0..2_000 {
        e.observe(BASE);
    }
    assert!(!e.is_coarse());
    assert!(e.margin_ns() < 40_000, "{}", e.margin_ns());
}

#[test]
fn coarse_mode_is_forgotten_when_waits_have_no_native_phase() {
    let mut e = MarginEstimator::default();
    for i in 0..300u64 {
        e.observe((i * 7_919_000) % (8 * MS));
    }
    assert!(e.is_coarse());
    for _ in 0..256 {
        e.observe_none();
    }
    assert!(!e.is_coarse());
    assert_eq!(e.baseline_ns(), EstimatorConfig::default().prior_ns);
    e.reset();
    assert!(!e.is_coarse());
    assert_eq!(e.coarse_share(), 0.0);
}

#[test]
fn huge_stalls_never_switch_modes() {
    let cap = EstimatorConfig::default().cap_ns;
    let mut e = MarginEstimator::default();
    for i in 0..1_000u64 {
        // 40 % of wakeups 0.1–2 s late: a suspended VM, not a scheduler tick.
        let o = if i % 5 < 2 { 100 * MS + i * MS } else { BASE };
        assert_eq!(e.observe(o) == Observation::Stall, o > cap);
        assert!(!e.is_coarse());
        assert!(e.margin_ns() <= cap);
    }
}

#[test]
fn a_configured_cap_at_or_above_50ms_disables_coarse_mode() {
    let mut e = MarginEstimator::new(EstimatorConfig {
        cap_ns: 60 * MS,
        ..EstimatorConfig::default()
    });
    for i in 0..300u64 {
        e.observe((i * 7_919_000) % (8 * MS));
    }
    assert!(!e.is_coarse());
    assert_eq!(e.ceiling_ns(), 60 * MS);
}

#[test]
fn the_sleeper_is_on_time_on_a_ten_ms_tick() {
    // Seed 002's scheduler without preemption: every wakeup is U(0, 10 ms) late.
    let mut rng = Rng(0xabc);
    let env = VirtualEnv::starting_at(MS)
        .with_costs(VirtualCosts {
            clock_read_ns: 100,
            spin_pause_ns: 900,
            ..VirtualCosts::default()
        })
        .with_model(move |_c: &SleepCall| Wake::Late(rng.next() % (10 * MS)));
    let mut s = PreciseSleeper::new_virtual(env);
    for _ in 0..50 {
        s.sleep_for_ns(30 * MS);
    }
    assert!(s.estimator().is_coarse());
    s.reset_stats();
    let mut late = 0;
    for _ in 0..500 {
        let r = s.sleep_for_ns(30 * MS);
        assert!(r.woke >= r.deadline);
        late += u32::from(r.lateness_ns > 2_000);
    }
    // The margin is the window's 3rd-largest oversleep: about 1 % of waits are late.
    assert!(late <= 10, "{late} of 500 late");
    assert_eq!(s.stats().stalls, 0, "tick wakeups are not stalls");
}
