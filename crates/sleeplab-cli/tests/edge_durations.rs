//! Edge durations: a deadline in the past returns at once (no native sleep, no yield, no
//! spin, no context switch) for `PreciseSleeper` and every strategy, in virtual time and
//! on the real machine, including the CLI's `spin-sleep`; zero and 1 ns are measured by
//! every `sweep` contender without an early return; statistics of day-long samples and of
//! absurd ones saturate instead of overflowing. (The one-day cap on every duration flag of
//! every command is checked in `bad_input.rs`.)

use sleeplab::clock::{Env, RealEnv, monotonic_ns};
use sleeplab::lab::{VirtualCosts, VirtualEnv, strategies as lib_strategies, strategy_by_name};
use sleeplab::precise::PreciseSleeper;
use sleeplab::wait::Support;
use sleeplab_cli::contenders::{self, strategies};
use sleeplab_cli::experiments::Context;
use sleeplab_cli::experiments::sweep::{self, Quota, SweepConfig};
use sleeplab_cli::parse::MAX_DURATION_NS;
use sleeplab_cli::rusage::ThreadUsage;
use sleeplab_stats::{Recorder, RecorderConfig};

#[test]
fn past_deadlines_return_at_once_in_virtual_time() {
    for info in lib_strategies() {
        let mut env = VirtualEnv::starting_at(10_000_000).with_costs(VirtualCosts::EXACT);
        let mut s = strategy_by_name::<VirtualEnv>(info.name).unwrap();
        for deadline in [0, 1, 9_999_999, 10_000_000] {
            let r = s.sleep_until(&mut env, deadline);
            assert_eq!(
                r.woke_ns, r.start_ns,
                "{} slept for a past deadline",
                info.name
            );
            assert_eq!(r.lateness_ns, r.woke_ns - deadline);
        }
        assert_eq!(env.native_sleeps(), 0, "{}", info.name);
        assert_eq!(env.spin_pauses(), 0, "{}", info.name);
        assert_eq!(env.yields(), 0, "{}", info.name);
        assert_eq!(env.time(), 10_000_000, "{}: time passed", info.name);
    }
    let mut s = PreciseSleeper::new_virtual(
        VirtualEnv::starting_at(10_000_000).with_costs(VirtualCosts::EXACT),
    );
    for deadline in [0, 1, 10_000_000] {
        let r = s.sleep_until_ns(deadline);
        assert_eq!(r.woke_ns, r.start_ns);
    }
    assert_eq!(
        s.env().native_sleeps() + s.env().spin_pauses() + s.env().yields(),
        0
    );
}

#[test]
fn past_deadlines_return_at_once_on_the_real_machine() {
    // Every CLI contender (the library's strategies and the spin_sleep crate) and the
    // real PreciseSleeper, 200 calls each with deadlines already gone (after one call
    // that pages its code in): never a blocking call (no voluntary context switch),
    // never early.
    let mut env = RealEnv;
    let mut blocked = Vec::new();
    for name in strategies::names() {
        let mut s = strategies::build(name).unwrap();
        // One call first: its code's first run may fault its pages in from disk (a
        // blocking read, counted as a voluntary switch), which is not the strategy
        // blocking.
        let gone = env.now().saturating_sub(1);
        let _ = s.sleep_until(&mut env, gone);
        let u0 = ThreadUsage::now();
        for i in 0..200u64 {
            let deadline = env.now().saturating_sub(1 + i * 1000);
            let r = s.sleep_until(&mut env, deadline);
            assert!(
                r.woke_ns >= deadline && monotonic_ns() >= deadline,
                "{name}"
            );
            // Zero-length requests too.
            let r = s.sleep_for(&mut env, 0);
            assert!(r.woke_ns >= r.deadline_ns, "{name}");
        }
        let u1 = ThreadUsage::now();
        if u1.voluntary_csw > u0.voluntary_csw {
            blocked.push(format!("{name}: {}", u1.voluntary_csw - u0.voluntary_csw));
        }
    }
    let mut p = PreciseSleeper::new();
    let _ = p.sleep_until_ns(monotonic_ns().saturating_sub(1));
    let u0 = ThreadUsage::now();
    for i in 0..200u64 {
        let deadline = monotonic_ns().saturating_sub(1 + i * 1000);
        let r = p.sleep_until_ns(deadline);
        assert!(r.woke_ns >= deadline);
        assert_eq!(
            r.native_ns, 0,
            "PreciseSleeper slept natively for a past deadline"
        );
    }
    let u1 = ThreadUsage::now();
    if u1.voluntary_csw > u0.voluntary_csw {
        blocked.push(format!(
            "PreciseSleeper: {}",
            u1.voluntary_csw - u0.voluntary_csw
        ));
    }
    assert!(
        blocked.is_empty(),
        "blocked for a past deadline: {blocked:?}"
    );
}

#[test]
fn zero_and_one_ns_are_never_early_for_any_contender() {
    let names: Vec<String> = contenders::all()
        .into_iter()
        .filter(|i| i.support == Support::Supported && i.name != "timerfd-interval")
        .map(|i| i.name.to_string())
        .collect();
    let config = SweepConfig {
        mechanisms: names.clone(),
        warmup: 1,
        json_samples: 5,
        raw_cap: 100,
        ..SweepConfig::new(&[], &[0, 1], Quota::Iterations { count: 5 })
    };
    let out = sweep::run(&config, &Context::hidden()).unwrap();
    assert!(out.complete);
    let d = &out.data;
    // Every (contender, duration) is either measured or skipped with a reason.
    assert_eq!(d.cells.len() + d.skipped.len(), names.len() * 2);
    for s in &d.skipped {
        assert!(!s.reason.is_empty());
    }
    for c in &d.cells {
        assert_eq!(c.summary.count, 5, "{}", c.mechanism);
        assert_eq!(
            c.summary.early_count, 0,
            "{} @ {} ns was early",
            c.mechanism, c.requested_ns
        );
        assert!(c.all_samples_ns.iter().all(|&s| s >= c.requested_ns));
    }
}

#[test]
fn statistics_of_huge_samples_saturate_instead_of_overflowing() {
    // Day-long samples beyond the raw cap: moments from Welford, quantiles from the
    // histogram, the total exact.
    let mut r = Recorder::new(MAX_DURATION_NS, RecorderConfig { raw_cap: 10 });
    for i in 0..1000 {
        r.record(MAX_DURATION_NS + i);
    }
    let s = r.summary();
    assert_eq!(s.count, 1000);
    assert_eq!(s.min_ns, MAX_DURATION_NS);
    assert_eq!(s.total_ns, 1000 * MAX_DURATION_NS + 999 * 1000 / 2);
    assert!(s.mean_ns.is_finite() && s.stddev_ns.is_finite());
    assert!((s.median_ns - MAX_DURATION_NS as f64).abs() / (MAX_DURATION_NS as f64) < 1e-2);
    assert_eq!(s.early_count, 0);

    // Absurd samples (no clock can produce them): the total saturates, nothing panics.
    let mut r = Recorder::new(0, RecorderConfig { raw_cap: 2 });
    for _ in 0..5 {
        r.record(u64::MAX / 2);
    }
    let s = r.summary();
    assert_eq!(s.total_ns, u64::MAX);
    assert_eq!(s.max_ns, u64::MAX / 2);
    assert!(s.mean_ns.is_finite());
}
