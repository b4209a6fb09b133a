//! What competing load does: the tail of a sleep under load, and sleeps that got faster
//! under load, with the idle-state evidence that explains it when the fingerprint has it.

use super::{Finding, Results, blocked, common_stat, count, judge_change, quote, sleep_call};
use sleeplab_results::sweep::SweepCell;
use sleeplab_stats::{
    BY_POINT_VALUE, Claim, Direction, Est, Extreme, INDISTINGUISHABLE, Order, RankBy, Sentence,
    Stat, Verb, basis_note, interval_text, units::ns, units::pct,
};

/// A change within this share is "no change" for the tail under load.
const LOAD_TOLERANCE: f64 = 0.2;

/// A loaded median this much below the idle one counts as "faster under load".
const FASTER_BY: f64 = 0.1;

fn threads(n: usize) -> &'static str {
    if n == 1 { "thread" } else { "threads" }
}

/// "With N busy threads on C CPUs" (saying "oversubscribed" when N exceeds C).
fn load_phrase(load: usize, cpus: usize) -> String {
    if load > cpus {
        format!(
            "oversubscribed with {load} busy {} on {cpus} CPUs",
            threads(load)
        )
    } else {
        format!("with {load} busy {} on {cpus} CPUs", threads(load))
    }
}

/// "Under load, a 1 ms sleep's p99 grew from X to Y": the highest tail quantile both
/// cells resolve (p99, else p90, else the median), named; a change is stated only where
/// the two 95 % intervals over rounds separate, "no change" only where the interval of
/// the difference lies within 20 % (stated) of the larger value; else: indistinguishable
/// in this run, with both intervals.
pub fn load_effect(r: &Results<'_>) -> Option<Finding> {
    let m = r.main_sweep()?;
    let max_load = *m.loads().iter().max()?;
    if max_load == 0 {
        return None;
    }
    let mech = sleep_call(&m)?;
    let d = [1_000_000u64, 10_000_000, 100_000]
        .into_iter()
        .find(|&d| m.cell(mech, d, 0).is_some() && m.cell(mech, d, max_load).is_some())?;
    let (a, b) = (m.cell(mech, d, 0)?, m.cell(mech, d, max_load)?);
    let stat = common_stat(
        &[Stat::P99, Stat::P90, Stat::Median],
        [a.summary.count, b.summary.count],
    )?;
    let mut s = Sentence::default();
    let (sa, sb) = (
        quote(&mut s, &a.summary, stat)?,
        quote(&mut s, &b.summary, stat)?,
    );
    let (ea, eb) = (a.est(stat)?, b.est(stat)?);
    let cpus = r.top.fingerprint.cpu_count;
    let setting = load_phrase(max_load, cpus);
    let what = format!("a {} {mech}'s {stat}", ns(d as f64));
    let tol = pct(100.0 * LOAD_TOLERANCE);
    let judged = judge_change(&mut s, stat, Verb::Grew, (ea, eb), LOAD_TOLERANCE, &tol);
    let stated = judged.direction;
    if !judged.decided {
        let n = a.summary.count.min(b.summary.count);
        let sizes = if n < sleeplab_stats::SMALL_SAMPLE {
            format!("; n = {} and n = {}", a.summary.count, b.summary.count)
        } else {
            String::new()
        };
        let why = if judged.order == Order::Indistinguishable {
            format!(
                "{INDISTINGUISHABLE} (95 % intervals over rounds{sizes}){}",
                basis_note(&[&ea, &eb])
            )
        } else if stated == Direction::Same {
            format!(
                "within {tol} in point values but not shown to be (95 % intervals over rounds{sizes})"
            )
        } else {
            format!("the 95 % intervals over rounds do not bear the point values out{sizes}")
        };
        s.push(&format!(
            "Load's effect on the tail is unclear here: {setting}, {what} was {sa} {} idle and {sb} {} loaded, {why}.",
            interval_text(ea.ci, ns),
            interval_text(eb.ci, ns),
        ));
        return Some(Finding::new("load", s));
    }
    s.claim(Claim::Threshold { shown: tol.clone() });
    let n = a.summary.count.min(b.summary.count);
    let sizes = if n < sleeplab_stats::SMALL_SAMPLE {
        format!("; n = {} and n = {}", a.summary.count, b.summary.count)
    } else {
        String::new()
    };
    let word = Verb::Grew.word(stated);
    s.push(&match stated {
        Direction::Up => format!(
            "Load stretches the tail: {setting}, {what} {word} from {sa} idle to {sb} (more than {tol}{sizes})."
        ),
        Direction::Same => format!(
            "Load hardly changes sleeps here: {setting}, {what} {word} by more than {tol} ({sa} idle, {sb} loaded, the difference's 95 % interval within {tol} of the larger{sizes})."
        ),
        Direction::Down => format!(
            "Load did not slow sleeps here: {setting}, {what} {word} from {sa} idle to {sb} (by more than {tol}{sizes}); see the finding on sleeps faster under load."
        ),
    });
    Some(Finding::new("load", s))
}

/// "Sleeps got faster under load": sleeping cells (idle and at the highest load, both
/// blocked) whose loaded median is more than 10 % (stated) below the idle one, its 95 %
/// interval below the idle one's (a drop the intervals do not separate is not counted). The
/// mechanism is stated only when the fingerprint records the idle behaviour that
/// explains it (`halted_idle`).
pub fn loaded_faster(r: &Results<'_>) -> Option<Finding> {
    let m = r.main_sweep()?;
    let max_load = *m.loads().iter().max()?;
    if max_load == 0 {
        return None;
    }
    let pairs: Vec<_> = m
        .cells()
        .filter(|a| a.load == 0 && blocked(a) && a.summary.count > 0)
        .filter_map(|a| {
            m.cell(&a.mechanism, a.requested_ns, max_load)
                .filter(|b| blocked(b) && b.summary.count > 0)
                .map(|b| (a, b))
        })
        .collect();
    let med = |c: &SweepCell| {
        c.est(Stat::Median)
            .unwrap_or(Est::point(c.summary.median_ns))
    };
    let faster: Vec<_> = pairs
        .iter()
        .filter(|(a, b)| {
            b.summary.median_ns < (1.0 - FASTER_BY) * a.summary.median_ns && med(b).below(&med(a))
        })
        .collect();
    if faster.is_empty() {
        return None;
    }
    let ratios: Vec<f64> = faster
        .iter()
        .map(|(a, b)| b.summary.median_ns / a.summary.median_ns.max(1.0))
        .collect();
    let i = sleeplab_stats::extreme_index(&ratios, Extreme::Least, RankBy::Signed)?;
    let (a, b) = faster[i];
    let mut s = Sentence::default();
    let (sa, sb) = (
        quote(&mut s, &a.summary, Stat::Median)?,
        quote(&mut s, &b.summary, Stat::Median)?,
    );
    s.claim(Claim::Verdict {
        stat: Stat::Median,
        a: med(a),
        b: med(b),
        stated: Order::Above,
    });
    s.claim(Claim::Change {
        stat: Stat::Median,
        from: a.summary.median_ns,
        to: b.summary.median_ns,
        verb: Verb::Grew,
        tolerance: FASTER_BY,
        stated: Direction::Down,
    });
    s.rank_by_point(Extreme::Least, i, &ratios);
    let tol = pct(100.0 * FASTER_BY);
    s.claim(Claim::Threshold { shown: tol.clone() });
    let n = a.summary.count.min(b.summary.count);
    let sizes = if n < sleeplab_stats::SMALL_SAMPLE {
        format!(", n = {} and n = {}", a.summary.count, b.summary.count)
    } else {
        String::new()
    };
    s.push(&format!(
        "Under load, sleeps got faster, not slower: {}, the median of {} of {} sleeping cells shrank by more than {tol}, beyond both 95 % intervals over rounds (the largest drop {BY_POINT_VALUE}: {} {} from {sa} idle to {sb}{sizes}).",
        load_phrase(max_load, r.top.fingerprint.cpu_count),
        count(faster.len() as u64),
        count(pairs.len() as u64),
        a.mechanism,
        ns(a.requested_ns as f64),
    ));
    match halted_idle(r) {
        Some(why) => s.push(&format!(" The likely cause: {why}.")),
        None => s.push(
            " The fingerprint does not record what idle CPUs do here, so the cause is not stated.",
        ),
    };
    Some(Finding::new("loaded-faster", s))
}

/// Why an idle machine wakes a sleeper later than a busy one, from the fingerprint's
/// idle evidence; `None` when it is not recorded or does not support a cause (a CPU
/// latency request in force keeps CPUs out of idle states).
pub fn halted_idle(r: &Results<'_>) -> Option<String> {
    let f = &r.top.fingerprint;
    let idle = f.idle.as_ref()?;
    if idle.latency_held() {
        return None;
    }
    let driver = idle.driver.as_deref().unwrap_or("none");
    let deepest = idle
        .usable_states()
        .max_by_key(|s| s.exit_latency_us)
        .cloned();
    match (driver, f.virtualization.as_deref(), deepest) {
        ("haltpoll", Some(_), _) => Some(format!(
            "this VM's idle CPUs poll for up to {} (cpuidle driver haltpoll) and then halt, and a wake-up after that must first wake the halted vCPU through the hypervisor; the busy threads keep the CPUs from halting",
            idle.guest_halt_poll_ns.map_or("a while".into(), |p| ns(p as f64))
        )),
        ("none", Some(_), _) => Some(
            "when idle, this VM's CPUs halt (no cpuidle driver: the idle loop executes HLT, which hands the vCPU back to the hypervisor), so a sleeper's wake-up must first wake a halted vCPU; the busy threads keep the CPUs from halting".into(),
        ),
        (d, _, Some(st)) => Some(format!(
            "when idle, the CPUs enter idle states (cpuidle driver {d}) whose exit takes up to {} ({}); the busy threads keep them out of those states",
            ns(st.exit_latency_us as f64 * 1e3),
            st.name
        )),
        _ => None,
    }
}

/// Why a longer sleep can cost more than the time added to it: an idle state whose
/// target residency lies between the two waits, so only the longer wait enters it.
/// `None` unless the fingerprint records such a state.
pub fn deeper_idle(r: &Results<'_>, short_ns: f64, long_ns: f64) -> Option<String> {
    let idle = r.top.fingerprint.idle.as_ref()?;
    if idle.latency_held() {
        return None;
    }
    let st = idle
        .usable_states()
        .filter(|s| {
            let res = s.target_residency_us as f64 * 1e3;
            res > short_ns && res <= long_ns
        })
        .max_by_key(|s| s.exit_latency_us)?;
    Some(format!(
        "the longer wait lets the CPU reach the {} idle state (target residency {}, exit latency {}), which the shorter one does not",
        st.name,
        ns(st.target_residency_us as f64 * 1e3),
        ns(st.exit_latency_us as f64 * 1e3)
    ))
}
