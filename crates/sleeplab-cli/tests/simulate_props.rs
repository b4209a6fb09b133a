//! Properties of the simulator and of the library's strategies in virtual time, over
//! random models and requests (proptest):
//!
//! 1. No strategy in the library ever returns before its deadline in virtual time,
//!    whatever the native sleep does: seed 002's scheduler with any period and
//!    preemption chance, a replayed empirical distribution, or a script of late and
//!    interrupted (EINTR-like) wakeups; requests from 0 to 30 ms, and deadlines already
//!    past.
//! 2. `precise` stays within a stated bound of relative error for requests of at least
//!    10 ms at every scheduler period up to 10 ms (seed 002's model, preemption chance up
//!    to 0.05), after 50 warm-up sleeps: **mean relative error ≤ 3 % over 600
//!    consecutive sleeps**. docs/SIMULATE.md explains where the bound comes from: the
//!    margin covers the window's p99 of the oversleep, so about 1 % of waits are late;
//!    and a request shorter than that margin (≈ 2 periods) is spun whole, so the
//!    estimator forgets coarse mode after 256 such waits and relearns it with about
//!    eight late waits of about half a period each. The worst mean seen there, over
//!    1 080 such cells in the hardest corner (periods 5–10 ms, requests 10–17 ms), is
//!    1.7 %; in the long run (3 000 sleeps) it stays below 1 %.
//! 3. The grid's result does not depend on the number of worker threads.

use proptest::prelude::*;
use sleeplab::lab::{
    NativeWake, SleepCall, VirtualCosts, VirtualEnv, strategies, strategy_by_name,
};
use sleeplab_cli::experiments::Context;
use sleeplab_cli::experiments::simulate::{
    self as sim, Empirical, Model, ModelSpec, SchedulerModel, SimCosts, SimulateConfig,
    rng::rng_for,
};
use std::sync::Arc;

/// Costs with 1 µs spin iterations: spin loops stay short in unoptimized test builds.
/// Never-early does not depend on them, and they move the bound of property 2 by at most
/// one iteration (1 µs, 0.01 % of a 10 ms request).
fn quick_costs() -> VirtualCosts {
    VirtualCosts {
        clock_read_ns: 50,
        spin_pause_ns: 950,
        yield_ns: 950,
        sleep_cpu_ns: 1_000,
    }
}

/// A native-sleep model: seed 002's scheduler, an empirical distribution, or a script.
#[derive(Debug, Clone)]
enum AnyModel {
    Scheduler(SchedulerModel),
    Empirical(Vec<(u64, Vec<u64>)>),
    Script(Vec<NativeWake>),
}

fn any_model() -> impl Strategy<Value = AnyModel> {
    let wake = prop_oneof![
        (0u64..5_000_000).prop_map(NativeWake::Late),
        (1u64..10_000_000).prop_map(NativeWake::Interrupted),
    ];
    prop_oneof![
        (1u64..20_000_000, 0.0f64..0.5).prop_map(|(period_ns, preempt_prob)| {
            AnyModel::Scheduler(SchedulerModel {
                period_ns,
                preempt_prob,
            })
        }),
        prop::collection::vec(
            (
                0u64..50_000_000,
                prop::collection::vec(0u64..5_000_000, 1..20)
            ),
            1..5
        )
        .prop_map(AnyModel::Empirical),
        prop::collection::vec(wake, 1..12).prop_map(AnyModel::Script),
    ]
}

fn env_for(model: &AnyModel, seed: u64) -> VirtualEnv {
    let env = VirtualEnv::starting_at(1_000_000_000).with_costs(quick_costs());
    let rng = rng_for(seed, &[]);
    match model {
        AnyModel::Scheduler(m) => env.with_model(Model::Scheduler(*m).wake_fn(rng)),
        AnyModel::Empirical(a) => {
            let e = Empirical::from_anchors(a.clone()).expect("anchors have values");
            env.with_model(Model::Replay(Arc::new(e)).wake_fn(rng))
        }
        AnyModel::Script(s) => env.with_script(s.clone()),
    }
}

/// A request: a duration from now, or a deadline already in the past.
#[derive(Debug, Clone, Copy)]
enum Request {
    For(u64),
    Past(u64),
}

fn any_request() -> impl Strategy<Value = Request> {
    prop_oneof![
        8 => (0u64..30_000_000).prop_map(Request::For),
        1 => (0u64..5_000).prop_map(Request::For),
        1 => (0u64..1_000_000).prop_map(Request::Past),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn no_strategy_ever_returns_before_its_deadline(
        model in any_model(),
        requests in prop::collection::vec(any_request(), 1..25),
        seed in any::<u64>(),
    ) {
        for info in strategies() {
            let mut env = env_for(&model, seed);
            let mut s = strategy_by_name::<VirtualEnv>(info.name).unwrap();
            for &r in &requests {
                let now = env.time();
                let deadline = match r {
                    Request::For(ns) => now + ns,
                    Request::Past(ago) => now.saturating_sub(ago),
                };
                let report = s.sleep_until(&mut env, deadline);
                let t = env.time();
                prop_assert!(t >= deadline, "{} returned {} ns early under {:?}", info.name, deadline - t, model);
                prop_assert!(report.woke_ns >= deadline, "{} reported an early wake", info.name);
                prop_assert!(report.woke_ns <= t, "{} reported a wake in the future", info.name);
            }
        }
    }
}

/// The stated bound on `precise`'s mean relative error (property 2).
const PRECISE_MEAN_BOUND: f64 = 0.03;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20))]

    #[test]
    fn precise_mean_error_is_bounded_for_requests_of_10ms_and_more(
        period_ns in 1_000u64..=10_000_000,
        preempt_prob in 0.0f64..=0.05,
        requested_ns in 10_000_000u64..=100_000_000,
        seed in any::<u64>(),
    ) {
        let model = SchedulerModel { period_ns, preempt_prob };
        let config = SimulateConfig {
            strategies: vec!["precise".into()],
            intervals_ns: vec![requested_ns],
            models: vec![ModelSpec::Scheduler(model)],
            sleeps: 600,
            warmup: 50,
            seed,
            costs: SimCosts::from(quick_costs()),
            host: None,
        };
        let cell = sim::run_cell(&config, &Model::Scheduler(model), "precise", requested_ns, 0).unwrap();
        prop_assert_eq!(cell.early, 0);
        prop_assert!(
            cell.mean_rel_error <= PRECISE_MEAN_BOUND,
            "mean relative error {:.4} at period {} ns, p = {}, request {} ns",
            cell.mean_rel_error, period_ns, preempt_prob, requested_ns
        );
    }
}

#[test]
fn the_thread_count_does_not_change_the_result() {
    let models: Vec<SchedulerModel> = [300_000, 4_000_000]
        .iter()
        .map(|&period_ns| SchedulerModel {
            period_ns,
            preempt_prob: 0.05,
        })
        .collect();
    let config = SimulateConfig {
        strategies: vec!["std-sleep".into(), "fixed-margin".into(), "precise".into()],
        intervals_ns: vec![1_000_000, 3_000_000],
        models: models.iter().copied().map(ModelSpec::Scheduler).collect(),
        sleeps: 30,
        warmup: 5,
        seed: 99,
        costs: SimCosts::from(quick_costs()),
        host: None,
    };
    let loaded: Vec<Model> = models.into_iter().map(Model::Scheduler).collect();
    let one = sim::run_grid(&config, &loaded, &Context::hidden(), 1).unwrap();
    let three = sim::run_grid(&config, &loaded, &Context::hidden(), 3).unwrap();
    assert!(one.complete && three.complete);
    assert_eq!(one.data, three.data);
    assert_eq!(one.data.cells.len(), 12);
    let unknown = SimulateConfig {
        strategies: vec!["no-such-strategy".into()],
        ..config
    };
    assert!(sim::run_grid(&unknown, &loaded, &Context::hidden(), 2).is_err());
}

#[test]
fn a_model_closure_sees_relative_and_absolute_sleeps_alike() {
    // The scheduler model ignores how the sleep was asked: same seed, same oversleeps.
    let m = Model::Scheduler(SchedulerModel {
        period_ns: 1_000_000,
        preempt_prob: 0.05,
    });
    let mut a = m.wake_fn(rng_for(5, &[]));
    let mut b = m.wake_fn(rng_for(5, &[]));
    for i in 0..100 {
        let call = |absolute| SleepCall {
            index: i,
            now: 0,
            target: 1_000,
            absolute,
            cpu_ns: 0,
        };
        assert_eq!(a(&call(true)), b(&call(false)));
    }
}
