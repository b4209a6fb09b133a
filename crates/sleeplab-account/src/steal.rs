//! The steal time the guest kernel accounted during a traced run (`/proc/stat`, per
//! CPU, before and after), set beside the sum of the wakes' shares with no guest event
//! ([`Component::NO_GUEST_EVENT`]: an idle CPU's timer delivery, a spin's gaps), and
//! the one sentence saying when the two disagree.
//!
//! They measure different things and need not agree: steal counts, in the kernel's
//! ticks (10 ms at `USER_HZ` 100), the time a vCPU was runnable while the host ran
//! something else, over the whole run and every task on the CPU; those components
//! count, per wake, the stretches of its late part in which the guest recorded nothing
//! of its own, an idle CPU's interrupt delivery included (which is no steal). The sentence says which way
//! they differ so that a reader does not take one for the other.
//!
//! [`Component::NO_GUEST_EVENT`]: super::Component::NO_GUEST_EVENT

use super::analysis::component::Machine;
use super::{Component, Explanation};
use sleeplab::system::{ProcStat, tick_ns};
use sleeplab_stats::{Basis, Ci, Claim, Est, Order, Sentence, Stat, fmt_ns};

/// The share by which the two may differ before the sentence speaks.
pub const DISAGREE: f64 = 0.20;

/// Every CPU's steal time now, ns (`/proc/stat`'s `cpuN` lines, in `USER_HZ` ticks);
/// `None` where it cannot be read.
pub fn read_steal_ns() -> Option<Vec<(u32, u64)>> {
    steal_ns(&ProcStat::read()?, tick_ns())
}

/// The per-CPU steal of a `/proc/stat` reading, ns (`tick_ns` a tick); `None` without
/// per-CPU lines.
pub fn steal_ns(stat: &ProcStat, tick_ns: u64) -> Option<Vec<(u32, u64)>> {
    let cpus: Vec<(u32, u64)> = stat
        .cpus
        .iter()
        .map(|(cpu, t)| (*cpu, t.steal.saturating_mul(tick_ns)))
        .collect();
    (!cpus.is_empty()).then_some(cpus)
}

/// The steal over a run: per CPU `after − before`, summed over `cpus` (the CPUs the
/// followed threads ran on; every CPU where empty: a CPU the wakes never ran on holds
/// no part of their host share).
pub fn steal_between(before: &[(u32, u64)], after: &[(u32, u64)], cpus: &[u32]) -> u64 {
    after
        .iter()
        .filter(|(cpu, _)| cpus.is_empty() || cpus.contains(cpu))
        .map(|&(cpu, a)| {
            let b = before.iter().find(|x| x.0 == cpu).map_or(a, |x| x.1);
            a.saturating_sub(b)
        })
        .sum()
}

/// Whether `steal_ns` and `host_ns` disagree: they differ by more than [`DISAGREE`] of
/// the larger and by more than one tick of steal's resolution (`tick_ns`).
pub fn disagree(steal_ns: u64, host_ns: u64, tick_ns: u64) -> bool {
    let diff = steal_ns.abs_diff(host_ns);
    diff > tick_ns && diff as f64 > DISAGREE * steal_ns.max(host_ns) as f64
}

/// The band around `steal_ns` within which a host share agrees with it: ± the larger
/// of one tick and [`DISAGREE`] of the larger of the two (an interval of the counter's
/// resolution and a stated tolerance, not of a sample: [`Est`] on the exact basis).
fn agreement_band(steal_ns: u64, host_ns: u64, tick_ns: u64) -> Est {
    let m = (tick_ns as f64).max(DISAGREE * steal_ns.max(host_ns) as f64);
    let v = steal_ns as f64;
    Est {
        value: v,
        ci: Some(Ci(Some(v - m), Some(v + m))),
        basis: Basis::Exact,
    }
}

/// The sentence on a run whose guest kernel accounted `steal_ns` of steal while its
/// wakes' host component summed to `host_ns` (its word for whoever took the CPU from
/// the result's `machine`): `None` where they agree (`disagree`). Where the host
/// share is only a lower bound (`complete` false: some cell's share was not told), it
/// speaks only when that bound already exceeds steal. Its claims: the threshold and the
/// tick it applies, and the order of the host share against steal's agreement band.
pub fn steal_sentence(
    steal_ns: u64,
    host_ns: u64,
    complete: bool,
    tick_ns: u64,
    machine: Machine,
) -> Option<Sentence> {
    if !disagree(steal_ns, host_ns, tick_ns) || (!complete && host_ns < steal_ns) {
        return None;
    }
    let who = machine.name();
    let above = host_ns > steal_ns;
    let why = if above {
        "the component also counts a halted CPU's interrupt delivery, which is no steal"
    } else {
        "steal also counts time outside the wakes' late parts and other tasks' time"
    };
    let threshold = format!("{:.0} %", DISAGREE * 100.0);
    let tick = fmt_ns(tick_ns);
    let mut s = Sentence::default();
    s.claim(Claim::Threshold {
        shown: threshold.clone(),
    })
    .claim(Claim::Threshold {
        shown: tick.clone(),
    })
    .claim(Claim::Verdict {
        stat: Stat::Mean,
        a: Est::exact(host_ns as f64),
        b: agreement_band(steal_ns, host_ns, tick_ns),
        stated: if above { Order::Above } else { Order::Below },
    });
    s.push(&format!(
        "the wakes' {who} component ({}{}) is {} the steal the guest kernel accounted \
         ({}, in {tick} ticks, on the CPUs the wakes ran on) by more than {threshold} and a tick: {why}.",
        fmt_ns(host_ns),
        if complete {
            ""
        } else {
            " at least: some cells' share not told"
        },
        if above { "above" } else { "below" },
        fmt_ns(steal_ns),
    ));
    Some(s)
}

/// The steal sentence of a traced run: the steal it accounted (`steal_ns`, its
/// `Tracing::steal_ns`) beside the sum of its cells' host share (each cell's mean × its
/// wakes); `None` where steal was not read, no cell told its host share, or they agree
/// ([`steal_sentence`]).
pub fn steal_note<'a>(
    steal_ns: Option<u64>,
    cells: impl IntoIterator<Item = &'a Explanation>,
    machine: Machine,
) -> Option<Sentence> {
    let steal_ns = steal_ns?;
    let (mut host_ns, mut told, mut complete) = (0.0, false, true);
    for x in cells.into_iter().filter(|x| x.wakes > 0) {
        let shares: Vec<_> = Component::NO_GUEST_EVENT
            .iter()
            .filter_map(|&c| x.component(c))
            .collect();
        match shares.is_empty() {
            false => {
                host_ns += shares.iter().map(|h| h.mean_ns).sum::<f64>() * x.wakes as f64;
                told = true;
                complete &= x.host_complete;
            }
            true => complete = false,
        }
    }
    if !told {
        return None;
    }
    steal_sentence(
        steal_ns,
        host_ns.round() as u64,
        complete,
        tick_ns(),
        machine,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn proc_stat_steal_per_cpu() {
        let text = "cpu  10 0 5 100 0 0 0 7 0 0\n\
                    cpu0 5 0 2 50 0 0 0 3 0 0\n\
                    cpu1 5 0 3 50 0 0 0 4 0 0\nintr 1 2\n";
        let s = steal_ns(&ProcStat::parse(text).unwrap(), 10_000_000).unwrap();
        assert_eq!(s, vec![(0, 30_000_000), (1, 40_000_000)]);
        let no_cpus = ProcStat::parse("cpu  1 2 3 4\nintr 1\n").unwrap();
        assert_eq!(steal_ns(&no_cpus, 1), None);
        let after = [(0, 50_000_000), (1, 40_000_000)];
        assert_eq!(steal_between(&s, &after, &[]), 20_000_000);
        // Only the CPUs the wakes ran on.
        let after = [(0, 30_000_000), (1, 90_000_000)];
        assert_eq!(steal_between(&s, &after, &[0]), 0);
        assert_eq!(steal_between(&s, &after, &[1]), 50_000_000);
    }

    proptest! {
        /// The sentence speaks exactly when the two differ by more than 20 % and a
        /// tick (and, the host share a lower bound, only when it is above); its claims
        /// hold (the threshold and tick stated, the order over the agreement band); it
        /// states both values as formatted and names the host or the hardware as the
        /// result's machine says.
        #[test]
        fn the_sentence_speaks_only_on_disagreement(
            steal in 0u64..1_000_000_000,
            host in 0u64..1_000_000_000,
            complete in any::<bool>(),
            tick in prop::sample::select(vec![1_000_000u64, 4_000_000, 10_000_000]),
            hv in any::<bool>(),
        ) {
            let machine = Machine::with_hypervisor(hv);
            let s = steal_sentence(steal, host, complete, tick, machine);
            let diff = steal.abs_diff(host);
            let beyond = diff > tick && diff as f64 > 0.2 * steal.max(host) as f64;
            prop_assert_eq!(s.is_some(), beyond && (complete || host > steal));
            if let Some(s) = s {
                prop_assert_eq!(s.check(), Ok(()));
                let t = &s.text;
                prop_assert!(t.contains(&fmt_ns(steal)) && t.contains(&fmt_ns(host)));
                prop_assert!(t.contains("20 %") && t.contains(&fmt_ns(tick)));
                prop_assert_eq!(t.contains("host component"), hv);
                prop_assert_eq!(t.contains("hardware component"), !hv);
                prop_assert_eq!(t.contains("at least"), !complete);
                // The reason names the larger side.
                prop_assert_eq!(t.contains("halted"), host > steal);
                prop_assert_eq!(t.contains("above"), host > steal);
            }
        }
    }

    /// The note sums the cells that told their host share; a cell that did not makes
    /// the sum a lower bound; no steal read, or no cell told, no note.
    #[test]
    fn the_note_sums_the_cells_that_told() {
        use crate::{Parts, WakeAccount};
        let cell = |host_ns: u64, told: bool| {
            let mut p = Parts::default();
            // Split between the two stretches with no guest event: summed again.
            p.add(Component::IdleDelivery, host_ns / 2);
            p.add(Component::SpinGap, host_ns - host_ns / 2);
            let w = WakeAccount {
                lateness_ns: host_ns as i64,
                parts: p,
                holder: None,
                run_queue_by: Vec::new(),
                blocked: true,
                traced: true,
                host_told: told,
            };
            Explanation::of(&vec![w; 10], 0, false)
        };
        let (a, b, dark) = (cell(5_000_000, true), cell(5_000_000, true), cell(1, false));
        let v = Machine::Host;
        // 100 ms of host share against none of steal.
        let s = steal_note(Some(0), [&a, &b], v).unwrap();
        assert!(
            s.text.contains(&fmt_ns(100_000_000)) && s.text.contains("above"),
            "{}",
            s.text
        );
        assert!(
            steal_note(Some(0), [&a, &dark], v)
                .unwrap()
                .text
                .contains("at least")
        );
        // Steal far above a lower bound says nothing; above a complete sum it speaks.
        assert!(steal_note(Some(1_000_000_000), [&a, &dark], v).is_none());
        assert!(steal_note(Some(1_000_000_000), [&a, &b], v).is_some());
        assert!(steal_note(None, [&a], v).is_none());
        assert!(steal_note(Some(0), [&dark], v).is_none());
    }
}
