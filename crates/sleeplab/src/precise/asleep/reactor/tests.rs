//! The reactor timer's plan in virtual time (hand-computed arm times, the spin to a
//! deadline within the margin, what it learns, the cost of many sleeps), and its sleeps
//! on real tokio runtimes.

use super::*;
use crate::lab::VirtualEnv;
use std::task::{Wake, Waker};

/// A waker that counts its wakes.
struct Count(AtomicU64);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// A slot that keeps a counting waker, as a sleep's first poll leaves it.
fn slot(count: &Arc<Count>) -> Arc<Slot> {
    let s = Arc::new(Slot::default());
    assert!(!s.ready_or_keep(&Waker::from(Arc::clone(count))));
    s
}

fn one_percent() -> Plan {
    Plan::new(Tradeoff {
        cpu_budget: CpuBudget::Percent(1.0),
        ..Tradeoff::default()
    })
}

/// Arm times, by hand: the margin is the estimator's prior (200 µs + 10 µs of
/// headroom) bounded by 1 % of the wait; a later deadline leaves the arming alone, an
/// earlier one re-arms.
#[test]
fn it_arms_for_the_earliest_deadline_minus_the_budgeted_margin() {
    let c = Arc::new(Count(AtomicU64::new(0)));
    let mut plan = one_percent();
    // 16.666667 ms away: 1 % is 166 666 ns, under the 210 µs margin.
    assert_eq!(plan.register(0, 16_666_667, slot(&c)), Some(16_500_001));
    assert_eq!(plan.register(0, 20_000_000, slot(&c)), None, "later");
    // 1 ms away, registered at 0.5 ms: 1 % of 0.5 ms is 5 µs.
    assert_eq!(plan.register(500_000, 1_000_000, slot(&c)), Some(995_000));
    // 1 s away: the 210 µs margin is under 1 % (10 ms).
    let mut plan = one_percent();
    assert_eq!(plan.register(0, 1_000_000_000, slot(&c)), Some(999_790_000));
    // With nothing left the timerfd is disarmed.
    let mut due = Due::default();
    plan.wake(1_000_000_000, &mut due, &Counts::default());
    assert_eq!(plan.rearm(1_000_000_000), None);
    assert_eq!(plan.armed, None);
}

/// The state of a timer with `deadlines` registered at time 0, and their wake counts.
fn state_with(deadlines: &[u64]) -> (State, Vec<Arc<Count>>) {
    let state = State::new(1.0).unwrap();
    let counts: Vec<Arc<Count>> = deadlines
        .iter()
        .map(|_| Arc::new(Count(AtomicU64::new(0))))
        .collect();
    {
        let mut plan = lock(&state.plan);
        for (d, c) in deadlines.iter().zip(&counts) {
            plan.register(0, *d, slot(c));
        }
    }
    (state, counts)
}

/// The time the timerfd is armed to fire.
fn fire_of(state: &State) -> Option<u64> {
    lock(&state.plan).armed.map(|a| a.fire_ns)
}

/// A wake inside the margin spins to the deadline on the executor's thread and fires
/// it there, never before; a wake after the deadline fires at once, with no spin.
#[test]
fn a_wake_inside_the_margin_spins_to_the_deadline_and_a_late_one_does_not() {
    let (state, woken) = state_with(&[1_000_000, 3_000_000]);
    assert_eq!(fire_of(&state), Some(990_000));
    // The kernel and the executor take 4 µs: the task runs 6 µs before the deadline.
    let mut env = VirtualEnv::starting_at(994_000);
    turn(&state, &mut env);
    assert_eq!(woken[0].0.load(Ordering::Relaxed), 1);
    assert_eq!(woken[1].0.load(Ordering::Relaxed), 0, "not yet due");
    let spun = state.spun_ns.load(Ordering::Relaxed);
    assert!((5_000..=6_100).contains(&spun), "spun {spun} ns");
    assert!(env.time() >= 1_000_000, "never early");
    // Re-armed for 3 ms: 1 % of the (just under) 2 ms left is (just under) 20 µs.
    let fire = fire_of(&state).unwrap();
    assert!((2_980_000..=2_980_100).contains(&fire), "fire {fire}");
    // This wake comes 50 µs after the deadline: fired at once.
    let mut env = VirtualEnv::starting_at(3_050_000);
    turn(&state, &mut env);
    assert_eq!(woken[1].0.load(Ordering::Relaxed), 1);
    assert_eq!(state.spun_ns.load(Ordering::Relaxed), spun, "no spin");
    assert_eq!(state.counts.fired.load(Ordering::Relaxed), 2);
    assert!(state.counts.late_max_ns.load(Ordering::Relaxed) >= 50_000);
    assert_eq!(fire_of(&state), None, "nothing left: disarmed");
}

/// A wake well before the deadline it was armed for (a stale readiness, or a re-arm
/// since) neither spins nor fires: it arms again.
#[test]
fn an_early_wake_arms_again_without_spinning() {
    let (state, woken) = state_with(&[10_000_000]);
    let mut env = VirtualEnv::starting_at(2_000_000);
    turn(&state, &mut env);
    assert_eq!(woken[0].0.load(Ordering::Relaxed), 0);
    assert_eq!(state.spun_ns.load(Ordering::Relaxed), 0);
    assert!(fire_of(&state).is_some_and(|f| f < 10_000_000));
}

/// What it learns is the wake's delay after the fire time, or after the arming when
/// the fire time had already passed (such a timerfd fires at once): a 500 µs old fire
/// time does not teach it that wakes take 500 µs.
#[test]
fn it_learns_the_wake_delay_from_the_later_of_fire_time_and_arming() {
    let c = Arc::new(Count(AtomicU64::new(0)));
    let mut plan = one_percent();
    plan.register(0, 1_000_000, slot(&c));
    let mut due = Due::default();
    plan.wake(1_010_000, &mut due, &Counts::default());
    assert_eq!(due.wakers.len(), 1);
    // A sleep whose deadline passed between its poll and its registration (a thread
    // preempted there) is armed for its deadline, 10 µs before the arming.
    assert_eq!(
        plan.register(1_490_000, 1_480_000, slot(&c)),
        Some(1_480_000)
    );
    plan.wake(1_493_000, &mut Due::default(), &Counts::default());
    assert_eq!(plan.estimator.samples(), 2);
    // The samples were 20 µs (1.01 ms − 0.99 ms) and 3 µs (not 13): one of two above
    // 10 µs.
    assert_eq!(plan.estimator.share_above(10_000), 0.5);
}

/// Ten thousand sleeps on ten deadlines cost what ten do: the same wakes of the dispatch
/// task, the same spin.
#[test]
fn many_sleeps_on_one_deadline_cost_one_wake() {
    let cost = |tasks: u64| {
        let deadlines: Vec<u64> = (0..tasks).map(|i| 1_000_000 * (1 + i % 10)).collect();
        let (state, woken) = state_with(&deadlines);
        let mut turns = 0;
        // Each wake comes 3 µs after the fire time.
        while let Some(fire) = fire_of(&state) {
            turn(&state, &mut VirtualEnv::starting_at(fire + 3_000));
            turns += 1;
            assert!(turns <= 100, "runaway");
        }
        assert!(woken.iter().all(|w| w.0.load(Ordering::Relaxed) == 1));
        assert_eq!(state.counts.fired.load(Ordering::Relaxed), tasks);
        (turns, state.spun_ns.load(Ordering::Relaxed))
    };
    let (turns_10, spun_10) = cost(10);
    assert_eq!(turns_10, 10);
    assert_eq!(cost(10_000), (turns_10, spun_10));
}

/// Runs `tasks` tasks on `rt`, each sleeping on one timer to 3 staggered deadlines;
/// every wake is at or after its deadline, and the timer fired each sleep once.
fn real_sleeps(rt: tokio::runtime::Runtime, tasks: u64) {
    rt.block_on(async {
        let timer = ReactorTimer::new().unwrap();
        let base = monotonic_ns() + 5_000_000;
        let handles: Vec<_> = (0..tasks)
            .map(|i| {
                let timer = timer.clone();
                tokio::spawn(async move {
                    let mut registered = 0;
                    for k in 0..3 {
                        let deadline = base + i * 50_000 + k * 2_000_000;
                        let mut sleep = std::pin::pin!(timer.sleep_until_ns(deadline));
                        sleep.as_mut().await;
                        assert!(monotonic_ns() >= deadline, "early");
                        registered += u64::from(sleep.slot.is_some());
                    }
                    registered
                })
            })
            .collect();
        let mut registered = 0;
        for h in handles {
            registered += h.await.unwrap();
        }
        drop(timer.sleep(Duration::from_secs(3600)));
        let stats = timer.stats();
        assert!(registered > 0, "no sleep reached the timer");
        assert_eq!(stats.fired, registered);
    });
}

/// On the real clock, on both of tokio's runtimes: never early, each sleep fired once.
#[test]
fn real_sleeps_on_both_runtimes_are_never_early() {
    real_sleeps(
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
        20,
    );
    real_sleeps(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap(),
        100,
    );
}

/// Outside a runtime there is no reactor to serve it: an error, not a panic.
#[test]
fn outside_a_runtime_it_is_an_error() {
    assert!(matches!(ReactorTimer::new(), Err(ReactorError::NoRuntime)));
}
