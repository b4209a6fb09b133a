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
/// headroom) bounded by 1 % of the wait. The two timerfds take the two earliest
/// deadlines; a later one arms nothing, an earlier one takes the timerfd of the later
/// of the two.
#[test]
fn it_arms_the_two_earliest_deadlines_minus_the_budgeted_margin() {
    let c = Arc::new(Count(AtomicU64::new(0)));
    let mut plan = one_percent();
    // 16.666667 ms away: 1 % is 166 666 ns, under the 210 µs margin.
    assert_eq!(
        plan.register(0, 16_666_667, slot(&c)),
        [Some(Some(16_500_001)), None]
    );
    // 20 ms away: 1 % is 200 µs.
    assert_eq!(
        plan.register(0, 20_000_000, slot(&c)),
        [None, Some(Some(19_800_000))]
    );
    assert_eq!(
        plan.register(0, 30_000_000, slot(&c)),
        [None, None],
        "third"
    );
    // 1 ms away, registered at 0.5 ms: 1 % of 0.5 ms is 5 µs; it replaces 20 ms.
    assert_eq!(
        plan.register(500_000, 1_000_000, slot(&c)),
        [None, Some(Some(995_000))]
    );
    // 1 s away: the 210 µs margin is under 1 % (10 ms).
    let mut plan = one_percent();
    assert_eq!(
        plan.register(0, 1_000_000_000, slot(&c))[0],
        Some(Some(999_790_000))
    );
    // Once it fired, with nothing left, nothing is armed.
    let mut due = Due::default();
    plan.wake(0, 1_000_000_000, &mut due, &Counts::default());
    assert_eq!(plan.rearm(1_000_000_000), [None, None]);
    assert_eq!(plan.armed, [None, None]);
}

/// The state of a timer with `deadlines` registered at time 0, and their wake counts.
fn state_with(deadlines: &[u64]) -> (State, Vec<Arc<Count>>) {
    let state = State::new(CpuBudget::Percent(1.0)).unwrap();
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

/// The timerfd that fires first and when.
fn first_fire(state: &State) -> Option<(usize, u64)> {
    let plan = lock(&state.plan);
    (0..FDS)
        .filter_map(|fd| plan.armed[fd].map(|a| (fd, a.fire_ns)))
        .min_by_key(|&(_, fire)| fire)
}

/// A wake inside the margin spins to the deadline on the executor's thread and fires
/// it there, never before; a wake after the deadline fires at once, with no spin.
#[test]
fn a_wake_inside_the_margin_spins_to_the_deadline_and_a_late_one_does_not() {
    let (state, woken) = state_with(&[1_000_000, 3_000_000]);
    assert_eq!(first_fire(&state), Some((0, 990_000)));
    // The kernel and the executor take 4 µs: the task runs 6 µs before the deadline.
    let mut env = VirtualEnv::starting_at(994_000);
    turn(&state, 0, &mut env);
    assert_eq!(woken[0].0.load(Ordering::Relaxed), 1);
    assert_eq!(woken[1].0.load(Ordering::Relaxed), 0, "not yet due");
    let spun = state.spun_ns.load(Ordering::Relaxed);
    assert!((5_000..=6_100).contains(&spun), "spun {spun} ns");
    assert!(env.time() >= 1_000_000, "never early");
    // 3 ms was armed at registration (1 % of 3 ms is 30 µs) and is left alone.
    assert_eq!(first_fire(&state), Some((1, 2_970_000)));
    // This wake comes 50 µs after the deadline: fired at once.
    let mut env = VirtualEnv::starting_at(3_050_000);
    turn(&state, 1, &mut env);
    assert_eq!(woken[1].0.load(Ordering::Relaxed), 1);
    assert_eq!(state.spun_ns.load(Ordering::Relaxed), spun, "no spin");
    assert_eq!(state.counts.fired.load(Ordering::Relaxed), 2);
    assert!(state.counts.late_max_ns.load(Ordering::Relaxed) >= 50_000);
    assert_eq!(first_fire(&state), None, "nothing left: nothing armed");
}

/// After a wake only the timerfd that fired is re-armed, and for a later time than the
/// other's: the kernel's earliest timer, armed long before, is not moved.
#[test]
fn a_wake_re_arms_only_its_own_timerfd_behind_the_other() {
    let (state, _woken) = state_with(&[1_000_000, 2_000_000, 3_000_000, 4_000_000]);
    let before = lock(&state.plan).armed;
    turn(&state, 0, &mut VirtualEnv::starting_at(1_020_000));
    let after = lock(&state.plan).armed;
    assert_eq!(after[1], before[1], "the other timerfd is left alone");
    let (own, other) = (after[0].unwrap(), after[1].unwrap());
    assert_eq!(own.deadline_ns, 3_000_000);
    assert!(own.fire_ns > other.fire_ns);
}

/// A wake well before the fire time of the timerfd that woke it (a stale readiness, or
/// a re-arm since) neither spins nor fires nor re-arms.
#[test]
fn a_stale_wake_changes_nothing() {
    let (state, woken) = state_with(&[10_000_000]);
    let before = lock(&state.plan).armed;
    turn(&state, 0, &mut VirtualEnv::starting_at(2_000_000));
    assert_eq!(woken[0].0.load(Ordering::Relaxed), 0);
    assert_eq!(state.spun_ns.load(Ordering::Relaxed), 0);
    assert_eq!(lock(&state.plan).armed, before);
}

/// What it learns is the wake's delay after the fire time, or after the arming when
/// the fire time had already passed (such a timerfd fires at once): a fire time 10 µs
/// old does not teach it that wakes take 10 µs more.
#[test]
fn it_learns_the_wake_delay_from_the_later_of_fire_time_and_arming() {
    let c = Arc::new(Count(AtomicU64::new(0)));
    let mut plan = one_percent();
    plan.register(0, 1_000_000, slot(&c));
    let mut due = Due::default();
    plan.wake(0, 1_010_000, &mut due, &Counts::default());
    assert_eq!(due.wakers.len(), 1);
    // A sleep whose deadline passed between its poll and its registration (a thread
    // preempted there) is armed for its deadline, 10 µs before the arming.
    assert_eq!(
        plan.register(1_490_000, 1_480_000, slot(&c)),
        [Some(Some(1_480_000)), None]
    );
    plan.wake(0, 1_493_000, &mut Due::default(), &Counts::default());
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
        while let Some((fd, fire)) = first_fire(&state) {
            turn(&state, fd, &mut VirtualEnv::starting_at(fire + 3_000));
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
/// every wake is at or after its deadline, the timer fired each sleep once, and a sleep
/// dropped after it registered never fires.
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
        // A sleep registered and dropped before its deadline never fires: the sleep
        // after its deadline is the only one this adds.
        std::pin::pin!(timer.sleep(Duration::from_millis(1))).poll_once();
        let mut later = std::pin::pin!(timer.sleep(Duration::from_millis(3)));
        later.as_mut().await;
        let later_registered = u64::from(later.slot.is_some());
        let stats = timer.stats();
        assert!(registered > 0, "no sleep reached the timer");
        assert_eq!(stats.fired, registered + later_registered);
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

/// Outside a runtime there is no reactor to serve it: an error naming the timer, not a
/// panic.
#[test]
fn outside_a_runtime_it_is_an_error() {
    let e = ReactorTimer::new().unwrap_err();
    assert!(
        matches!(
            e,
            ReactorError::NoRuntime {
                what: "ReactorTimer"
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "a ReactorTimer is made inside a tokio runtime (none is running on this thread)"
    );
}

/// A runtime without I/O has no reactor either: `new` returns the error (tokio's own I/O
/// types panic there), and the runtime stays usable.
#[test]
fn on_a_runtime_without_io_it_is_an_error() {
    for rt in [
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap(),
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_time()
            .build()
            .unwrap(),
    ] {
        let e = rt.block_on(async { ReactorTimer::new() }).unwrap_err();
        assert!(
            matches!(
                e,
                ReactorError::IoDisabled {
                    what: "ReactorTimer"
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("enable_io"), "{e}");
        // The runtime is unharmed: its own timer still serves a sleep.
        rt.block_on(async { tokio::time::sleep(Duration::from_millis(1)).await });
    }
}

/// A budget out of 0–100 % is refused as the sleeper's `cpu_budget` option is, before
/// any runtime is looked for.
#[test]
fn a_budget_out_of_range_is_refused_like_the_sleepers() {
    let builder_error = crate::precise::PreciseSleeper::builder()
        .cpu_budget_percent(250.0)
        .build()
        .unwrap_err();
    for percent in [250.0, -1.0, f64::NAN] {
        let e = ReactorTimer::with_cpu_budget_percent(percent).unwrap_err();
        assert!(matches!(e, ReactorError::Option(_)), "{percent}: {e:?}");
    }
    let e = ReactorTimer::with_cpu_budget_percent(250.0).unwrap_err();
    assert_eq!(e.to_string(), builder_error.to_string());
}
