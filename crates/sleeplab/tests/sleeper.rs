//! `PreciseSleeper` in virtual time: its phases, what it learns, what it costs, and the
//! timer-slack policy on the real thread and on a thread the sleeper moves to.

use std::time::Duration;

use sleeplab::lab::{NativeWake, VirtualCosts, VirtualEnv, strategy_by_name};
use sleeplab::precise::{CpuBudget, EstimatorConfig, PreciseSleeper, SlackPolicy, SpinStrategy};
use sleeplab::system::{sched_slice_ns, set_timer_slack_ns, timer_slack_ns};

const FRAME: u64 = 16_666_667;

#[test]
fn past_deadline_returns_at_once_without_sleeping() {
    let mut s = PreciseSleeper::new_virtual(VirtualEnv::starting_at(1_000_000));
    let r = s.sleep_until_ns(10);
    assert_eq!(r.woke_ns, r.start_ns);
    assert_eq!(r.lateness_ns, r.start_ns - 10);
    assert_eq!(
        (r.native_ns, r.spin_ns, r.native_oversleep_ns),
        (0, 0, None)
    );
    assert_eq!(s.env().native_sleeps(), 0);
    assert_eq!(s.env().spin_pauses(), 0);
    let r = s.sleep(std::time::Duration::ZERO);
    assert_eq!(r.woke_ns, r.start_ns);
}

#[test]
fn within_the_margin_it_only_spins() {
    let mut s = PreciseSleeper::new_virtual(VirtualEnv::new().with_costs(VirtualCosts::EXACT));
    let margin = s.margin_ns();
    let r = s.sleep_for_ns(margin);
    assert_eq!(s.env().native_sleeps(), 0);
    assert_eq!(r.native_oversleep_ns, None);
    assert_eq!(r.lateness_ns, 0);
    assert_eq!(r.spin_ns, margin);
    assert_eq!(s.stats().native_sleeps, 0);
}

#[test]
fn sleeps_to_deadline_minus_margin_then_spins_exactly() {
    let env = VirtualEnv::new()
        .with_costs(VirtualCosts::EXACT)
        .with_oversleeps([30_000]);
    let mut s = PreciseSleeper::new_virtual(env);
    let margin = s.margin_ns();
    let r = s.sleep_until_ns(FRAME);
    assert_eq!(r.margin_ns, margin);
    assert_eq!(r.native_oversleep_ns, Some(30_000));
    assert_eq!(r.native_ns, FRAME - margin + 30_000);
    assert_eq!(r.spin_ns, margin - 30_000);
    assert_eq!((r.woke_ns, r.lateness_ns), (FRAME, 0));
    // The prior stands until the window has k = 6 samples; then the margin learns.
    assert_eq!(s.margin_ns(), margin);
    for k in 2..=5 {
        s.sleep_until_ns(k * FRAME);
    }
    assert_eq!(s.margin_ns(), margin);
    s.sleep_until_ns(6 * FRAME);
    assert!(s.margin_ns() < margin);
    assert!(s.estimator().baseline_ns() < 33_000);
}

#[test]
fn an_oversleep_beyond_the_margin_is_late_but_not_lost() {
    let env = VirtualEnv::new()
        .with_costs(VirtualCosts::EXACT)
        .with_oversleeps([300_000, 5_000_000]);
    let mut s = PreciseSleeper::new_virtual(env);
    let m0 = s.margin_ns();
    let r = s.sleep_until_ns(FRAME);
    assert_eq!(r.lateness_ns, 300_000 - m0);
    assert_eq!(r.spin_ns, 0);
    // Rises at once to the sample (within twice the baseline, here the 200 µs prior).
    assert_eq!(s.estimator().estimate_ns(), 300_000, "rises at once");
    // A 5 ms stall: late, and counted, as beyond the 833 µs ceiling of a 60 Hz frame.
    let r = s.sleep_until_ns(2 * FRAME);
    assert!(r.lateness_ns > 4_000_000);
    assert_eq!(s.stats().stalls, 1);
    assert_eq!(
        s.margin_ns(),
        400_000 + 10_000,
        "one stall raises the margin to twice the baseline, no more"
    );
    assert_eq!(s.stats().count, 2);
}

#[test]
fn learns_a_margin_that_covers_the_p99_of_its_wakeups() {
    // Oversleeps 40–119 µs with a 1-in-50 spike to 180 µs, and a 1-in-200 4 ms stall.
    let env = VirtualEnv::new().with_model(|c| {
        let i = c.index;
        NativeWake::Late(if i % 200 == 199 {
            4_000_000
        } else if i % 50 == 7 {
            180_000
        } else {
            40_000 + (i * 7919) % 80_000
        })
    });
    let mut s = PreciseSleeper::new_virtual(env);
    let mut late_spikes = 0;
    for i in 0..3_000 {
        let r = s.sleep_for_ns(FRAME);
        let stall = i % 200 == 199;
        if r.lateness_ns > 2_000 && !stall {
            late_spikes += 1;
            assert!(i < 6 * 50, "spike {i} late after warm-up");
        }
    }
    // None: the prior's release still covers the first spike (wait 7), and from then on
    // the largest sample stands in for the p99 until 100 samples resolve it, when the
    // window already holds two spikes.
    assert_eq!(late_spikes, 0);
    // Every stall is late and counted (beyond the 60 Hz ceiling), yet too rare (0.5 %)
    // to be covered.
    assert_eq!(s.stats().stalls, 15);
    // The p99 covers the spikes; the last wait was a stall, which raised the margin to
    // no more than twice that.
    let b = s.estimator().baseline_ns();
    assert!((180_000..=210_000).contains(&b), "baseline {b}");
    assert_eq!(s.margin_ns(), 2 * b + 10_000);
}

#[test]
fn costs_far_less_cpu_than_the_seed_hybrid_and_spinning() {
    let model = |c: &sleeplab::lab::SleepCall| NativeWake::Late(60_000 + (c.index * 7919) % 60_000);
    let cpu_of = |name: &str| {
        // 1 µs spin iterations keep the pure spin short; CPU shares are unaffected.
        let mut env = VirtualEnv::new()
            .with_model(model)
            .with_costs(VirtualCosts {
                clock_read_ns: 50,
                spin_pause_ns: 950,
                ..VirtualCosts::default()
            });
        let mut s = strategy_by_name::<VirtualEnv>(name).unwrap();
        let mut deadline = 0;
        for _ in 0..300 {
            deadline += FRAME;
            s.sleep_until(&mut env, deadline);
        }
        env.cpu_ns() as f64 / env.time() as f64
    };
    let precise = cpu_of("precise");
    let seed = cpu_of("seed-hybrid");
    let spin = cpu_of("spin");
    assert!(precise < 0.02, "precise {precise}");
    assert!(precise * 3.0 < seed, "precise {precise} seed {seed}");
    assert!(spin > 0.95);
}

#[test]
fn yield_spin_yields_instead_of_pausing() {
    let mut s = PreciseSleeper::builder()
        .spin_strategy(SpinStrategy::YieldSpin)
        .slack_policy(SlackPolicy::LeaveAlone)
        .estimator(EstimatorConfig {
            prior_ns: 50_000,
            ..EstimatorConfig::default()
        })
        .build_with_env(VirtualEnv::new())
        .unwrap();
    assert_eq!(s.spin_strategy(), SpinStrategy::YieldSpin);
    assert_eq!(s.margin_ns(), 60_000);
    let r = s.sleep_for_ns(FRAME);
    assert!(r.woke_ns >= r.deadline_ns);
    assert!(s.env().yields() > 0);
    assert_eq!(s.env().spin_pauses(), 0);
    assert_eq!(s.timer_slack_ns(), None);
}

#[test]
fn stats_add_up() {
    let mut s = PreciseSleeper::new_virtual(VirtualEnv::new().with_oversleeps([10_000, 250_000]));
    let mut lateness = 0;
    let mut max = 0;
    for _ in 0..50 {
        let r = s.sleep_for_ns(1_000_000);
        lateness += r.lateness_ns;
        max = max.max(r.lateness_ns);
    }
    let st = s.stats();
    assert_eq!(st.count, 50);
    assert_eq!(st.total_lateness_ns, lateness);
    assert_eq!(st.max_lateness_ns, max);
    assert_eq!(st.mean_lateness_ns(), lateness as f64 / 50.0);
    assert_eq!(st.native_sleeps, 50);
    s.reset_stats();
    assert_eq!(s.stats().count, 0);
}

#[test]
fn slack_policy_on_the_real_thread() {
    std::thread::spawn(|| {
        let before = timer_slack_ns();
        let v = PreciseSleeper::with_env(VirtualEnv::new());
        assert_eq!(v.timer_slack_ns(), None);
        assert_eq!(
            timer_slack_ns(),
            before,
            "virtual sleepers leave the slack alone"
        );
        let left = PreciseSleeper::builder()
            .slack_policy(SlackPolicy::LeaveAlone)
            .build()
            .unwrap();
        assert_eq!(left.timer_slack_ns(), Some(before));
        let s = PreciseSleeper::new();
        // 1 ns unless the sandbox refuses prctl; either way, what is reported is in force.
        assert_eq!(s.timer_slack_ns(), Some(timer_slack_ns()));
    })
    .join()
    .unwrap();
}

/// Runs `f` on a new thread whose timer slack is the kernel's default 50 µs (a thread
/// inherits its creator's, which a sleeper may have set to 1 ns).
fn on_a_thread_with_default_slack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::spawn(move || {
        set_timer_slack_ns(50_000).unwrap();
        assert_eq!(timer_slack_ns(), 50_000);
        f()
    })
    .join()
    .unwrap()
}

/// A sleeper follows the thread that uses it: moved to a thread whose slack is 50 µs, it
/// sets that thread's slack (and slice) before its first wait there and reports that
/// thread's, read back with `system::timer_slack_ns`.
#[test]
fn a_sleeper_follows_the_thread_that_uses_it() {
    let (mut sleeper, built) = on_a_thread_with_default_slack(|| {
        let s = PreciseSleeper::new();
        let built = s.timer_slack_ns();
        assert_eq!(built, Some(timer_slack_ns()));
        (s, built)
    });
    on_a_thread_with_default_slack(move || {
        // Until it sleeps here it reports the building thread's, and changes nothing.
        assert_eq!(sleeper.timer_slack_ns(), built);
        assert_eq!(timer_slack_ns(), 50_000);
        let r = sleeper.sleep(Duration::from_micros(200));
        assert!(r.woke_ns >= r.deadline_ns);
        // 1 ns unless the sandbox refuses prctl; either way, what is reported is in force.
        assert_eq!(sleeper.timer_slack_ns(), Some(timer_slack_ns()));
        assert!(timer_slack_ns() < 50_000, "the thread's slack was set");
        assert_eq!(sleeper.sched_slice_ns(), Some(sched_slice_ns()));
        // Later sleeps on the same thread change nothing more.
        set_timer_slack_ns(40_000).unwrap();
        sleeper.sleep(Duration::from_micros(100));
        assert_eq!(
            timer_slack_ns(),
            40_000,
            "applied once per thread, not per sleep"
        );
        sleeper
    });
    // A sleeper that leaves the slack alone reports each thread's own.
    let mut left = PreciseSleeper::builder()
        .slack_policy(SlackPolicy::LeaveAlone)
        .build()
        .unwrap();
    let left = on_a_thread_with_default_slack(move || {
        left.sleep(Duration::from_micros(100));
        assert_eq!(left.timer_slack_ns(), Some(50_000));
        assert_eq!(timer_slack_ns(), 50_000);
        left
    });
    assert_eq!(left.timer_slack_ns(), Some(50_000));
    // A virtual sleeper leaves every thread alone.
    let mut v = PreciseSleeper::with_env(VirtualEnv::new());
    on_a_thread_with_default_slack(move || {
        v.sleep_for_ns(FRAME);
        assert_eq!(v.timer_slack_ns(), None);
        assert_eq!(timer_slack_ns(), 50_000);
    });
}

#[test]
fn real_sleeps_are_never_early() {
    // No latency bound is asserted on the real machine, only the ordering.
    let mut s = PreciseSleeper::new();
    for i in 0..20u64 {
        let r = s.sleep(std::time::Duration::from_micros(50 + 97 * i));
        assert!(r.woke_ns >= r.deadline_ns);
        assert!(sleeplab::clock::monotonic_ns() >= r.deadline_ns);
    }
    let r = s.sleep_until(std::time::Instant::now() + std::time::Duration::from_micros(300));
    assert!(r.woke_ns >= r.deadline_ns);
}

#[test]
fn the_early_tolerance_is_a_bound_even_under_interruptions() {
    // Native sleeps are cut short by signals or wake up to 1.2 ms late, at random.
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let env = VirtualEnv::new().with_model(move |_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if x % 3 == 0 {
            NativeWake::Interrupted(1 + x % 2_000_000)
        } else {
            NativeWake::Late(x % 1_200_000)
        }
    });
    let early = 300_000;
    let mut s = PreciseSleeper::builder()
        .early_tolerance(std::time::Duration::from_nanos(early))
        .slack_policy(SlackPolicy::LeaveAlone)
        .build_with_env(env)
        .unwrap();
    assert_eq!(s.tradeoff().early_tolerance_ns, early);
    let mut returned_early = 0;
    for i in 0..3_000u64 {
        let r = s.sleep_for_ns(100_000 + (i * 7_919) % 20_000_000);
        assert!(
            r.woke_ns + early >= r.deadline_ns,
            "wait {i}: {} ns early",
            r.early_ns()
        );
        assert_eq!(r.early_ns(), r.deadline_ns.saturating_sub(r.woke_ns));
        returned_early += u32::from(r.is_early());
    }
    assert!(returned_early > 0, "it does use the tolerance");
    assert!(s.stats().max_early_ns <= early);
    assert!(s.env().interruptions() > 0);
    // Without a tolerance the same machine never returns early.
    let mut never = PreciseSleeper::new_virtual(VirtualEnv::new().with_script(vec![
        NativeWake::Interrupted(5_000),
        NativeWake::Late(900_000),
    ]));
    for i in 0..500u64 {
        let r = never.sleep_for_ns(50_000 + i * 40_000);
        assert!(!r.is_early());
    }
    assert_eq!(never.stats().max_early_ns, 0);
}

#[test]
fn a_budget_too_small_for_the_tail_says_so_and_names_the_budget_that_would_do() {
    // Wakeups 300 µs late: the p99 needs a 338 µs margin (its bucket's upper edge and
    // the headroom), 2.03 % of a 60 Hz frame.
    let sleeper = |budget: CpuBudget| {
        PreciseSleeper::builder()
            .cpu_budget(budget)
            .slack_policy(SlackPolicy::LeaveAlone)
            .build_with_env(VirtualEnv::new().with_model(|_| NativeWake::Late(300_000)))
            .expect("budgets of 1 % and 3 % are in range")
    };
    let mut tight = sleeper(CpuBudget::Percent(1.0));
    let mut ample = sleeper(CpuBudget::Percent(3.0));
    for _ in 0..200 {
        let (t, a) = (tight.sleep_for_ns(FRAME), ample.sleep_for_ns(FRAME));
        assert!(t.woke_ns >= t.deadline_ns && a.woke_ns >= a.deadline_ns);
        assert!(t.budget_limited && !a.budget_limited);
        assert_eq!(t.wanted_margin_ns, a.wanted_margin_ns);
        assert_eq!(t.margin_ns, FRAME / 100, "1 % of the frame");
    }
    let (st, sa) = (tight.stats(), ample.stats());
    assert_eq!((st.budget_limited, sa.budget_limited), (200, 0));
    // 300 µs's bucket [294912, 327680) by its upper edge, plus the 10 µs headroom.
    assert_eq!(st.wanted_margin_ns, 327_679 + 10_000);
    assert!((FRAME - 1_000..=FRAME).contains(&st.wanted_wait_ns));
    let wanted = st.budget_wanted_percent().unwrap();
    assert!((2.02..2.04).contains(&wanted), "{wanted} %");
    assert_eq!(sa.budget_wanted_percent(), None);
}
