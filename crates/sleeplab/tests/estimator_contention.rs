//! The contended regime of `precise` in virtual time: on a modelled loaded scheduler
//! where a spin that runs longer than [`SLICE_RUN_NS`] since its wakeup loses its CPU
//! for a whole slice ([`STALL_NS`]), the default `precise` shortens its spin, and
//! `precise:contention=ignore` (the behaviour before the regime existed) does not.
//! The recorded traces on the same model: `estimator_traces.rs`. No real clock is read.

use sleeplab::lab::{Contention, NativeWake, Precise, Regime, SleepCall, VirtualEnv, WaitSummary};
use sleeplab::precise::{
    ContentionPolicy, EstimatorConfig, HostPolicy, SleepReport, SpinStrategy, Tradeoff,
};

/// A spinner that has run this long since its wakeup is preempted (the model's slice).
const SLICE_RUN_NS: u64 = 300_000;
/// ... and waits this long behind the busy thread.
const STALL_NS: u64 = 3_000_000;
const FRAME_NS: u64 = 16_666_667;
const WAITS: usize = 3_000;

fn slice_model(run_ns: u64) -> u64 {
    if run_ns >= SLICE_RUN_NS { STALL_NS } else { 0 }
}

fn precise(contention: ContentionPolicy) -> Precise {
    Precise::new(EstimatorConfig::default(), SpinStrategy::Spin).with_tradeoff(Tradeoff {
        contention,
        ..Tradeoff::default()
    })
}

/// A loaded machine's wakeups: 97 of 100 are 20 µs late, 3 are 400 µs late (enough of
/// them for the estimator's p99 to sit in the slow mode, so the margin is ~0.4 ms).
fn loaded_oversleeps() -> Vec<u64> {
    (0..100)
        .map(|i| if i % 33 == 0 { 400_000 } else { 20_000 })
        .collect()
}

fn run(contention: ContentionPolicy) -> (Vec<SleepReport>, VirtualEnv) {
    let mut env = VirtualEnv::starting_at(1_000_000_000)
        .with_oversleeps(loaded_oversleeps())
        .with_preemption(slice_model);
    let mut s = precise(contention);
    let reports = (0..WAITS)
        .map(|_| {
            let deadline = env.time() + FRAME_NS;
            s.wait_until(&mut env, deadline)
        })
        .collect();
    (reports, env)
}

fn summary(reports: &[SleepReport]) -> WaitSummary {
    WaitSummary::from_waits(
        reports
            .iter()
            .map(|r| (r.lateness_ns, r.spin_ns, r.woke_ns - r.start_ns)),
    )
}

#[test]
fn on_a_loaded_scheduler_the_adapted_spin_is_rarely_preempted_and_less_late() {
    let (adapt, adapt_env) = run(ContentionPolicy::Adapt);
    let (ignore, ignore_env) = run(ContentionPolicy::Ignore);
    for r in adapt.iter().chain(&ignore) {
        assert!(r.woke_ns >= r.deadline_ns, "never early");
    }
    let (a, i) = (summary(&adapt), summary(&ignore));
    let (a99, i99) = (a.p99_ns.unwrap(), i.p99_ns.unwrap());
    // Ignoring contention, most spins outlast the slice: p99 is a whole stall.
    assert!(i99 >= STALL_NS - SLICE_RUN_NS, "ignore: p99 {i99} ns");
    // Adapting, only the slow wakeups are late, by at most their oversleep.
    assert!(a99 <= 400_000, "adapt: p99 {a99} ns");
    assert!(a.cpu_percent() < i.cpu_percent());
    // Each entry into the regime takes two preemptions; it holds for HOLD_WAITS waits.
    let entries = WAITS as u64 / Contention::HOLD_WAITS + 1;
    assert!(
        adapt_env.preemptions() <= 2 * entries,
        "{} preemptions",
        adapt_env.preemptions()
    );
    assert!(ignore_env.preemptions() > WAITS as u64 / 2);
    // The reports name what happened: every preemption the model made is a spin gap.
    let gaps = adapt
        .iter()
        .filter(|r| r.preempted_while_spinning())
        .count() as u64;
    assert_eq!(gaps, adapt_env.preemptions());
}

#[test]
fn one_preemption_is_not_contention() {
    // A single host hiccup in a quiet run changes nothing: both policies wait alike.
    let run = |contention| {
        let mut env = VirtualEnv::starting_at(1_000_000_000)
            .with_oversleeps([60_000])
            .with_preemption({
                let mut calls = 0u64;
                move |_| {
                    calls += 1;
                    if calls == 1_000 { STALL_NS } else { 0 }
                }
            });
        let mut s = precise(contention);
        let reports: Vec<SleepReport> = (0..200)
            .map(|_| {
                let deadline = env.time() + FRAME_NS;
                s.wait_until(&mut env, deadline)
            })
            .collect();
        assert_eq!(env.preemptions(), 1);
        assert!(!s.contention().is_contended());
        assert_eq!(s.contention().spin_ceiling_ns(), None);
        reports
    };
    let adapt = run(ContentionPolicy::Adapt);
    assert_eq!(adapt, run(ContentionPolicy::Ignore));
    assert_eq!(
        adapt
            .iter()
            .filter(|r| r.preempted_while_spinning())
            .count(),
        1
    );
}

/// An oversubscribed scheduler (the lag model of `contention`'s module docs): a thread
/// that used more than [`OWED_CPU_NS`] of CPU since its previous native sleep has spent
/// what it was owed, and its next wakeup waits [`STALL_NS`] behind the busy threads;
/// otherwise it wakes [`QUICK_NS`] late.
const OWED_CPU_NS: u64 = 5_000;
const QUICK_NS: u64 = 30_000;

fn lag_model() -> impl FnMut(&SleepCall) -> NativeWake + Send + 'static {
    let mut last_cpu = 0;
    move |call| {
        let ran = call.cpu_ns - last_cpu;
        last_cpu = call.cpu_ns;
        NativeWake::Late(if ran > OWED_CPU_NS {
            STALL_NS
        } else {
            QUICK_NS
        })
    }
}

#[test]
fn on_an_oversubscribed_scheduler_a_starved_sleeper_stops_spinning() {
    let run = |contention| {
        let mut env = VirtualEnv::starting_at(1_000_000_000)
            .with_model(lag_model())
            .with_run_queue_waits();
        let mut s = precise(contention);
        let reports: Vec<SleepReport> = (0..WAITS)
            .map(|_| {
                let deadline = env.time() + FRAME_NS;
                s.wait_until(&mut env, deadline)
            })
            .collect();
        (reports, s)
    };
    let (adapt, s) = run(ContentionPolicy::Adapt);
    let (ignore, _) = run(ContentionPolicy::Ignore);
    let stalled = |reports: &[SleepReport]| {
        reports
            .iter()
            .filter(|r| r.lateness_ns >= STALL_NS - 1_000_000)
            .count() as u64
    };
    for r in adapt.iter().chain(&ignore) {
        assert!(r.woke_ns >= r.deadline_ns, "never early");
    }
    // Ignoring it, every wait after a spin is a stall (a stalled wait wakes past its
    // deadline and does not spin, so the next one is quick: every other wait).
    assert!(
        stalled(&ignore) >= WAITS as u64 / 2 - 1,
        "{}",
        stalled(&ignore)
    );
    // Adapting, each try at spinning costs the starved wakeups that detect it, then the
    // sleeper sleeps plainly for the hold: 4 per hold.
    let tries = WAITS as u64 / Contention::STARVED_HOLD + 1;
    let n = stalled(&adapt);
    assert!(
        n <= Contention::STARVED_EVENTS as u64 * tries,
        "{n} stalls in {tries} tries"
    );
    let (a, i) = (summary(&adapt), summary(&ignore));
    // Adapting, p99 is the quick wakeup's lateness; ignoring, half a stall or more.
    assert!(a.p99_ns.unwrap() <= QUICK_NS + 1_000, "adapt: {a:?}");
    assert!(i.p99_ns.unwrap() >= STALL_NS / 2, "ignore: {i:?}");
    assert!(a.cpu_percent() < i.cpu_percent());
    // The state is observable: where the run ended, whether starved or not, the
    // ceiling says so.
    assert_eq!(
        s.contention().spin_ceiling_ns() == Some(0),
        s.contention().is_starved()
    );
}

#[test]
fn late_wakeups_without_run_queue_time_are_not_starved() {
    // The same late wakeups, but the environment reports no run-queue time (a timer or
    // the host made them late): the spin goes on.
    let mut env = VirtualEnv::starting_at(1_000_000_000).with_model(lag_model());
    let mut s = precise(ContentionPolicy::Adapt);
    for _ in 0..WAITS {
        let deadline = env.time() + FRAME_NS;
        s.wait_until(&mut env, deadline);
        assert!(!s.contention().is_starved());
    }
}

#[test]
fn host_stalls_while_spinning_are_the_hosts_and_count_unless_ignored() {
    // The slice model's stalls, but the environment's run-queue time does not grow (a
    // virtual machine's host stopped the vCPU): the host's. The same stalls seen on a
    // run queue: the scheduler's.
    let run = |host_policy: HostPolicy, frozen: bool| {
        let mut env = VirtualEnv::starting_at(1_000_000_000)
            .with_oversleeps(loaded_oversleeps())
            .with_preemption(slice_model)
            .with_run_queue_waits();
        let mut s =
            Precise::new(EstimatorConfig::default(), SpinStrategy::Spin).with_tradeoff(Tradeoff {
                host: host_policy,
                ..Tradeoff::default()
            });
        for _ in 0..200 {
            let d = env.time() + FRAME_NS;
            if frozen {
                s.wait_until(&mut FrozenRunQueue(&mut env), d);
            } else {
                s.wait_until(&mut env, d);
            }
        }
        assert!(env.preemptions() >= 2, "{}", env.preemptions());
        s.contention().regime()
    };
    // Shortened to half the slice (half of what the spin had run when it lost the CPU),
    // the spin is never preempted again: contended, not stopped, by whoever took it.
    let host_events = |r: Regime| match r {
        Regime::Contended {
            ceiling_ns,
            host_events,
        } if (SLICE_RUN_NS / 2 - 1_000..=SLICE_RUN_NS / 2).contains(&ceiling_ns) => {
            Some(host_events)
        }
        _ => None,
    };
    assert_eq!(host_events(run(HostPolicy::Adapt, true)), Some(2));
    assert_eq!(host_events(run(HostPolicy::Adapt, false)), Some(0));
    assert_eq!(host_events(run(HostPolicy::Ignore, false)), Some(0));
    // Ignoring the host, its stalls change nothing.
    assert_eq!(run(HostPolicy::Ignore, true), Regime::Free);
}

/// A [`VirtualEnv`] whose run-queue time reads 0 throughout.
struct FrozenRunQueue<'a>(&'a mut VirtualEnv);

impl sleeplab::clock::Env for FrozenRunQueue<'_> {
    fn now(&mut self) -> u64 {
        self.0.now()
    }
    fn sleep_until(&mut self, deadline: u64) {
        self.0.sleep_until(deadline)
    }
    fn sleep_for(&mut self, ns: u64) {
        self.0.sleep_for(ns)
    }
    fn spin_pause(&mut self) {
        self.0.spin_pause()
    }
    fn yield_now(&mut self) {
        self.0.yield_now()
    }
    fn run_queue_ns(&mut self) -> Option<u64> {
        Some(0)
    }
}
