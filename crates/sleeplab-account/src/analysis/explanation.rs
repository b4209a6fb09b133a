//! A cell's account of its wakes: per component, the median, p99 and mean over the
//! wakes; the composition of a typical wake and of the tail; who held the CPU in the
//! tail. What result files keep, tables print and findings quote.

use super::account::{WakeAccount, Window};
use super::component::{Component, Parts};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab_stats::{Ci, Summary, quantile_sorted, resolves, summarize};
use std::collections::BTreeMap;

/// Nanoseconds per component, every component named (zeros included).
pub type ComponentsNs = BTreeMap<Component, u64>;

/// One wake as result files keep it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WakeRecord {
    /// When it asked to wake, CLOCK_MONOTONIC ns (the kernel trace's clock: a record
    /// lines up with other tools' traces of the same run).
    pub deadline_ns: u64,
    /// When it woke (the caller's clock read after the wait), CLOCK_MONOTONIC ns.
    pub end_ns: u64,
    /// `woke − deadline`, ns.
    pub lateness_ns: i64,
    /// The lateness per component, ns; they add up to the lateness (0 when early).
    pub components: ComponentsNs,
    /// The task that kept it longest on a run queue, if any.
    pub holder: Option<String>,
    /// Whether every event of its way was found.
    pub traced: bool,
    /// Whether it blocked at all.
    pub blocked: bool,
    /// The thread that waited (its kernel thread id: the `pid` of its trace events).
    #[serde(default)]
    pub tid: i32,
    /// Its clock read before the wait, CLOCK_MONOTONIC ns.
    #[serde(default)]
    pub start_ns: u64,
    /// The interleaved round it was measured in (0-based; 0 where an experiment has no
    /// rounds): the unit a verdict over its wakes counts.
    #[serde(default)]
    pub round: u32,
}

impl WakeRecord {
    /// The record of `a`, the account of the wake `w`.
    pub fn of(w: &Window, a: &WakeAccount) -> Self {
        Self {
            deadline_ns: w.deadline_ns,
            end_ns: w.end_ns,
            lateness_ns: a.lateness_ns,
            components: components_ns(&a.parts, a.host_told),
            holder: a.holder.as_ref().map(|h| h.comm.clone()),
            traced: a.traced,
            blocked: a.blocked,
            tid: w.tid,
            start_ns: w.start_ns,
            round: 0,
        }
    }
}

/// Every component's nanoseconds in `p`, zeros included; [`Component::NO_GUEST_EVENT`]'s
/// only where `host_told` or some of them was told apart (their share unknown
/// otherwise: absent, not zero; never hidden once split off, so the parts add up).
pub fn components_ns(p: &Parts, host_told: bool) -> ComponentsNs {
    told(shows_host(host_told, [p]))
        .map(|c| (c, p.get(c)))
        .collect()
}

/// Whether a group of wakes shows [`Component::NO_GUEST_EVENT`]'s: where every wake's
/// share was told (`all_told`), or where some wake's was split off (an idle CPU's
/// delivery told although a spin's gaps were not), which then is a lower bound but
/// part of the sum.
fn shows_host<'a>(all_told: bool, parts: impl IntoIterator<Item = &'a Parts>) -> bool {
    all_told
        || parts
            .into_iter()
            .any(|p| Component::NO_GUEST_EVENT.iter().any(|&c| p.get(c) > 0))
}

/// The components a group of wakes tells: all of them, but
/// [`Component::NO_GUEST_EVENT`]'s only where `host_told`.
fn told(host_told: bool) -> impl Iterator<Item = Component> {
    Component::ALL
        .into_iter()
        .filter(move |c| host_told || !Component::NO_GUEST_EVENT.contains(c))
}

/// One component's statistics over a cell's wakes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComponentStats {
    /// The component.
    pub component: Component,
    /// Median over the wakes, ns.
    pub median_ns: f64,
    /// The median's distribution-free 95 % interval, ns (`null` where the sample
    /// cannot bound it; an end the sample cannot reach is `null`).
    pub median_ci_ns: Option<Ci>,
    /// 99th percentile over the wakes, ns; `null` below 100 wakes.
    pub p99_ns: Option<f64>,
    /// The p99's distribution-free 95 % interval, ns (as the median's).
    pub p99_ci_ns: Option<Ci>,
    /// Mean over the wakes, ns.
    pub mean_ns: f64,
    /// Its share of the cell's total lateness (0–1).
    pub share: f64,
}

/// The mean composition of a group of wakes: each component's mean, which add up to
/// the group's mean lateness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Composition {
    /// Wakes in the group.
    pub wakes: u64,
    /// The lower end of the group's lateness band, ns.
    pub from_ns: f64,
    /// The upper end, ns (`null`: no upper end, the tail).
    pub to_ns: Option<f64>,
    /// The group's mean lateness, ns.
    pub lateness_mean_ns: f64,
    /// Each component's mean over the group, ns.
    pub parts_ns: BTreeMap<Component, f64>,
}

impl Composition {
    /// The component with the largest mean, and that mean (ties: the earlier one on
    /// the wake's way).
    pub fn biggest(&self) -> Option<(Component, f64)> {
        self.ranked().into_iter().next()
    }

    /// Components with a non-zero mean, largest first (ties in the wake's order).
    pub fn ranked(&self) -> Vec<(Component, f64)> {
        let mut v: Vec<(Component, f64)> = self
            .parts_ns
            .iter()
            .map(|(&c, &ns)| (c, ns))
            .filter(|&(_, ns)| ns > 0.0)
            .collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

/// A task that held the CPU while tail wakes waited on a run queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HolderShare {
    /// The task's name.
    pub comm: String,
    /// Tail wakes it held up longest.
    pub wakes: u64,
    /// Their run-queue time, ns.
    pub run_queue_ns: u64,
}

/// How many wakes a component made late: each late wake counted once, by its biggest
/// component.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CauseCount {
    /// The component.
    pub component: Component,
    /// Late wakes whose biggest component it was.
    pub wakes: u64,
}

/// The wakes later than a threshold (a pace frame more than 100 µs late), and what
/// made them late.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LateWakes {
    /// Late means more than this late, ns.
    pub threshold_ns: u64,
    /// Wakes more than the threshold late.
    pub wakes: u64,
    /// Their mean composition (`null` when none was late).
    pub composition: Option<Composition>,
    /// Each late wake counted once by its biggest component (ties: the earlier on its
    /// way), most first; the counts add up to `wakes`.
    pub by_cause: Vec<CauseCount>,
    /// Who held the CPU in their run-queue time, most first.
    pub holders: Vec<HolderShare>,
}

impl LateWakes {
    /// The late wakes of `wakes`: those more than `threshold_ns` late.
    pub fn of(wakes: &[WakeAccount], threshold_ns: u64) -> Self {
        let late: Vec<&WakeAccount> = wakes
            .iter()
            .filter(|w| w.lateness_ns > threshold_ns as i64)
            .collect();
        let mut by: BTreeMap<Component, u64> = BTreeMap::new();
        for w in &late {
            if let Some(c) = w.parts.biggest() {
                *by.entry(c).or_default() += 1;
            }
        }
        let mut by_cause: Vec<CauseCount> = by
            .into_iter()
            .map(|(component, wakes)| CauseCount { component, wakes })
            .collect();
        by_cause.sort_by(|a, b| b.wakes.cmp(&a.wakes).then(a.component.cmp(&b.component)));
        Self {
            threshold_ns,
            wakes: late.len() as u64,
            composition: (!late.is_empty()).then(|| {
                let all_told = late.iter().all(|w| w.host_told);
                let host_told = shows_host(all_told, late.iter().map(|w| &w.parts));
                composition(&late, threshold_ns as f64, None, host_told)
            }),
            by_cause,
            holders: holders(wakes, threshold_ns as f64 + 1.0),
        }
    }
}

/// A cell's account of its wakes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Explanation {
    /// Wakes split.
    pub wakes: u64,
    /// Wakes with an event of their way missing (partly unexplained): lost by the
    /// tracer, or not woken by a timer.
    pub untraced: u64,
    /// Wakes that never blocked (spin, yield): no sleep, whatever the name.
    pub never_blocked: u64,
    /// Events the kernel could not record while the cell ran (its buffer was full).
    pub lost_events: u64,
    /// True for the partial account of `/proc` (no kernel tracing): run queue and
    /// timer slack only, the rest unexplained.
    pub partial: bool,
    /// Whether every wake's host share was told whole (false: `host`, where shown, is
    /// a lower bound: a spin's gaps were not logged for some wake).
    #[serde(default = "told_by_default")]
    pub host_complete: bool,
    /// The split wakes' lateness (`woke − deadline`), ns.
    pub lateness: Summary,
    /// Every component, in the order a wake passes them; `host` where every wake's host
    /// share was told (the guest's interrupts recorded), or where some of it was split
    /// off (then a lower bound, still part of the sum): absent, not zero, where unknown.
    pub components: Vec<ComponentStats>,
    /// The typical wake: the wakes ranked between the 40th and 60th percentile of
    /// lateness (at least the median one).
    pub typical: Option<Composition>,
    /// The tail: the wakes at or above the 99th percentile of lateness (`null` below
    /// 100 wakes).
    pub tail: Option<Composition>,
    /// Who held the CPU in the tail's run-queue time, most first.
    pub tail_holders: Vec<HolderShare>,
    /// The wakes later than a threshold the experiment sets (pace: its late frames).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<LateWakes>,
}

/// An explanation read from a result written before `host_complete`: it showed `host`
/// only where every wake's share was told.
fn told_by_default() -> bool {
    true
}

impl Explanation {
    /// The account of `wakes` (`lost_events` during them; `partial` for /proc's).
    pub fn of(wakes: &[WakeAccount], lost_events: u64, partial: bool) -> Self {
        let n = wakes.len();
        let lateness: Vec<u64> = wakes.iter().map(|w| w.lateness_ns.max(0) as u64).collect();
        let total: u64 = wakes.iter().map(|w| w.parts.total()).sum();
        // The host's share is told where every wake's was (and no event was lost: a lost
        // guest interrupt would pass for the host's), or where some was split off.
        let all_told = n > 0 && lost_events == 0 && wakes.iter().all(|w| w.host_told);
        let host_told = shows_host(all_told, wakes.iter().map(|w| &w.parts));
        let components = told(host_told)
            .map(|c| {
                let values: Vec<u64> = wakes.iter().map(|w| w.parts.get(c)).collect();
                let s = summarize(&values, 0);
                let sum: u64 = values.iter().sum();
                ComponentStats {
                    component: c,
                    median_ns: s.median_ns,
                    median_ci_ns: s.median_ci_ns,
                    p99_ns: s.p99_ns,
                    p99_ci_ns: s.p99_ci_ns,
                    mean_ns: s.mean_ns,
                    share: if total > 0 {
                        sum as f64 / total as f64
                    } else {
                        0.0
                    },
                }
            })
            .collect();
        // Wakes in order of lateness; a band is a range of their ranks.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| lateness[i]);
        let band = |from: usize, to: usize, open: bool| {
            let members: Vec<&WakeAccount> = order[from..=to].iter().map(|&i| &wakes[i]).collect();
            let lo = lateness[order[from]] as f64;
            let hi = (!open).then(|| lateness[order[to]] as f64);
            composition(&members, lo, hi, host_told)
        };
        let last = n.saturating_sub(1) as f64;
        let typical = (n > 0).then(|| {
            band(
                (0.4 * last).floor() as usize,
                (0.6 * last).ceil() as usize,
                false,
            )
        });
        let mut sorted = lateness.clone();
        sorted.sort_unstable();
        let tail = resolves(n as u64, 0.99)
            .then(|| quantile_sorted(&sorted, 0.99))
            .flatten()
            .map(|p99| {
                let from = order.partition_point(|&i| (lateness[i] as f64) < p99);
                band(from.min(n - 1), n - 1, true)
            });
        let tail_holders = tail
            .as_ref()
            .map(|t| holders(wakes, t.from_ns))
            .unwrap_or_default();
        Self {
            wakes: n as u64,
            untraced: wakes.iter().filter(|w| !w.traced).count() as u64,
            never_blocked: wakes.iter().filter(|w| !w.blocked).count() as u64,
            lost_events,
            partial,
            host_complete: all_told,
            lateness: summarize(&lateness, 0),
            components,
            typical,
            tail,
            tail_holders,
            late: None,
        }
    }

    /// The same account with its wakes more than `threshold_ns` late set apart
    /// (`LateWakes`); `wakes` are the accounts it was made of.
    pub fn with_late(mut self, wakes: &[WakeAccount], threshold_ns: u64) -> Self {
        self.late = Some(LateWakes::of(wakes, threshold_ns));
        self
    }

    /// The statistics of `c`.
    pub fn component(&self, c: Component) -> Option<&ComponentStats> {
        self.components.iter().find(|s| s.component == c)
    }
}

fn composition(
    members: &[&WakeAccount],
    from_ns: f64,
    to_ns: Option<f64>,
    host_told: bool,
) -> Composition {
    let k = members.len() as f64;
    let parts_ns = told(host_told)
        .map(|c| {
            let sum: u64 = members.iter().map(|w| w.parts.get(c)).sum();
            (c, sum as f64 / k)
        })
        .collect();
    let lateness_mean_ns = members
        .iter()
        .map(|w| w.lateness_ns.max(0) as f64)
        .sum::<f64>()
        / k;
    Composition {
        wakes: members.len() as u64,
        from_ns,
        to_ns,
        lateness_mean_ns,
        parts_ns,
    }
}

/// The tasks behind the run-queue time of the wakes at least `from_ns` late.
fn holders(wakes: &[WakeAccount], from_ns: f64) -> Vec<HolderShare> {
    let mut by: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for w in wakes
        .iter()
        .filter(|w| w.lateness_ns.max(0) as f64 >= from_ns)
    {
        if let Some(h) = &w.holder {
            let e = by.entry(h.comm.clone()).or_default();
            e.0 += 1;
            e.1 += w.parts.get(Component::RunQueue);
        }
    }
    let mut v: Vec<HolderShare> = by
        .into_iter()
        .map(|(comm, (wakes, run_queue_ns))| HolderShare {
            comm,
            wakes,
            run_queue_ns,
        })
        .collect();
    v.sort_by(|a, b| {
        b.run_queue_ns
            .cmp(&a.run_queue_ns)
            .then(a.comm.cmp(&b.comm))
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Holder;

    /// An idle CPU's delivery split off in a wake whose spin's gaps were not logged
    /// (its share not told whole): the delivery stays in the record and the cell, so
    /// the parts still add up to the lateness; a cell where none was split off and one
    /// wake is untold shows neither delivery nor spin gaps.
    #[test]
    fn a_delivery_split_off_is_never_hidden() {
        let mut w = WakeAccount::of_parts(&[
            (Component::IdleDelivery, 20_000),
            (Component::TimerIrq, 1_000),
            (Component::Spin, 5_000),
        ]);
        w.host_told = false;
        let rec = components_ns(&w.parts, w.host_told);
        assert_eq!(rec.values().sum::<u64>() as i64, w.lateness_ns);
        assert_eq!(rec.get(&Component::IdleDelivery), Some(&20_000));
        assert_eq!(
            rec.get(&Component::SpinGap),
            Some(&0),
            "a lower bound, shown"
        );
        let told = WakeAccount::of_parts(&[(Component::Slack, 3_000)]);
        let x = Explanation::of(&[w.clone(), told.clone()], 0, false);
        assert!(x.component(Component::IdleDelivery).is_some());
        let mut untold = WakeAccount::of_parts(&[(Component::Spin, 5_000)]);
        untold.host_told = false;
        let x = Explanation::of(&[untold, told], 0, false);
        for c in Component::NO_GUEST_EVENT {
            assert!(x.component(c).is_none(), "unknown: absent");
        }
    }

    fn wake(slack: u64, rq: u64, holder: Option<&str>) -> WakeAccount {
        let mut parts = Parts::default();
        parts.add(Component::Slack, slack);
        parts.add(Component::RunQueue, rq);
        WakeAccount {
            lateness_ns: (slack + rq) as i64,
            parts,
            holder: holder.map(|c| Holder {
                comm: c.into(),
                pid: 1,
            }),
            run_queue_by: Vec::new(),
            blocked: true,
            traced: true,
            host_told: true,
        }
    }

    #[test]
    fn hand_computed_cell() {
        // 100 wakes: 98 of 50 µs slack; 2 with 1 ms of run queue behind cc1.
        let mut wakes: Vec<WakeAccount> = (0..98).map(|_| wake(50_000, 0, None)).collect();
        wakes.push(wake(50_000, 1_000_000, Some("cc1")));
        wakes.push(wake(50_000, 2_000_000, Some("cc1")));
        let x = Explanation::of(&wakes, 3, false);
        assert_eq!(
            (x.wakes, x.untraced, x.never_blocked, x.lost_events),
            (100, 0, 0, 3)
        );
        let slack = x.component(Component::Slack).unwrap();
        assert_eq!((slack.median_ns, slack.p99_ns), (50_000.0, Some(50_000.0)));
        // Total lateness 100·50 µs + 3 ms = 8 ms; slack is 5/8 of it.
        assert!((slack.share - 0.625).abs() < 1e-12);
        let rq = x.component(Component::RunQueue).unwrap();
        assert_eq!(rq.median_ns, 0.0);
        // numpy: quantile of 98 zeros, 1e6, 2e6 at 0.99 = 1e6 + 0.01·1e6 = 1.01e6.
        assert!((rq.p99_ns.unwrap() - 1_010_000.0).abs() < 1e-6);
        let t = x.typical.as_ref().unwrap();
        assert_eq!((t.wakes, t.lateness_mean_ns), (22, 50_000.0));
        assert_eq!(t.biggest(), Some((Component::Slack, 50_000.0)));
        // Tail: lateness ≥ p99 (1.06 ms): the 2 ms one alone.
        let tail = x.tail.as_ref().unwrap();
        assert_eq!(tail.wakes, 1);
        assert_eq!(tail.biggest(), Some((Component::RunQueue, 2_000_000.0)));
        assert_eq!(
            x.tail_holders,
            vec![HolderShare {
                comm: "cc1".into(),
                wakes: 1,
                run_queue_ns: 2_000_000
            }]
        );
        // A composition's parts add up to its mean lateness.
        for c in [t, tail] {
            let sum: f64 = c.parts_ns.values().sum();
            assert!((sum - c.lateness_mean_ns).abs() < 1e-6);
        }
    }

    #[test]
    fn late_wakes_are_counted_once_by_their_biggest_component() {
        let wakes = vec![
            wake(50_000, 0, None),
            wake(150_000, 0, None),
            wake(50_000, 900_000, Some("cc1")),
            wake(60_000, 60_000, Some("cc1")),
        ];
        let l = LateWakes::of(&wakes, 100_000);
        assert_eq!(l.wakes, 3);
        let counts: Vec<(Component, u64)> =
            l.by_cause.iter().map(|c| (c.component, c.wakes)).collect();
        // Slack 150 µs; run queue 900 µs; a tie of 60 and 60 goes to the slack (earlier).
        assert_eq!(
            counts,
            vec![(Component::Slack, 2), (Component::RunQueue, 1)]
        );
        assert_eq!(l.by_cause.iter().map(|c| c.wakes).sum::<u64>(), l.wakes);
        let c = l.composition.as_ref().unwrap();
        assert_eq!(c.wakes, 3);
        assert_eq!(l.holders[0].comm, "cc1");
        assert_eq!(l.holders[0].wakes, 2);
        let none = LateWakes::of(&wakes, 10_000_000);
        assert_eq!((none.wakes, none.composition.is_none()), (0, true));
        assert!(
            Explanation::of(&wakes, 0, false)
                .with_late(&wakes, 100_000)
                .late
                .is_some()
        );
    }

    #[test]
    fn small_cells_have_no_tail_and_empty_ones_nothing() {
        let x = Explanation::of(&[wake(10, 0, None), wake(30, 0, None)], 0, true);
        assert!(x.partial && x.tail.is_none() && x.tail_holders.is_empty());
        assert_eq!(x.component(Component::Slack).unwrap().p99_ns, None);
        assert!(x.typical.is_some());
        let empty = Explanation::of(&[], 0, false);
        assert_eq!(empty.wakes, 0);
        assert!(empty.typical.is_none());
        assert_eq!(empty.component(Component::Slack).unwrap().share, 0.0);
    }

    #[test]
    fn wake_records_name_every_component() {
        let r = WakeRecord::of(&Window::relative(1, 0, 0, 12), &wake(5, 7, Some("x")));
        assert_eq!((r.deadline_ns, r.end_ns), (0, 12));
        assert_eq!(r.components.len(), Component::COUNT);
        assert_eq!(r.components[&Component::RunQueue], 7);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["components"]["slack"], 5);
        assert_eq!(json["holder"], "x");
    }
}
