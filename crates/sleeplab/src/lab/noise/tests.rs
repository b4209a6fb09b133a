//! The noise probe on scripted clocks, a virtual environment and the real machine.

use super::*;

/// A clock that advances `step` per read, with `extra` added after the given reads
/// (counted from 1), of which `queued` is spent on the run queue.
struct Scripted {
    t: u64,
    k: u64,
    step: u64,
    extra: Vec<(u64, u64)>,
    queued: Option<u64>,
    queue: u64,
}

fn scripted(step: u64, extra: Vec<(u64, u64)>) -> Scripted {
    Scripted {
        t: 1_000,
        k: 0,
        step,
        extra,
        queued: None,
        queue: 0,
    }
}

impl Env for Scripted {
    fn now(&mut self) -> u64 {
        let now = self.t;
        self.k += 1;
        let extra = self
            .extra
            .iter()
            .find(|(at, _)| *at == self.k)
            .map_or(0, |e| e.1);
        self.queue += self.queued.map_or(0, |q| q.min(extra));
        self.t += self.step + extra;
        now
    }
    fn sleep_until(&mut self, deadline: u64) {
        self.t = self.t.max(deadline);
    }
    fn sleep_for(&mut self, ns: u64) {
        self.t += ns;
    }
    fn spin_pause(&mut self) {}
    fn yield_now(&mut self) {}
    fn run_queue_ns(&mut self) -> Option<u64> {
        self.queued.map(|_| self.queue)
    }
}

#[test]
fn gaps_at_or_above_the_threshold_are_counted_summed_and_kept() {
    // 100 ns a read for 1 ms; after reads 10, 20, 30 the thread loses 5, 20, 4.9 µs.
    let mut clock = scripted(100, vec![(10, 4_900), (20, 19_900), (30, 4_800)]);
    let n = probe_env(&mut clock, &NoiseConfig::for_ns(1_000_000));
    assert_eq!(n.gaps, 2, "4.9 µs is below the 5 µs threshold");
    assert_eq!(n.kept_ns, vec![5_000, 20_000]);
    assert_eq!((n.lost_ns, n.max_gap_ns), (25_000, 20_000));
    assert!(n.wall_ns >= 1_000_000 && n.wall_ns < 1_000_100);
    assert!((n.lost_share() - 0.025).abs() < 1e-4);
    assert!((n.gaps_per_second() - 2_000.0).abs() < 1.0);
    assert_eq!(n.gap_quantile(0.5), Some(12_500));
    assert_eq!(n.gap_quantile(0.9), None, "two gaps cannot give a p90");
    assert_eq!(n.off_run_queue_ns(), None);
    // 1 ms of reads 100 ns apart, 29.7 µs of them in the three stalls.
    let expected = n.wall_ns as f64 / (n.reads - 1) as f64;
    assert!((n.mean_read_ns() - expected).abs() < 1e-9);
    assert!((100.0..104.0).contains(&n.mean_read_ns()));
}

#[test]
fn quantiles_need_enough_gaps_and_every_gap_kept() {
    let config = NoiseConfig {
        duration_ns: 10_000_000,
        threshold_ns: 1_000,
        max_kept: 1_000,
    };
    // 100 gaps of 1..=100 µs (plus the 10 ns read).
    let extra = (1..=100).map(|i| (i * 10, i * 1_000)).collect();
    let n = probe_env(&mut scripted(10, extra), &config);
    assert_eq!(n.gaps, 100);
    assert_eq!(n.gap_quantile(0.99), Some(99_020));
    assert_eq!(n.gap_quantile(0.999), None);
    assert_eq!(n.max_gap_ns, 100_010);
    // The same probe keeping only 50: counted, but no quantile.
    let extra = (1..=100).map(|i| (i * 10, i * 1_000)).collect();
    let few = probe_env(
        &mut scripted(10, extra),
        &NoiseConfig {
            max_kept: 50,
            ..config
        },
    );
    assert_eq!((few.gaps, few.kept_ns.len()), (100, 50));
    assert_eq!(few.lost_ns, n.lost_ns);
    assert_eq!(few.gap_quantile(0.5), None);
}

#[test]
fn each_gaps_run_queue_time_tells_the_machines_own_tasks_from_the_rest() {
    // Gaps of 10, 20 and 30 µs, 15 µs of each on the run queue: the first two were
    // mostly the machine's own tasks, the third was not.
    let mut clock = scripted(100, vec![(10, 10_000), (20, 20_000), (30, 30_000)]);
    clock.queued = Some(15_000);
    let n = probe_env(&mut clock, &NoiseConfig::for_ns(1_000_000));
    assert_eq!(n.gaps, 3);
    assert_eq!(n.kept_queued_ns, vec![10_000, 15_000, 15_000]);
    assert_eq!(n.run_queue_ns, Some(40_000));
    let off = n.off_run_queue().unwrap();
    assert_eq!((off.gaps, off.lost_ns, off.max_gap_ns), (1, 30_100, 30_100));
    assert_eq!(off.wall_ns, n.wall_ns);
    assert_eq!(off.run_queue_ns, Some(15_000));
    // Reading the run queue after a gap is the probe's own time: not probed.
    assert!(n.wall_ns < 1_000_000 + 200, "{}", n.wall_ns);
    // Without gaps, nothing is left out.
    let mut quiet = scripted(100, vec![]);
    quiet.queued = Some(0);
    let n = probe_env(&mut quiet, &NoiseConfig::for_ns(1_000));
    assert_eq!(n.run_queue_ns, Some(0));
    assert_eq!(n.off_run_queue(), Some(n.clone()));
}

#[test]
fn a_clock_that_steps_back_loses_nothing_and_run_queue_time_is_subtracted() {
    let mut r = GapRecorder::new(&NoiseConfig::default(), 10_000);
    r.read(9_000);
    r.read(10_010);
    assert_eq!(r.last_ns(), 10_010);
    let n = r.finish(Some(1));
    assert_eq!((n.gaps, n.wall_ns, n.reads, n.cpu), (0, 10, 3, Some(1)));
    assert_eq!(n.off_run_queue(), None, "no run-queue readings");
    let n = Noise {
        lost_ns: 10_000,
        run_queue_ns: Some(3_000),
        ..Noise::default()
    };
    assert_eq!(n.off_run_queue_ns(), Some(7_000));
    assert_eq!(Noise::default().lost_share(), 0.0);
    assert_eq!(Noise::default().gaps_per_second(), 0.0);
}

#[test]
fn spins_after_sleeps_keep_when_each_gap_began() {
    use crate::lab::{VirtualCosts, VirtualEnv};
    // Reads 100 ns apart; once a spin has run 500 ns the thread loses 200 µs, which
    // ends the 100 µs spin: one gap per frame.
    let mut env = VirtualEnv::starting_at(0)
        .with_costs(VirtualCosts {
            clock_read_ns: 10,
            spin_pause_ns: 90,
            yield_ns: 90,
            sleep_cpu_ns: 0,
        })
        .with_preemption(|run| {
            if (500..600).contains(&run) {
                200_000
            } else {
                0
            }
        });
    let n = probe_after_sleeps_env(&mut env, &NoiseConfig::default(), 1_000_000, 100_000, 5);
    assert_eq!(n.gaps, 5);
    assert!(
        n.kept_ns.iter().all(|&g| (200_000..200_200).contains(&g)),
        "{n:?}"
    );
    assert!(
        n.kept_at_ns.iter().all(|&at| (400..=600).contains(&at)),
        "{n:?}"
    );
    // Five spins, each about 500 ns of reads and the gap.
    assert!(
        (1_000_000..=1_004_000).contains(&n.wall_ns),
        "{}",
        n.wall_ns
    );
    assert!(n.lost_share() > 0.99);
}

#[test]
fn the_source_is_named_by_the_hypervisor() {
    assert_eq!(NoiseSource::from_hypervisor(Some("kvm")), NoiseSource::Host);
    assert_eq!(NoiseSource::from_hypervisor(None).name(), "hardware");
    assert_eq!(NoiseSource::Host.name(), "host");
}

#[test]
fn a_real_probe_on_each_cpu_reads_the_clock() {
    let config = NoiseConfig::for_ns(2_000_000);
    let all = probe_cpus(&[0], &config, ProbeKind::Spin, Schedule::AtOnce).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].cpu, Some(0));
    // The probed time leaves out the run-queue reads after gaps.
    assert!(all[0].reads > 10 && all[0].wall_ns > 1_000_000);
    assert!(all[0].lost_ns <= all[0].wall_ns);
    let many = usize::MAX / 2;
    assert!(matches!(
        probe_cpus(&[many], &config, ProbeKind::Spin, Schedule::InTurn),
        Err(NoiseError::Pin { .. })
    ));
}
