//! The 60 Hz loop: precise against the references.

use super::{Finding, Results, common_stat, quote};
use sleeplab_stats::{Sentence, Stat, units::num, units::pct};

/// "For a 60 Hz loop, `precise` woke with p99 X late at Y % CPU": the highest tail
/// quantile every quoted contender's frame count resolves (p99, else p90), named, with
/// the frame count.
pub fn pace_loop(r: &Results<'_>) -> Option<Finding> {
    let (_, p) = r.pace()?;
    let ours = p.results.iter().find(|x| x.strategy == "precise")?;
    let others: Vec<_> = ["std-sleep", "spin"]
        .iter()
        .filter_map(|n| p.results.iter().find(|x| x.strategy == *n))
        .collect();
    let sizes: Vec<u64> = std::iter::once(ours)
        .chain(others.iter().copied())
        .map(|x| x.error.count)
        .collect();
    let stat = common_stat(&[Stat::P99, Stat::P90], sizes.iter().copied())?;
    let mut s = Sentence::default();
    let v = quote(&mut s, &ours.error, stat)?;
    let mut text = format!(
        "For a {} Hz loop, `precise` woke with {stat} {v} late at {} CPU",
        num(p.config.rate_hz),
        pct(ours.cpu_percent)
    );
    let mut parts = Vec::new();
    for x in &others {
        let v = quote(&mut s, &x.error, stat)?;
        parts.push(format!(
            "{}: {stat} {v} at {}",
            x.strategy,
            pct(x.cpu_percent)
        ));
    }
    let frames = if sizes.iter().all(|&n| n == sizes[0]) {
        format!("n = {} frames each", sizes[0])
    } else {
        let each: Vec<String> = sizes.iter().map(|n| format!("n = {n}")).collect();
        format!("{} frames", each.join(", "))
    };
    if parts.is_empty() {
        text.push_str(&format!(" ({frames})."));
    } else {
        text.push_str(&format!(" ({}; {frames}).", parts.join("; ")));
    }
    s.push(&text);
    Some(Finding::new("pace", s))
}
