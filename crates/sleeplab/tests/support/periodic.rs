//! Runs of the library's periodic timers on the real clock, and the never-early check
//! their wakes must pass.

use sleeplab::clock::monotonic_ns;
use sleeplab::wait::WaitError;
use sleeplab::wait::periodic::{PeriodicTimer, Wake, reconcile};

/// One run of `ticks` deadlines of `period` on `timer`, tick by tick (`wait`) or in
/// batches (`wait_batch`); returns the grid's origin and the wakes. A mechanism with
/// estimated counts may end its run once its deadlines have passed.
pub fn run_periodic(
    timer: &mut PeriodicTimer,
    period: u64,
    ticks: u64,
    batches: bool,
) -> (u64, Vec<Wake>) {
    let name = timer.mechanism().name;
    let before = monotonic_ns();
    let t0 = timer
        .arm(period, ticks)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .t0_ns;
    assert!(t0 >= before, "{name}: origin before arming");
    let mut wakes = Vec::new();
    let exact = timer.mechanism().exact_counts;
    let last = t0 + ticks * period;
    loop {
        // As in the timers experiment: estimated counts cannot say when the run is over;
        // the last wake's time can.
        let over = if exact {
            timer.grid().unwrap().covered() >= ticks
        } else {
            wakes.last().is_some_and(|w: &Wake| w.wake_ns >= last)
        };
        if over {
            break;
        }
        let got = if batches {
            timer.wait_batch(&mut wakes)
        } else {
            timer.wait().map(|e| {
                assert!(
                    e.deadline_ns > t0 && (e.deadline_ns - t0) % period == 0,
                    "{name}: {e:?}"
                );
                wakes.push(Wake {
                    wake_ns: e.wake_ns,
                    expirations: e.expirations,
                });
            })
        };
        match got {
            Ok(()) => {}
            Err(WaitError::Ended) if !exact => break,
            Err(e) => panic!("{name}: {e}"),
        }
    }
    timer.disarm();
    (t0, wakes)
}

/// The wakes that came before their own deadline (after `reconcile` where the counts are
/// estimates), as (wake index, ns early).
pub fn early_wakes(exact: bool, t0: u64, period: u64, wakes: &mut [Wake]) -> Vec<(usize, u64)> {
    if !exact {
        wakes.sort_by_key(|w| w.wake_ns);
        reconcile(t0, period, wakes);
    }
    let mut covered = 0u64;
    let mut early = Vec::new();
    for (i, w) in wakes.iter().enumerate() {
        covered += w.expirations.max(1);
        let deadline = t0 + covered * period;
        if w.wake_ns < deadline {
            early.push((i, deadline - w.wake_ns));
        }
    }
    early
}
