//! A virtual-time [`Env`] for tests and the simulator: the clock only moves when the
//! algorithm under test reads it, spins, yields or sleeps, so the *same* production code
//! runs deterministically and instantly.
//!
//! * A native sleep advances the clock to its target plus an injected oversleep
//!   ([`NativeWake::Late`]), or returns early as if a signal interrupted it
//!   ([`NativeWake::Interrupted`]). The wake comes from a scripted sequence (cycled) or a
//!   closure that sees each [`SleepCall`]. A sleep whose target has already passed
//!   returns at once without consulting the model (the kernel does not arm a timer).
//! * [`now`](Env::now), [`spin_pause`](Env::spin_pause) and
//!   [`yield_now`](Env::yield_now) advance the clock by fixed [`VirtualCosts`] and count
//!   that time as CPU, so spin loops terminate and their CPU cost is measurable;
//!   each native sleep adds [`VirtualCosts::sleep_cpu_ns`] of CPU (not of time).
//! * [`advance`](VirtualEnv::advance) injects a stall: time passes, no CPU is used.
//! * A preemption model ([`with_preemption`](VirtualEnv::with_preemption)) is asked at
//!   every spin-loop pause and yield how long the thread loses its CPU, given how long it
//!   has run since its last native wakeup: a loaded machine's scheduler, where a waiter
//!   that spins too long waits a whole slice behind a busy thread. With
//!   [`with_preemption_at`](VirtualEnv::with_preemption_at) the model also sees the time
//!   and the run since the wakeup across preemptions ([`Running`]): a virtual machine's
//!   host, which interrupts a running vCPU and may deschedule one that has run long
//!   since it woke from a halt.

use crate::clock::Env;
use crate::precise::PreciseSleeper;

/// How one virtual native sleep ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeWake {
    /// Returns this many ns after its target (0 = exactly on time).
    Late(u64),
    /// Returns this many ns (at least 1) after the call began, as if a signal interrupted
    /// it; a return that would not be before the target is an on-time return instead.
    Interrupted(u64),
}

/// What the wake model is told about a native sleep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SleepCall {
    /// 0-based number of this native sleep (past-target calls are not counted).
    pub index: u64,
    /// Virtual time when the sleep began, ns.
    pub now: u64,
    /// The time the sleep asks to wake at, ns.
    pub target: u64,
    /// `true` for [`Env::sleep_until`], `false` for [`Env::sleep_for`].
    pub absolute: bool,
    /// CPU the thread has used so far, ns (for models where what a thread ran decides
    /// how soon the scheduler runs it again).
    pub cpu_ns: u64,
}

/// Fixed costs of the virtual environment's operations, ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VirtualCosts {
    /// Time (and CPU) per clock read (default 20 ns).
    pub clock_read_ns: u64,
    /// Time (and CPU) per spin-loop pause (default 30 ns; at least 1).
    pub spin_pause_ns: u64,
    /// Time (and CPU) per `sched_yield` (default 300 ns; at least 1).
    pub yield_ns: u64,
    /// CPU (not time) per native sleep call: entering and leaving the kernel (default 1 µs).
    pub sleep_cpu_ns: u64,
}

impl VirtualCosts {
    /// Free clock reads and native calls, 1 ns per spin iteration and yield: a wait ends
    /// at most 1 ns after the instant it spins to, so tests can assert exact instants.
    pub const EXACT: Self = Self {
        clock_read_ns: 0,
        spin_pause_ns: 1,
        yield_ns: 1,
        sleep_cpu_ns: 0,
    };
}

impl Default for VirtualCosts {
    fn default() -> Self {
        Self {
            clock_read_ns: 20,
            spin_pause_ns: 30,
            yield_ns: 300,
            sleep_cpu_ns: 1_000,
        }
    }
}

type NativeWakeFn = Box<dyn FnMut(&SleepCall) -> NativeWake + Send>;
type PreemptFn = Box<dyn FnMut(&Running) -> u64 + Send>;

/// What a preemption model ([`VirtualEnv::with_preemption_at`]) is told at each spin-loop
/// pause and yield.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Running {
    /// The virtual time, ns.
    pub now: u64,
    /// How long the thread has run since its last native wakeup or preemption, ns (what
    /// [`VirtualEnv::with_preemption`]'s model gets).
    pub run_ns: u64,
    /// How long it has run since its last native wakeup, ns, preemptions left out: what
    /// a host's scheduler charged a vCPU that woke from a halt.
    pub since_wake_ns: u64,
    /// When that wakeup was (virtual time, ns): a new value is a new run.
    pub woke_at: u64,
}

enum Model {
    Exact,
    Script { seq: Vec<NativeWake>, pos: usize },
    Func(NativeWakeFn),
}

/// A virtual clock and native sleep: the clock moves only when the code under test reads
/// it, spins, yields or sleeps; native sleeps wake as scripted or modelled
/// ([`NativeWake`]), spins may be preempted, and CPU is accounted.
pub struct VirtualEnv {
    now: u64,
    cpu_ns: u64,
    costs: VirtualCosts,
    model: Model,
    preempt: Option<PreemptFn>,
    /// When the thread last started running (its last native wakeup or preemption).
    run_start: u64,
    /// Its last native wakeup.
    wake_at: u64,
    /// Time lost to preemptions since then.
    lost_since_wake: u64,
    preemptions: u64,
    native_sleeps: u64,
    interruptions: u64,
    clock_reads: u64,
    spin_pauses: u64,
    yields: u64,
    /// Time spent on a run queue so far, ns; `None` unless a model accounts for it.
    run_queue_ns: Option<u64>,
    /// Whether late wakeups and preemptions add to it.
    queue_grows: bool,
}

impl std::fmt::Debug for VirtualEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let model = match &self.model {
            Model::Exact => "exact",
            Model::Script { .. } => "script",
            Model::Func(_) => "closure",
        };
        f.debug_struct("VirtualEnv")
            .field("now", &self.now)
            .field("cpu_ns", &self.cpu_ns)
            .field("costs", &self.costs)
            .field("model", &model)
            .field("native_sleeps", &self.native_sleeps)
            .field("interruptions", &self.interruptions)
            .finish_non_exhaustive()
    }
}

impl Default for VirtualEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl VirtualEnv {
    /// A virtual environment at time 0 whose native sleeps wake exactly on time.
    pub fn new() -> Self {
        Self::starting_at(0)
    }

    /// A virtual environment starting at `now_ns`.
    pub fn starting_at(now_ns: u64) -> Self {
        Self {
            now: now_ns,
            cpu_ns: 0,
            costs: VirtualCosts::default(),
            model: Model::Exact,
            preempt: None,
            run_start: now_ns,
            wake_at: now_ns,
            lost_since_wake: 0,
            preemptions: 0,
            native_sleeps: 0,
            interruptions: 0,
            clock_reads: 0,
            spin_pauses: 0,
            yields: 0,
            run_queue_ns: None,
            queue_grows: false,
        }
    }

    /// Every native wakeup's lateness and every preemption is time spent on a run queue
    /// (a scheduler, not a timer or a host, made it late), reported by
    /// [`Env::run_queue_ns`]; without this the environment reports no run-queue time, as
    /// a kernel without schedstat.
    pub fn with_run_queue_waits(mut self) -> Self {
        self.run_queue_ns = Some(0);
        self.queue_grows = true;
        self
    }

    /// The environment reports run-queue time ([`Env::run_queue_ns`]) that never grows:
    /// no late wakeup or preemption is the scheduler's, every one is a timer's or the
    /// host's (a virtual machine's guest with nothing else to run).
    pub fn with_empty_run_queue(mut self) -> Self {
        self.run_queue_ns = Some(0);
        self.queue_grows = false;
        self
    }

    /// Native sleeps wake according to `script`, cycled (an empty script means on time).
    pub fn with_script(mut self, script: Vec<NativeWake>) -> Self {
        self.model = if script.is_empty() {
            Model::Exact
        } else {
            Model::Script {
                seq: script,
                pos: 0,
            }
        };
        self
    }

    /// Native sleeps oversleep by these amounts in turn (cycled), ns.
    pub fn with_oversleeps(self, oversleeps: impl IntoIterator<Item = u64>) -> Self {
        self.with_script(oversleeps.into_iter().map(NativeWake::Late).collect())
    }

    /// Native sleeps wake as `model` decides for each call.
    pub fn with_model(
        mut self,
        model: impl FnMut(&SleepCall) -> NativeWake + Send + 'static,
    ) -> Self {
        self.model = Model::Func(Box::new(model));
        self
    }

    /// At every spin-loop pause and yield, `model` gets the ns the thread has run since
    /// its last native wakeup (or its last preemption) and returns how long it now loses
    /// its CPU, ns (0: not preempted). Lost time passes without CPU use.
    pub fn with_preemption(self, mut model: impl FnMut(u64) -> u64 + Send + 'static) -> Self {
        self.with_preemption_at(move |r: &Running| model(r.run_ns))
    }

    /// [`with_preemption`](Self::with_preemption) with a model that also sees the time
    /// and the thread's run since its last native wakeup ([`Running`]): a host that
    /// charges a vCPU from its wake, a model that changes over time.
    pub fn with_preemption_at(
        mut self,
        model: impl FnMut(&Running) -> u64 + Send + 'static,
    ) -> Self {
        self.preempt = Some(Box::new(model));
        self
    }

    /// Preemptions the model decided so far.
    pub fn preemptions(&self) -> u64 {
        self.preemptions
    }

    /// Replaces the operation costs (spin and yield costs are raised to at least 1 ns).
    pub fn with_costs(mut self, costs: VirtualCosts) -> Self {
        self.costs = VirtualCosts {
            spin_pause_ns: costs.spin_pause_ns.max(1),
            yield_ns: costs.yield_ns.max(1),
            ..costs
        };
        self
    }

    /// The operation costs in force.
    pub fn costs(&self) -> VirtualCosts {
        self.costs
    }

    /// The virtual time, ns, read without cost.
    pub fn time(&self) -> u64 {
        self.now
    }

    /// Lets `ns` of virtual time pass without using CPU (a stall, or work elsewhere).
    pub fn advance(&mut self, ns: u64) {
        self.now = self.now.saturating_add(ns);
    }

    /// Adds `ns` of CPU use and the same time (work done by the caller).
    pub fn work(&mut self, ns: u64) {
        self.now = self.now.saturating_add(ns);
        self.cpu_ns = self.cpu_ns.saturating_add(ns);
    }

    /// Virtual CPU time used so far, ns.
    pub fn cpu_ns(&self) -> u64 {
        self.cpu_ns
    }

    /// Native sleeps whose target was still ahead (the ones the model decided).
    pub fn native_sleeps(&self) -> u64 {
        self.native_sleeps
    }

    /// Native sleeps that returned early ([`NativeWake::Interrupted`]).
    pub fn interruptions(&self) -> u64 {
        self.interruptions
    }

    /// Clock reads so far.
    pub fn clock_reads(&self) -> u64 {
        self.clock_reads
    }

    /// Spin-loop pauses so far.
    pub fn spin_pauses(&self) -> u64 {
        self.spin_pauses
    }

    /// `sched_yield` calls so far.
    pub fn yields(&self) -> u64 {
        self.yields
    }

    fn busy(&mut self, ns: u64) {
        self.now = self.now.saturating_add(ns);
        self.cpu_ns = self.cpu_ns.saturating_add(ns);
    }

    /// Asks the preemption model whether the running thread loses its CPU now.
    fn maybe_preempt(&mut self) {
        let Some(f) = self.preempt.as_mut() else {
            return;
        };
        let running = Running {
            now: self.now,
            run_ns: self.now.saturating_sub(self.run_start),
            since_wake_ns: self
                .now
                .saturating_sub(self.wake_at)
                .saturating_sub(self.lost_since_wake),
            woke_at: self.wake_at,
        };
        let lost = f(&running);
        if lost > 0 {
            self.preemptions = self.preemptions.saturating_add(1);
            self.now = self.now.saturating_add(lost);
            self.lost_since_wake = self.lost_since_wake.saturating_add(lost);
            self.run_start = self.now;
            if self.queue_grows {
                self.run_queue_ns = self.run_queue_ns.map(|q| q.saturating_add(lost));
            }
        }
    }

    fn native_sleep(&mut self, target: u64, absolute: bool) {
        self.cpu_ns = self.cpu_ns.saturating_add(self.costs.sleep_cpu_ns);
        if target <= self.now {
            return;
        }
        let call = SleepCall {
            index: self.native_sleeps,
            now: self.now,
            target,
            absolute,
            cpu_ns: self.cpu_ns,
        };
        self.native_sleeps = self.native_sleeps.saturating_add(1);
        let wake = match &mut self.model {
            Model::Exact => NativeWake::Late(0),
            Model::Script { seq, pos } => {
                let w = seq[*pos % seq.len()];
                *pos = (*pos + 1) % seq.len();
                w
            }
            Model::Func(f) => f(&call),
        };
        match wake {
            NativeWake::Late(ns) => {
                self.now = target.saturating_add(ns);
                if self.queue_grows {
                    self.run_queue_ns = self.run_queue_ns.map(|q| q.saturating_add(ns));
                }
            }
            NativeWake::Interrupted(after) => {
                let t = self.now.saturating_add(after.max(1));
                if t < target {
                    self.interruptions = self.interruptions.saturating_add(1);
                    self.now = t;
                } else {
                    self.now = target;
                }
            }
        }
        // The thread runs again from its wakeup.
        self.run_start = self.now;
        self.wake_at = self.now;
        self.lost_since_wake = 0;
    }
}

impl PreciseSleeper<VirtualEnv> {
    /// A sleeper over a [`VirtualEnv`] with default parameters; leaves the timer slack
    /// alone. Same as [`with_env`](PreciseSleeper::with_env).
    pub fn new_virtual(env: VirtualEnv) -> Self {
        Self::with_env(env)
    }
}

impl Env for VirtualEnv {
    fn now(&mut self) -> u64 {
        self.clock_reads = self.clock_reads.saturating_add(1);
        self.busy(self.costs.clock_read_ns);
        self.now
    }

    fn sleep_until(&mut self, deadline: u64) {
        self.native_sleep(deadline, true);
    }

    fn sleep_for(&mut self, ns: u64) {
        let target = self.now.saturating_add(ns);
        self.native_sleep(target, false);
    }

    fn spin_pause(&mut self) {
        self.spin_pauses = self.spin_pauses.saturating_add(1);
        self.busy(self.costs.spin_pause_ns.max(1));
        self.maybe_preempt();
    }

    fn yield_now(&mut self) {
        self.yields = self.yields.saturating_add(1);
        self.busy(self.costs.yield_ns.max(1));
        self.maybe_preempt();
    }

    fn run_queue_ns(&mut self) -> Option<u64> {
        self.run_queue_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_follow_the_script_and_costs_are_cpu() {
        let mut env = VirtualEnv::starting_at(1_000)
            .with_script(vec![NativeWake::Late(5), NativeWake::Interrupted(10)])
            .with_costs(VirtualCosts {
                clock_read_ns: 1,
                spin_pause_ns: 0,
                yield_ns: 0,
                sleep_cpu_ns: 0,
            });
        env.sleep_until(2_000);
        assert_eq!(env.time(), 2_005);
        env.sleep_for(100);
        assert_eq!(env.time(), 2_015);
        assert_eq!(env.interruptions(), 1);
        env.sleep_until(10); // past: no model call
        assert_eq!(env.native_sleeps(), 2);
        env.spin_pause(); // cost raised to 1
        env.yield_now();
        assert_eq!(env.now(), 2_018);
        assert_eq!(env.cpu_ns(), 3);
        env.advance(u64::MAX);
        assert_eq!(env.time(), u64::MAX);
        env.sleep_for(u64::MAX); // target saturates to now: returns at once
        assert_eq!(env.time(), u64::MAX);
    }

    /// 50 ns per spin pause and per yield, nothing else: the run since a wake counts
    /// in steps of 50.
    const PAUSE_AND_YIELD_50: VirtualCosts = VirtualCosts {
        clock_read_ns: 0,
        spin_pause_ns: 50,
        yield_ns: 50,
        sleep_cpu_ns: 0,
    };

    #[test]
    fn a_preemption_model_sees_the_run_since_the_wakeup_and_costs_no_cpu() {
        // Loses 1 ms once the thread has run 100 ns since it last got its CPU.
        let mut env = VirtualEnv::new()
            .with_costs(PAUSE_AND_YIELD_50)
            .with_preemption(|run| if run >= 100 { 1_000_000 } else { 0 });
        env.sleep_until(1_000);
        env.spin_pause(); // ran 50
        assert_eq!((env.time(), env.preemptions()), (1_050, 0));
        env.yield_now(); // ran 100: preempted
        assert_eq!((env.time(), env.preemptions()), (1_001_100, 1));
        env.spin_pause(); // ran 50 since the preemption
        assert_eq!(env.preemptions(), 1);
        assert_eq!(env.cpu_ns(), 150);
        env.sleep_until(2_000_000); // a wakeup restarts the run
        env.spin_pause();
        assert_eq!(env.preemptions(), 1);
    }

    #[test]
    fn a_model_at_sees_the_time_and_the_run_since_the_wake() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = std::sync::Arc::clone(&seen);
        let mut env = VirtualEnv::new()
            .with_costs(PAUSE_AND_YIELD_50)
            .with_preemption_at(move |r: &Running| {
                log.lock().unwrap().push(*r);
                if r.run_ns == 100 { 1_000 } else { 0 }
            });
        env.sleep_until(1_000);
        for _ in 0..3 {
            env.spin_pause();
        }
        env.sleep_until(5_000);
        env.spin_pause();
        let seen = seen.lock().unwrap();
        let at = |now, run_ns, since_wake_ns, woke_at| Running {
            now,
            run_ns,
            since_wake_ns,
            woke_at,
        };
        // The preemption after 100 ns restarts the run, not the run since the wake; a
        // native wakeup restarts both.
        assert_eq!(
            *seen,
            [
                at(1_050, 50, 50, 1_000),
                at(1_100, 100, 100, 1_000),
                at(2_150, 50, 150, 1_000),
                at(5_050, 50, 50, 5_000)
            ]
        );
    }

    #[test]
    fn an_empty_run_queue_is_read_but_never_grows() {
        let mut env = VirtualEnv::new()
            .with_oversleeps([5_000])
            .with_preemption(|run| if run >= 100 { 1_000 } else { 0 })
            .with_empty_run_queue();
        env.sleep_until(1_000);
        for _ in 0..10 {
            env.spin_pause();
        }
        assert!(env.preemptions() > 0);
        assert_eq!(env.run_queue_ns(), Some(0));
        let mut counted = VirtualEnv::new()
            .with_oversleeps([5_000])
            .with_run_queue_waits();
        counted.sleep_until(1_000);
        assert_eq!(counted.run_queue_ns(), Some(5_000));
    }

    #[test]
    fn closure_model_sees_each_call() {
        let mut env = VirtualEnv::new().with_model(|c: &SleepCall| NativeWake::Late(c.index * 10));
        env.sleep_until(100);
        env.sleep_until(200);
        assert_eq!(env.time(), 210);
    }
}
