//! The interrupts and softirqs a late wait's CPU ran after its deadline, by name: what
//! the kernel did there instead of returning to the program. Recorded are those that
//! interrupted the idle task or the followed threads (the capture keeps no others), so
//! an interrupt of another task that held the CPU is that task's time, not listed here.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::capture::{Event, Interrupt, Kind};

/// The kernel's names of the softirqs, by number (`include/linux/interrupt.h`).
const SOFTIRQS: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// Time the kernel spent in one interrupt or softirq.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IrqTime {
    /// Its name: `softirq TIMER`, `local timer`, `irq 11` (a device's, named from
    /// `/proc/interrupts` where the run could read it: `irq 11 virtio0`), `vector 253`.
    pub name: String,
    /// How many times it ran.
    pub count: u64,
    /// How long, ns.
    pub ns: u64,
    /// A device interrupt's number (`None` for the others): what names it from
    /// `/proc/interrupts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq: Option<i32>,
}

/// The name of interrupt `number` of kind `what`.
pub fn irq_name(what: Interrupt, number: i32) -> String {
    match what {
        Interrupt::Softirq => match usize::try_from(number).ok().and_then(|n| SOFTIRQS.get(n)) {
            Some(name) => format!("softirq {name}"),
            None => format!("softirq {number}"),
        },
        Interrupt::LocalTimer => "local timer".to_string(),
        Interrupt::Device => format!("irq {number}"),
        Interrupt::Vector => format!("vector {number}"),
    }
}

/// The interrupts `events` record on `cpu` between `from_ns` and `to_ns`, most time
/// first (then by name). One still running at `to_ns` counts until then, one already
/// running at `from_ns` from then; an exit without its entry in `events` is left out
/// unless that entry falls before `from_ns`.
pub fn interrupts_on(events: &[Event], cpu: u32, from_ns: u64, to_ns: u64) -> Vec<IrqTime> {
    // Open entries by kind and number (the enum's discriminant: capture's `Interrupt`
    // is not `Hash`), each with its start and its kind.
    let mut open: HashMap<(u8, i32), (u64, Interrupt)> = HashMap::new();
    let mut by: BTreeMap<String, (u64, u64, Option<i32>)> = BTreeMap::new();
    let mut add = |what: Interrupt, number: i32, ns: u64| {
        let e = by.entry(irq_name(what, number)).or_default();
        e.0 += 1;
        e.1 += ns;
        e.2 = (what == Interrupt::Device).then_some(number);
    };
    for e in events.iter().filter(|e| e.cpu == cpu && e.time_ns <= to_ns) {
        match e.kind {
            Kind::IrqEntry { what, number } => {
                open.insert((what as u8, number), (e.time_ns, what));
            }
            Kind::IrqExit { what, number } => {
                if let Some((start, _)) = open.remove(&(what as u8, number)) {
                    if e.time_ns > from_ns {
                        add(what, number, e.time_ns - start.max(from_ns));
                    }
                }
            }
            _ => {}
        }
    }
    // Still running at the end of the stretch.
    for ((_, number), (start, what)) in open {
        add(what, number, to_ns.saturating_sub(start.max(from_ns)));
    }
    let mut out: Vec<IrqTime> = by
        .into_iter()
        .map(|(name, (count, ns, irq))| IrqTime {
            name,
            count,
            ns,
            irq,
        })
        .collect();
    out.sort_by(|a, b| b.ns.cmp(&a.ns).then_with(|| a.name.cmp(&b.name)));
    out
}

/// The interrupts of many waits summed by name, most time first, each with how many
/// of the waits it ran in.
pub fn total<'a>(each: impl IntoIterator<Item = &'a [IrqTime]>) -> Vec<IrqTotal> {
    let mut by: BTreeMap<&str, IrqTotal> = BTreeMap::new();
    for list in each {
        for i in list {
            let t = by.entry(&i.name).or_insert_with(|| IrqTotal {
                name: i.name.clone(),
                waits: 0,
                count: 0,
                ns: 0,
            });
            t.waits += 1;
            t.count += i.count;
            t.ns += i.ns;
        }
    }
    let mut out: Vec<IrqTotal> = by.into_values().collect();
    out.sort_by(|a, b| b.ns.cmp(&a.ns).then_with(|| a.name.cmp(&b.name)));
    out
}

/// One interrupt's time over a call's late waits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IrqTotal {
    /// Its name (as [`IrqTime::name`]).
    pub name: String,
    /// The waits it ran in.
    pub waits: u64,
    /// How many times it ran in them.
    pub count: u64,
    /// How long, ns.
    pub ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::FLAG_HARDIRQ;

    fn irq(t: u64, cpu: u32, entry: bool, what: Interrupt, number: i32) -> Event {
        Event {
            time_ns: t,
            cpu,
            pid: 0,
            flags: FLAG_HARDIRQ,
            kind: if entry {
                Kind::IrqEntry { what, number }
            } else {
                Kind::IrqExit { what, number }
            },
        }
    }

    #[test]
    fn names_follow_the_kernel() {
        assert_eq!(irq_name(Interrupt::Softirq, 1), "softirq TIMER");
        assert_eq!(irq_name(Interrupt::Softirq, 9), "softirq RCU");
        assert_eq!(irq_name(Interrupt::Softirq, 12), "softirq 12");
        assert_eq!(irq_name(Interrupt::LocalTimer, 236), "local timer");
        assert_eq!(irq_name(Interrupt::Device, 11), "irq 11");
        assert_eq!(irq_name(Interrupt::Vector, 253), "vector 253");
    }

    /// Each interrupt's time is clipped to the stretch, summed by name, on the CPU
    /// asked only (the times hand-computed), and summed over waits by name.
    #[test]
    fn times_are_clipped_summed_and_ranked() {
        let ev = vec![
            // Began before the stretch: counts from 1_000.
            irq(500, 0, true, Interrupt::LocalTimer, 236),
            irq(1_500, 0, false, Interrupt::LocalTimer, 236),
            // Twice inside.
            irq(2_000, 0, true, Interrupt::Softirq, 1),
            irq(2_300, 0, false, Interrupt::Softirq, 1),
            irq(3_000, 0, true, Interrupt::Softirq, 1),
            irq(3_100, 0, false, Interrupt::Softirq, 1),
            // Another CPU: not this wait's.
            irq(2_000, 1, true, Interrupt::Device, 11),
            irq(9_000, 1, false, Interrupt::Device, 11),
            // Still running at the end: counts until 5_000.
            irq(4_000, 0, true, Interrupt::Device, 24),
            // Ended before the stretch: left out.
            irq(100, 0, true, Interrupt::Vector, 253),
            irq(200, 0, false, Interrupt::Vector, 253),
        ];
        let got = interrupts_on(&ev, 0, 1_000, 5_000);
        let want = vec![
            IrqTime {
                name: "irq 24".into(),
                count: 1,
                ns: 1_000,
                irq: Some(24),
            },
            IrqTime {
                name: "local timer".into(),
                count: 1,
                ns: 500,
                irq: None,
            },
            IrqTime {
                name: "softirq TIMER".into(),
                count: 2,
                ns: 400,
                irq: None,
            },
        ];
        assert_eq!(got, want);
        let t = total([&got[..], &got[..1]]);
        assert_eq!(
            (t[0].name.as_str(), t[0].waits, t[0].count, t[0].ns),
            ("irq 24", 2, 2, 2_000)
        );
        assert_eq!(
            (t[2].name.as_str(), t[2].waits, t[2].ns),
            ("softirq TIMER", 1, 400)
        );
    }
}
