//! The margin estimator on scripted inputs: prior, bounded instant rise, release with the
//! documented half-life, the window quantile (milliseconds included), the cap,
//! forgetting, and robustness to bad configuration.

use sleeplab::precise::{EstimatorConfig, MarginEstimator, Observation};

const BASE: u64 = 20_000; // a typical 1 ns-slack oversleep
const BASE_EDGE: u64 = 20_479; // upper edge of BASE's histogram bucket [18432, 20480)
const RISEN: u64 = 2 * BASE_EDGE; // the highest one bad wakeup can raise it: 2 × baseline
const MS: u64 = 1_000_000;

fn warmed(cfg: EstimatorConfig, n: usize) -> MarginEstimator {
    let mut e = MarginEstimator::new(cfg);
    for _ in 0..n {
        e.observe(BASE);
    }
    e
}

#[test]
fn starts_at_the_documented_prior() {
    let e = MarginEstimator::default();
    let cfg = EstimatorConfig::default();
    assert_eq!(cfg.prior_ns, 200_000);
    assert_eq!(cfg.cap_ns, 50 * MS);
    assert_eq!(cfg.half_life, 8);
    assert_eq!(cfg.window, 512);
    assert_eq!(cfg.quantile, 0.99);
    assert_eq!(MarginEstimator::RISE_FACTOR, 2.0);
    assert_eq!(e.estimate_ns(), 200_000);
    assert_eq!(
        e.baseline_ns(),
        200_000,
        "empty window: the baseline is the prior"
    );
    assert_eq!(e.margin_ns(), 210_000, "prior + 10 µs headroom");
    assert_eq!((e.samples(), e.stalls(), e.window_samples()), (0, 0, 0));
}

#[test]
fn settles_to_the_window_quantile_of_steady_input() {
    let e = warmed(EstimatorConfig::default(), 2_000);
    assert_eq!(e.baseline_ns(), BASE_EDGE);
    // 2000 waits = 62 half-lives: the prior's excess is gone.
    assert_eq!(e.estimate_ns(), BASE_EDGE);
    assert_eq!(e.margin_ns(), BASE_EDGE + 10_000);
}

#[test]
fn rises_at_once_but_only_to_twice_the_baseline() {
    let mut e = warmed(EstimatorConfig::default(), 2_000);
    assert_eq!(e.observe(400_000), Observation::Learned);
    assert_eq!(e.estimate_ns(), RISEN, "one bad wakeup: at once, bounded");
    assert_eq!(e.margin_ns(), RISEN + 10_000);
    // A second one does not raise it further while the baseline stands.
    e.observe(5 * MS);
    assert_eq!(e.estimate_ns(), RISEN);
}

#[test]
fn eases_down_with_a_half_life_of_8_waits() {
    let mut e = warmed(EstimatorConfig::default(), 2_000);
    e.observe(400_000);
    // The spike is 1 sample of 512: the window p99 (6th largest) stays at the base.
    let excess0 = (RISEN - BASE_EDGE) as f64;
    let mut prev = e.estimate_ns();
    for k in 1..=80u32 {
        e.observe(BASE);
        assert_eq!(e.baseline_ns(), BASE_EDGE);
        let est = e.estimate_ns();
        assert!(est <= prev, "release is monotone");
        prev = est;
        let expect = BASE_EDGE as f64 + excess0 * 0.5f64.powf(f64::from(k) / 8.0);
        assert!(
            (est as f64 - expect).abs() <= 1.5,
            "after {k} waits: {est} vs {expect}"
        );
        if k == 8 {
            let excess = est as f64 - BASE_EDGE as f64;
            assert!((excess / excess0 - 0.5).abs() < 0.001, "half-life 8");
        }
    }
    // 10 half-lives later it is within 0.1 % of the rise from the baseline.
    assert!(((e.estimate_ns() - BASE_EDGE) as f64) < excess0 / 1000.0);
}

#[test]
fn a_burst_of_bad_wakeups_raises_the_baseline_itself() {
    let mut e = warmed(EstimatorConfig::default(), 2_000);
    for _ in 0..10 {
        e.observe(150_000);
    }
    // 10 of 512 > 1 %: the p99 is now the burst's level, and stays while in the window.
    for _ in 0..450 {
        e.observe(BASE);
    }
    assert!(e.baseline_ns() >= 150_000);
    assert!(e.estimate_ns() >= 150_000);
    // Once the burst leaves the window, it is forgotten.
    for _ in 0..100 {
        e.observe(BASE);
    }
    assert_eq!(e.baseline_ns(), BASE_EDGE);
}

#[test]
fn a_millisecond_mode_above_one_percent_is_learned() {
    // A loaded machine: 1 wakeup in 40 (2.5 %) waits for another task's 3 ms slice.
    let mut e = warmed(EstimatorConfig::default(), 600);
    for i in 0..2_000u64 {
        let o = if i % 40 == 39 { 3 * MS } else { BASE };
        assert_eq!(
            e.observe(o),
            Observation::Learned,
            "milliseconds are learned"
        );
    }
    assert!(e.baseline_ns() >= 3 * MS, "the p99 is in the ms mode");
    assert!(e.margin_ns() >= 3 * MS);
    assert_eq!(e.stalls(), 0);
}

#[test]
fn rare_stalls_on_an_idle_machine_are_not_covered() {
    // 1 wakeup in 200 (0.5 %) stalls for 4 ms: below the p99, never spun for.
    let mut e = warmed(EstimatorConfig::default(), 600);
    for i in 0..5_000u64 {
        let o = if i % 200 == 199 { 4 * MS } else { BASE };
        e.observe(o);
        assert_eq!(e.baseline_ns(), BASE_EDGE, "wait {i}");
        assert!(e.margin_ns() <= RISEN + 10_000, "no ms margin (wait {i})");
    }
}

#[test]
fn beyond_cap_outliers_are_counted_not_learned() {
    let mut e = warmed(EstimatorConfig::default(), 500);
    let before = (
        e.estimate_ns(),
        e.margin_ns(),
        e.samples(),
        e.window_samples(),
    );
    assert_eq!(e.observe(60 * MS), Observation::Stall);
    assert_eq!(e.observe(u64::MAX), Observation::Stall);
    assert_eq!(e.stalls(), 2);
    assert_eq!(
        (
            e.estimate_ns(),
            e.margin_ns(),
            e.samples(),
            e.window_samples()
        ),
        before
    );
    assert_eq!(e.observe(50 * MS + 1), Observation::Stall);
    // A sample exactly at the cap is learned, and the margin never exceeds the cap.
    for _ in 0..10 {
        assert_eq!(e.observe(50 * MS), Observation::Learned);
    }
    assert_eq!(e.margin_ns(), 50 * MS);
    assert_eq!(e.stalls(), 3);
}

#[test]
fn forgets_when_the_native_phase_stops_happening() {
    let mut e = warmed(EstimatorConfig::default(), 300);
    for _ in 0..10 {
        e.observe(450_000); // a burst raising the p99 to 450 µs
    }
    assert!(e.margin_ns() >= 450_000);
    // Waits too short for a native phase: the window empties, back to the prior.
    for _ in 0..512 {
        e.observe_none();
    }
    assert_eq!(e.window_samples(), 0);
    assert_eq!(e.baseline_ns(), 200_000);
    for _ in 0..1_000 {
        e.observe_none();
    }
    assert_eq!(e.estimate_ns(), 200_000);
}

#[test]
fn reset_returns_to_the_prior() {
    let mut e = warmed(EstimatorConfig::default(), 100);
    e.observe(2_000_000);
    e.reset();
    assert_eq!(e.estimate_ns(), 200_000);
    assert_eq!((e.samples(), e.stalls(), e.window_samples()), (0, 0, 0));
}

#[test]
fn is_deterministic_and_bounded_on_arbitrary_input() {
    let mut a = MarginEstimator::default();
    let mut b = MarginEstimator::default();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let s = if i % 7 == 0 { x } else { x % 400_000 };
        assert_eq!(a.observe(s), b.observe(s));
        if i % 11 == 0 {
            a.observe_none();
            b.observe_none();
        }
        assert_eq!(a.margin_ns(), b.margin_ns());
        assert!(a.margin_ns() <= 50 * MS);
    }
}

#[test]
fn bad_configuration_is_clamped_not_panicking() {
    let cfg = EstimatorConfig {
        prior_ns: u64::MAX,
        cap_ns: 0,
        window: 0,
        quantile: f64::NAN,
        half_life: 0,
        headroom_ns: u64::MAX,
    };
    let mut e = MarginEstimator::new(cfg);
    let n = *e.config();
    assert_eq!((n.cap_ns, n.prior_ns, n.window, n.half_life), (1, 1, 1, 1));
    assert_eq!(n.quantile, 0.99);
    assert_eq!(e.margin_ns(), 1);
    e.observe(0);
    e.observe(7);
    e.observe_none();
    assert!(e.margin_ns() <= 1);
    let big = MarginEstimator::new(EstimatorConfig {
        window: usize::MAX,
        quantile: 7.0,
        ..EstimatorConfig::default()
    });
    assert_eq!(big.window_len(), 4096);
    assert_eq!(big.config().quantile, 1.0);
}

#[test]
fn the_prior_stands_in_until_the_window_has_k_samples() {
    let mut e = MarginEstimator::default();
    assert_eq!(e.baseline_rank(), 6, "⌈(1 − 0.99) · 512⌉");
    for _ in 0..5 {
        e.observe(BASE);
    }
    assert_eq!(e.baseline_ns(), 200_000);
    e.observe(BASE);
    assert_eq!(e.baseline_ns(), BASE_EDGE);
}

#[test]
fn until_the_window_resolves_the_p99_the_largest_sample_is_the_baseline() {
    // With 50 samples an honest p99 is their maximum: one spike sets the baseline ...
    let mut e = warmed(EstimatorConfig::default(), 50);
    e.observe(450_000);
    let spike_edge = 458_751; // upper edge of 450 µs's bucket [425984, 458752)
    assert_eq!(e.baseline_ns(), spike_edge);
    assert_eq!(e.estimate_ns(), spike_edge);
    // ... until 100 samples (rank 1 of 100 is still the largest) ...
    for _ in 0..49 {
        e.observe(BASE);
    }
    assert_eq!(e.window_samples(), 100);
    assert_eq!(e.baseline_ns(), spike_edge);
    // ... and from the 101st the p99 is the 2nd largest: the spike no longer sets it.
    e.observe(BASE);
    assert_eq!(e.baseline_ns(), BASE_EDGE);
    for _ in 0..8 * 20 {
        e.observe(BASE);
    }
    assert_eq!(
        e.estimate_ns(),
        BASE_EDGE,
        "and the estimate releases fully"
    );
}
