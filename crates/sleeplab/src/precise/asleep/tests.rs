//! The timer's ordering and waking in virtual time (a [`VirtualEnv`] with scripted
//! registrations), and its sleeps on the real clock.

use super::queue::{Shared, Slot};
use super::timer_loop::{Core, TimerEnv, Turn};
use super::*;
use crate::clock::Env;
use crate::lab::{NativeWake, VirtualEnv};
use std::collections::VecDeque;
use std::sync::Mutex;
use std::task::{Wake, Waker};

/// A registration the test makes at a virtual time, as a task would from another thread.
type Registration = (u64, Box<dyn FnOnce()>);

/// A [`VirtualEnv`] whose native sleeps are cut short by scripted registrations.
struct ScriptedEnv {
    inner: VirtualEnv,
    script: VecDeque<Registration>,
    rang: bool,
}

impl ScriptedEnv {
    /// Runs the scripted registration due at or before `until`, if any: true if it did.
    fn ring_before(&mut self, until: u64) -> bool {
        match self.script.front() {
            Some((at, _)) if *at < until => {
                let (at, register) = self.script.pop_front().expect("peeked");
                self.inner.advance(at.saturating_sub(self.inner.time()));
                register();
                self.rang = true;
                true
            }
            _ => false,
        }
    }
}

impl Env for ScriptedEnv {
    fn now(&mut self) -> u64 {
        self.inner.now()
    }
    fn sleep_until(&mut self, deadline: u64) {
        if !self.ring_before(deadline) {
            self.inner.sleep_until(deadline);
        }
    }
    fn sleep_for(&mut self, ns: u64) {
        let deadline = self.inner.time().saturating_add(ns);
        self.sleep_until(deadline);
    }
    fn spin_pause(&mut self) {
        self.inner.spin_pause();
    }
    fn yield_now(&mut self) {
        self.inner.yield_now();
    }
}

impl TimerEnv for ScriptedEnv {
    fn take_ring(&mut self) -> bool {
        std::mem::take(&mut self.rang)
    }
    fn park(&mut self) {
        assert!(self.ring_before(u64::MAX), "parked with nothing scripted");
    }
}

/// A waker that records which sleep it woke.
struct Record(usize, Arc<Mutex<Vec<usize>>>);

impl Wake for Record {
    fn wake(self: Arc<Self>) {
        self.1.lock().unwrap().push(self.0);
    }
}

/// Sleeps registered with their ids and deadlines, and the ids woken so far.
struct Harness {
    shared: Arc<Shared>,
    woken: Arc<Mutex<Vec<usize>>>,
    deadlines: Arc<Mutex<Vec<u64>>>,
}

impl Harness {
    fn new() -> Self {
        Self {
            shared: Arc::new(Shared::default()),
            woken: Arc::default(),
            deadlines: Arc::default(),
        }
    }

    /// A closure that registers a sleep to `deadline` (for scripts, or to call now).
    fn registration(&self, deadline: u64) -> impl FnOnce() + 'static {
        let (shared, woken, deadlines) = (
            Arc::clone(&self.shared),
            Arc::clone(&self.woken),
            Arc::clone(&self.deadlines),
        );
        move || {
            let id = {
                let mut d = deadlines.lock().unwrap();
                d.push(deadline);
                d.len() - 1
            };
            let slot = Arc::new(Slot::default());
            assert!(!slot.ready_or_keep(&Waker::from(Arc::new(Record(id, woken)))));
            shared.register(deadline, slot);
        }
    }

    fn core(&self, env: VirtualEnv, script: Vec<Registration>) -> Core<ScriptedEnv> {
        let env = ScriptedEnv {
            inner: env,
            script: script.into(),
            rang: false,
        };
        Core::new(PreciseSleeper::with_env(env), Arc::clone(&self.shared))
    }

    /// Turns `core` until every sleep fired and nothing is scripted; checks each wake
    /// came at or after its deadline and returns the turns.
    fn run(&self, core: &mut Core<ScriptedEnv>) -> Vec<Turn> {
        let mut turns = Vec::new();
        loop {
            let turn = core.wake_due();
            for id in self.woken.lock().unwrap().drain(..) {
                let deadline = self.deadlines.lock().unwrap()[id];
                assert!(turn.now_ns >= deadline, "sleep {id} woken early");
            }
            turns.push(turn);
            let done = self.shared.pending() == 0 && core.sleeper.env().script.is_empty();
            if done || turns.len() > 1_000_000 {
                return turns;
            }
            core.wait_for(turn.next_ns);
        }
    }

    fn fired(&self) -> u64 {
        self.shared.counts.fired.load(Ordering::Relaxed)
    }
}

/// Sleeps registered in any order are woken in deadline order, never early, each once.
#[test]
fn sleeps_are_woken_in_deadline_order_and_never_early() {
    let h = Harness::new();
    // 500 deadlines between 1 ms and 51 ms, in a shuffled order (a fixed permutation).
    let n = 500u64;
    for i in 0..n {
        let k = (i * 7919) % n;
        h.registration(1_000_000 + k * 100_000)();
    }
    let mut core = h.core(
        VirtualEnv::starting_at(0).with_oversleeps([50_000, 20_000, 90_000]),
        vec![],
    );
    let turns = h.run(&mut core);
    assert_eq!(h.fired(), n);
    let woke_at: Vec<u64> = turns
        .iter()
        .filter(|t| t.woken > 0)
        .map(|t| t.now_ns)
        .collect();
    assert!(woke_at.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(turns.iter().map(|t| t.woken as u64).sum::<u64>(), n);
}

/// Ten thousand sleeps on ten deadlines cost the timer ten precise sleeps: its native
/// sleeps and CPU do not grow with the number of tasks.
#[test]
fn many_sleeps_on_one_deadline_cost_one_sleep() {
    let cost = |tasks: u64| {
        let h = Harness::new();
        for i in 0..tasks {
            h.registration(1_000_000 * (1 + i % 10))();
        }
        let mut core = h.core(VirtualEnv::starting_at(0).with_oversleeps([30_000]), vec![]);
        let turns = h.run(&mut core);
        assert_eq!(h.fired(), tasks);
        let env = &core.sleeper.env().inner;
        (turns.len(), env.native_sleeps(), env.cpu_ns())
    };
    let (turns_10, sleeps_10, cpu_10) = cost(10);
    let (turns_10k, sleeps_10k, cpu_10k) = cost(10_000);
    assert_eq!(turns_10, turns_10k);
    assert_eq!(sleeps_10, sleeps_10k);
    assert!(sleeps_10k <= 10, "{sleeps_10k} native sleeps");
    assert_eq!(cpu_10, cpu_10k);
}

/// A sleep registered while the timer sleeps to a later deadline cuts that sleep short:
/// it is woken at its own deadline (plus what the native sleep overslept), not at the
/// later one; the later one is still woken.
#[test]
fn an_earlier_registration_interrupts_the_sleep_to_a_later_deadline() {
    let h = Harness::new();
    h.registration(100_000_000)();
    // At 10 ms, a sleep to 20 ms arrives.
    let script: Vec<Registration> = vec![(10_000_000, Box::new(h.registration(20_000_000)))];
    let mut core = h.core(VirtualEnv::starting_at(0).with_oversleeps([40_000]), script);
    let turns = h.run(&mut core);
    assert_eq!(h.fired(), 2);
    let woke: Vec<u64> = turns
        .iter()
        .filter(|t| t.woken > 0)
        .map(|t| t.now_ns)
        .collect();
    assert_eq!(woke.len(), 2);
    assert!(woke[0] >= 20_000_000 && woke[0] < 21_000_000, "{woke:?}");
    assert!(woke[1] >= 100_000_000, "{woke:?}");
    assert!(turns.iter().any(|t| t.next_ns == Some(20_000_000)));
}

/// A later registration does not disturb the sleep to an earlier deadline; with
/// nothing queued the timer parks until a registration comes.
#[test]
fn a_later_registration_waits_its_turn_and_an_empty_timer_parks() {
    let h = Harness::new();
    let script: Vec<Registration> = vec![
        (5_000_000, Box::new(h.registration(8_000_000))),
        (6_000_000, Box::new(h.registration(30_000_000))),
    ];
    let mut core = h.core(VirtualEnv::starting_at(0), script);
    let turns = h.run(&mut core);
    assert_eq!(turns[0].next_ns, None, "nothing queued: it parks");
    assert_eq!(h.fired(), 2);
}

/// Sleeps dropped before their deadline are never woken, and are not counted as fired.
#[test]
fn cancelled_sleeps_are_forgotten() {
    let h = Harness::new();
    let slots: Vec<Arc<Slot>> = (0..3).map(|_| Arc::new(Slot::default())).collect();
    for (i, s) in slots.iter().enumerate() {
        h.shared.register(1_000_000 * (i as u64 + 1), Arc::clone(s));
    }
    slots[1].cancel();
    h.shared.note_cancelled();
    let mut core = h.core(
        VirtualEnv::starting_at(0).with_script(vec![NativeWake::Late(0)]),
        vec![],
    );
    h.run(&mut core);
    assert_eq!(h.fired(), 2);
    assert!(slots[0].is_fired() && !slots[1].is_fired() && slots[2].is_fired());
}

/// Polls `f` to completion on this thread, parking between polls.
fn block_on<F: Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(&waker)) {
            return v;
        }
        std::thread::park();
    }
}

/// On the real clock: sleeps from many threads, earliest registered last, all end at
/// or after their deadline; the timer counts each sleep it was given once (a thread that
/// starts after its deadline, on a busy machine, is ready at once without the timer);
/// a sleep dropped after it registered never fires.
#[test]
fn real_sleeps_from_many_threads_are_never_early() {
    let timer = AsyncTimer::new();
    let base = monotonic_ns() + 20_000_000;
    let threads: Vec<_> = (0..16u64)
        .map(|i| {
            let timer = timer.clone();
            std::thread::spawn(move || {
                let deadline = base + (16 - i) * 300_000;
                let mut sleep = std::pin::pin!(timer.sleep_until_ns(deadline));
                block_on(sleep.as_mut());
                assert!(monotonic_ns() >= deadline);
                // Whether it was registered with the timer (its first poll came before
                // the deadline).
                sleep.slot.is_some()
            })
        })
        .collect();
    let registered = threads
        .into_iter()
        .map(|t| t.join().unwrap())
        .filter(|&r| r)
        .count() as u64;
    // A sleep registered and dropped before its deadline never fires: the sleep after
    // its deadline is the only one this adds (the dropped one's deadline is far enough
    // that a busy machine cannot let it pass between the poll and the drop).
    std::pin::pin!(timer.sleep(Duration::from_secs(1))).poll_once();
    let mut later = std::pin::pin!(timer.sleep(Duration::from_millis(3)));
    block_on(later.as_mut());
    let later_registered = u64::from(later.slot.is_some());
    // A sleep whose deadline has passed is ready at once, without the timer.
    block_on(timer.sleep_until_ns(0));
    let stats = timer.stats();
    assert!(
        registered > 0,
        "no sleep reached the timer: the test checked nothing"
    );
    assert_eq!(stats.fired, registered + later_registered);
    assert!(stats.max_late_ns >= stats.mean_late_ns);
    assert!(stats.cpu_ns > 0, "the timer thread ran");
    block_on(sleep(Duration::from_micros(200)));
}
