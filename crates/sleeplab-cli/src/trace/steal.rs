//! The steal time the guest kernel accounted during a traced run (`/proc/stat`, per
//! CPU, before and after), set beside the sum of the wakes' [`Component::Host`] share,
//! and the one sentence saying when the two disagree.
//!
//! They measure different things and need not agree: steal counts, in the kernel's
//! ticks (10 ms at `USER_HZ` 100), the time a vCPU was runnable while the host ran
//! something else, over the whole run and every task on the CPU; the host component
//! counts, per wake, the time no guest code ran inside the wake's late part, a halted
//! vCPU's interrupt delivery included (which is no steal). The sentence says which way
//! they differ so that a reader does not take one for the other.
//!
//! [`Component::Host`]: super::Component::Host

use crate::output::fmt_ns;

/// The share by which the two may differ before the sentence speaks.
pub const DISAGREE: f64 = 0.20;

/// Every CPU's steal time now, ns (`/proc/stat`'s `cpuN` lines, eighth value, in
/// `USER_HZ` ticks); `None` where it cannot be read.
pub fn read_steal_ns() -> Option<Vec<(u32, u64)>> {
    parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?, tick_ns())
}

/// The length of one `USER_HZ` tick, ns.
pub fn tick_ns() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    1_000_000_000 / (if hz > 0 { hz as u64 } else { 100 })
}

/// The per-CPU steal of a `/proc/stat` text, ns (`tick_ns` a tick).
pub fn parse_proc_stat(text: &str, tick_ns: u64) -> Option<Vec<(u32, u64)>> {
    let cpus: Vec<(u32, u64)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let cpu: u32 = f.next()?.strip_prefix("cpu")?.parse().ok()?;
            let steal: u64 = f.nth(7)?.parse().ok()?;
            Some((cpu, steal.saturating_mul(tick_ns)))
        })
        .collect();
    (!cpus.is_empty()).then_some(cpus)
}

/// The steal over a run: per CPU `after − before`, summed.
pub fn steal_between(before: &[(u32, u64)], after: &[(u32, u64)]) -> u64 {
    after
        .iter()
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

/// The sentence on a run whose guest kernel accounted `steal_ns` of steal while its
/// wakes' host component summed to `host_ns` (on bare metal, `hypervisor` false, the
/// component is the hardware's): `None` where they agree ([`disagree`]).
pub fn steal_sentence(
    steal_ns: u64,
    host_ns: u64,
    tick_ns: u64,
    hypervisor: bool,
) -> Option<String> {
    if !disagree(steal_ns, host_ns, tick_ns) {
        return None;
    }
    let who = if hypervisor { "host" } else { "hardware" };
    let why = if host_ns > steal_ns {
        "the component also counts a halted CPU's interrupt delivery, which is no steal"
    } else {
        "steal also counts time outside the wakes' late parts and other tasks' time"
    };
    Some(format!(
        "steal accounted by the guest kernel ({}, in {} ticks) and the wakes' {who} \
         component ({}) differ by more than {:.0} %: {why}.",
        fmt_ns(steal_ns),
        fmt_ns(tick_ns),
        fmt_ns(host_ns),
        DISAGREE * 100.0
    ))
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
        let s = parse_proc_stat(text, 10_000_000).unwrap();
        assert_eq!(s, vec![(0, 30_000_000), (1, 40_000_000)]);
        assert_eq!(parse_proc_stat("intr 1\n", 1), None);
        let after = [(0, 50_000_000), (1, 40_000_000)];
        assert_eq!(steal_between(&s, &after), 20_000_000);
    }

    proptest! {
        /// The sentence speaks exactly when the two differ by more than 20 % and a
        /// tick; it states both values as formatted, the threshold, the tick, and
        /// names the host or the hardware as the machine has a hypervisor or not.
        #[test]
        fn the_sentence_speaks_only_on_disagreement(
            steal in 0u64..1_000_000_000,
            host in 0u64..1_000_000_000,
            tick in prop::sample::select(vec![1_000_000u64, 4_000_000, 10_000_000]),
            hv in any::<bool>(),
        ) {
            let s = steal_sentence(steal, host, tick, hv);
            let diff = steal.abs_diff(host);
            let beyond = diff > tick && diff as f64 > 0.2 * steal.max(host) as f64;
            prop_assert_eq!(s.is_some(), beyond);
            if let Some(s) = s {
                prop_assert!(s.contains(&fmt_ns(steal)) && s.contains(&fmt_ns(host)));
                prop_assert!(s.contains("20 %") && s.contains(&fmt_ns(tick)));
                prop_assert_eq!(s.contains("host component"), hv);
                prop_assert_eq!(s.contains("hardware component"), !hv);
                // The reason names the larger side.
                prop_assert_eq!(s.contains("halted"), host > steal);
            }
        }
    }
}
