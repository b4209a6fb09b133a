//! The host's noise of the moment, kept once in every result's envelope: the library's
//! noise probe (`sleeplab::lab::noise`: a spin reading `CLOCK_MONOTONIC` back to back,
//! every gap of 5 µs or more recorded) run for [`PROBE_NS`] on each measured CPU in
//! turn, once before the run and once after it (a survey: before and after the whole
//! survey, not per stage). Per CPU and side: the share of time lost, the largest gap,
//! gaps per second, and the lost time per [`BLOCK_NS`] block (kept for readers; the
//! blocks of one probe share its moment, so no verdict rests on them as units).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab::lab::noise::{Noise, NoiseConfig, ProbeKind, Schedule, probe_cpus};
use sleeplab_stats::{BY_POINT_VALUE, Claim, Est, Sentence, Stat, fmt_ns, fmt_pct, order_by_point};

/// How long each CPU is probed on each side, ns (40 ms: 8 blocks).
pub const PROBE_NS: u64 = 40_000_000;

/// The probe's blocks, ns (the JSON's per-block lost time).
pub const BLOCK_NS: u64 = 5_000_000;

/// The most CPUs probed when the run is not pinned (CPUs 0, 1, …): 4 × 2 sides ×
/// 40 ms = 320 ms at most per run.
pub const MAX_CPUS: usize = 4;

/// The most a run spends probing, ms (both sides, every CPU probed).
pub const PLANNED_MS: u64 = 2 * MAX_CPUS as u64 * PROBE_NS / 1_000_000;

/// One side's probes: a record per CPU, or why they could not run.
pub type Probed = Result<Vec<CpuNoise>, String>;

/// One CPU's probe on one side of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpuNoise {
    /// The CPU probed.
    pub cpu: usize,
    /// From its first to its last clock read, ns.
    pub wall_ns: u64,
    /// Clock reads, the first included (the largest gap is the largest of their
    /// intervals).
    #[serde(default)]
    pub reads: u64,
    /// Gaps of at least the threshold.
    pub gaps: u64,
    /// Their total, ns: time the probe did not run.
    pub lost_ns: u64,
    /// The largest gap, ns (0 without gaps).
    pub max_gap_ns: u64,
    /// `lost_ns / wall_ns`, 0–1.
    pub lost_share: f64,
    /// Gaps per second of probing.
    pub gaps_per_second: f64,
    /// The time lost in each [`BLOCK_NS`] block, ns (a gap counts in the block it began
    /// in); empty where not every gap was kept.
    pub blocks_lost_ns: Vec<u64>,
}

impl CpuNoise {
    /// The record of the probe `n` on `cpu`.
    pub fn of(cpu: usize, n: &Noise) -> Self {
        let mut blocks = vec![0u64; n.wall_ns.div_ceil(BLOCK_NS).max(1) as usize];
        let complete = n.kept_ns.len() as u64 == n.gaps;
        for (&gap, &at) in n.kept_ns.iter().zip(&n.kept_at_ns) {
            let i = ((at / BLOCK_NS) as usize).min(blocks.len() - 1);
            blocks[i] += gap;
        }
        Self {
            cpu,
            wall_ns: n.wall_ns,
            reads: n.reads,
            gaps: n.gaps,
            lost_ns: n.lost_ns,
            max_gap_ns: n.max_gap_ns,
            lost_share: n.lost_share(),
            gaps_per_second: n.gaps_per_second(),
            blocks_lost_ns: if complete { blocks } else { Vec::new() },
        }
    }
}

/// The host's noise around one run, as its envelope keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HostNoise {
    /// A gap is at least this long, ns.
    pub threshold_ns: u64,
    /// Each CPU was probed this long on each side, ns.
    pub probe_ns: u64,
    /// The blocks the lost share's interval rests on, ns.
    pub block_ns: u64,
    /// Before the run, per CPU probed (empty where the probe could not run).
    pub before: Vec<CpuNoise>,
    /// After the run, per CPU probed.
    pub after: Vec<CpuNoise>,
    /// Why a side is missing, where one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The CPUs a run probes: the one it is pinned to, else the first [`MAX_CPUS`].
pub fn cpus_to_probe(pin: Option<usize>, cpu_count: usize) -> Vec<usize> {
    match pin {
        Some(c) => vec![c],
        None => (0..cpu_count.clamp(1, MAX_CPUS)).collect(),
    }
}

/// Probes `cpus` in turn now: one record per CPU, or why not.
pub fn probe_now(cpus: &[usize]) -> Probed {
    let config = NoiseConfig {
        duration_ns: PROBE_NS,
        max_kept: 1 << 12,
        ..NoiseConfig::default()
    };
    let noise =
        probe_cpus(cpus, &config, ProbeKind::Spin, Schedule::InTurn).map_err(|e| e.to_string())?;
    Ok(cpus
        .iter()
        .zip(&noise)
        .map(|(&c, n)| CpuNoise::of(c, n))
        .collect())
}

impl HostNoise {
    /// The record of a run whose probes before and after gave `before` and `after`.
    pub fn of(before: Probed, after: Probed) -> Self {
        let note = before.as_ref().err().or(after.as_ref().err()).cloned();
        Self {
            threshold_ns: NoiseConfig::default().threshold_ns,
            probe_ns: PROBE_NS,
            block_ns: BLOCK_NS,
            before: before.unwrap_or_default(),
            after: after.unwrap_or_default(),
            note,
        }
    }

    /// The CPUs probed on either side, in order.
    pub fn cpus(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .before
            .iter()
            .chain(&self.after)
            .map(|c| c.cpu)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Both sides' records of `cpu` (before, after).
    pub fn of_cpu(&self, cpu: usize) -> (Option<&CpuNoise>, Option<&CpuNoise>) {
        let find = |v: &'_ [CpuNoise]| v.iter().position(|c| c.cpu == cpu);
        (
            find(&self.before).map(|i| &self.before[i]),
            find(&self.after).map(|i| &self.after[i]),
        )
    }
}

/// `host noise before/after: 0.40 % / 0.30 % of CPU 0 lost, largest gap 83 µs`: one
/// clause per CPU probed (`–` for a side not probed), the largest gap of both sides;
/// `host noise: not probed (…)` where neither side ran. Its claims: each share and gap
/// quoted over the probe's clock reads.
pub fn host_noise_sentence(h: &HostNoise) -> Sentence {
    let mut s = Sentence::default();
    let mut clauses = Vec::new();
    for cpu in h.cpus() {
        let (b, a) = h.of_cpu(cpu);
        let mut share = |c: Option<&CpuNoise>| match c {
            Some(c) => s.quoted(Stat::Mean, c.reads, fmt_pct(c.lost_share * 100.0)),
            None => "–".to_string(),
        };
        let (sb, sa) = (share(b), share(a));
        let sides: Vec<&CpuNoise> = [b, a].into_iter().flatten().collect();
        let reads = sides.iter().map(|c| c.reads).sum();
        let max = sides.iter().map(|c| c.max_gap_ns).max().unwrap_or(0);
        let gap = s.quoted(Stat::Max, reads, fmt_ns(max));
        clauses.push(format!("{sb} / {sa} of CPU {cpu} lost, largest gap {gap}"));
    }
    if clauses.is_empty() {
        let why = h.note.as_deref().unwrap_or("no CPU");
        s.push(&format!("host noise: not probed ({why})"));
    } else {
        s.push(&format!("host noise before/after: {}", clauses.join("; ")));
    }
    s
}

/// [`host_noise_sentence`]'s text: the line printed beside pace's, advise's and
/// compare's verdicts.
pub fn host_noise_line(h: &HostNoise) -> String {
    host_noise_sentence(h).text
}

/// Two runs' host noise on a CPU differs where one lost more than this many times the
/// other's share of its time …
pub const NOISE_RATIO: f64 = 2.0;

/// … and more than this share of the CPU's time apart (0.5 %): a quiet host's noise
/// (a fraction of a percent) doubling is no difference worth a flag.
pub const NOISE_APART: f64 = 0.005;

/// A run's lost share on `cpu`: its probes' lost time over their wall time (before and
/// after together); `None` where the run did not probe it.
fn lost_share(h: &HostNoise, cpu: usize) -> Option<f64> {
    let (x, y) = h.of_cpu(cpu);
    let sides: Vec<&CpuNoise> = [x, y].into_iter().flatten().collect();
    let wall: u64 = sides.iter().map(|s| s.wall_ns).sum();
    let lost: u64 = sides.iter().map(|s| s.lost_ns).sum();
    (wall > 0).then(|| lost as f64 / wall as f64)
}

/// The sentences on the CPUs whose host noise differs between two results `a` and `b`
/// (named as given). A run probes each CPU twice (before and after), so no interval
/// over units exists: the flag is [`BY_POINT_VALUE`], where one lost more than
/// [`NOISE_RATIO`] times the other's share and more than [`NOISE_APART`] of the CPU's
/// time more, both stated. Empty where none differs so.
pub fn noise_differs(a: (&str, &HostNoise), b: (&str, &HostNoise)) -> Vec<Sentence> {
    let mut out = Vec::new();
    let cpus_b = b.1.cpus();
    for cpu in a.1.cpus().into_iter().filter(|c| cpus_b.contains(c)) {
        let (Some(sa), Some(sb)) = (lost_share(a.1, cpu), lost_share(b.1, cpu)) else {
            continue;
        };
        let (lo, hi) = (sa.min(sb), sa.max(sb));
        if hi <= NOISE_RATIO * lo || hi - lo <= NOISE_APART {
            continue;
        }
        let (ea, eb) = (Est::point(sa), Est::point(sb));
        let pct = |v: f64| fmt_pct(v * 100.0);
        let mut s = Sentence::default();
        s.claim(Claim::Verdict {
            stat: Stat::Mean,
            a: ea,
            b: eb,
            stated: order_by_point(&ea, &eb),
        });
        s.push(&format!(
            "host noise differs on CPU {cpu}, {BY_POINT_VALUE} (one probe before and one \
             after each run: no interval): {} lost {} of its time, {} lost {} (more than \
             {NOISE_RATIO}× and {} of the CPU's time apart)",
            a.0,
            pct(sa),
            b.0,
            pct(sb),
            pct(NOISE_APART),
        ));
        out.push(s);
    }
    out
}

/// What `compare` prints about the results' host noise (each named, with its
/// `host_noise` where it holds one): each result's line, then every pair whose noise
/// differs ([`noise_differs`]).
pub fn compare_lines(named: &[(&str, Option<&HostNoise>)]) -> String {
    let mut out = String::new();
    let with: Vec<(&str, &HostNoise)> = named.iter().filter_map(|&(n, h)| Some((n, h?))).collect();
    for (n, h) in &with {
        out.push_str(&format!("{n}: {}\n", host_noise_line(h)));
    }
    for (i, a) in with.iter().enumerate() {
        for b in &with[i + 1..] {
            for s in noise_differs(*a, *b) {
                out.push_str(&format!("{}\n", s.text));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(wall_ns: u64, gaps: &[(u64, u64)]) -> Noise {
        Noise {
            wall_ns,
            gaps: gaps.len() as u64,
            lost_ns: gaps.iter().map(|g| g.1).sum(),
            max_gap_ns: gaps.iter().map(|g| g.1).max().unwrap_or(0),
            kept_at_ns: gaps.iter().map(|g| g.0).collect(),
            kept_ns: gaps.iter().map(|g| g.1).collect(),
            reads: 1000,
            ..Noise::default()
        }
    }

    /// A side probed on `cpu`: `lost` ns in each of 8 blocks (`spread` ns more in the
    /// odd ones), the largest gap `max`.
    fn side(cpu: usize, lost: u64, spread: u64, max: u64, reads: u64) -> CpuNoise {
        let blocks: Vec<u64> = (0..8).map(|i| lost + (i % 2) * spread).collect();
        let lost_ns = blocks.iter().sum();
        CpuNoise {
            cpu,
            wall_ns: PROBE_NS,
            reads,
            gaps: 8,
            lost_ns,
            max_gap_ns: max.max(lost + spread),
            lost_share: lost_ns as f64 / PROBE_NS as f64,
            gaps_per_second: 200.0,
            blocks_lost_ns: blocks,
        }
    }

    fn record(before: Vec<CpuNoise>, after: Vec<CpuNoise>) -> HostNoise {
        HostNoise::of(Ok(before), Ok(after))
    }

    proptest::proptest! {
        /// The line names every CPU probed with both sides' shares as formatted and the
        /// larger of their largest gaps; its claims hold (a small count of reads is
        /// stated); a side not probed is a dash.
        #[test]
        fn the_line_states_each_cpus_shares_and_largest_gap(
            cpus in proptest::collection::btree_set(0usize..8, 1..4),
            lost in 0u64..2_000_000,
            spread in 0u64..100_000,
            max in 0u64..5_000_000,
            reads in 1u64..10_000_000,
            after in proptest::bool::ANY,
        ) {
            let before: Vec<CpuNoise> = cpus.iter().map(|&c| side(c, lost, spread, max, reads)).collect();
            let later = if after { before.clone() } else { Vec::new() };
            let h = record(before.clone(), later);
            let s = host_noise_sentence(&h);
            proptest::prop_assert_eq!(s.check(), Ok(()));
            proptest::prop_assert!(s.text.starts_with("host noise before/after: "));
            for c in &before {
                let share = fmt_pct(c.lost_share * 100.0);
                let after_share = if after { share.clone() } else { "–".into() };
                let clause = format!(
                    "{share} / {after_share} of CPU {} lost, largest gap {}",
                    c.cpu,
                    fmt_ns(c.max_gap_ns)
                );
                proptest::prop_assert!(s.text.contains(&clause), "{} in {}", clause, s.text);
            }
            proptest::prop_assert_eq!(s.text.contains("n = "), reads * if after { 2 } else { 1 } < 100);
        }
    }

    #[test]
    fn a_run_not_probed_says_why() {
        let h = HostNoise::of(Err("cannot pin".into()), Err("cannot pin".into()));
        assert_eq!(host_noise_line(&h), "host noise: not probed (cannot pin)");
    }

    /// Two runs whose lost shares differ beyond both stated thresholds are flagged, by
    /// point value; two alike, or apart by less than either threshold, are not.
    #[test]
    fn compare_flags_runs_whose_noise_differs_by_the_stated_thresholds() {
        let quiet = record(
            vec![side(0, 10_000, 2_000, 0, 1 << 20)],
            vec![side(0, 10_000, 2_000, 0, 1 << 20)],
        );
        let noisy = record(
            vec![side(0, 900_000, 50_000, 0, 1 << 20)],
            vec![side(0, 900_000, 50_000, 0, 1 << 20)],
        );
        let flags = noise_differs(("a.json", &quiet), ("b.json", &noisy));
        assert_eq!(flags.len(), 1);
        let s = &flags[0];
        assert_eq!(s.check(), Ok(()));
        assert!(
            s.text.contains("CPU 0") && s.text.contains(BY_POINT_VALUE),
            "{}",
            s.text
        );
        assert!(
            s.text.contains("a.json lost 0.22 %") && s.text.contains("b.json lost 18.5 %"),
            "{}",
            s.text
        );
        assert!(noise_differs(("a", &quiet), ("b", &quiet.clone())).is_empty());
        // A CPU one result did not probe is not compared.
        let other = record(vec![side(1, 900_000, 0, 0, 1 << 20)], vec![]);
        assert!(noise_differs(("a", &quiet), ("b", &other)).is_empty());
        // Nearly three times as much (0.62 % against 0.22 %), but under 0.5 % of the
        // CPU's time apart: no flag.
        let thrice = record(
            vec![side(0, 30_000, 2_000, 0, 1 << 20)],
            vec![side(0, 30_000, 2_000, 0, 1 << 20)],
        );
        assert!(noise_differs(("a", &quiet), ("b", &thrice)).is_empty());
    }

    /// A result written before the field loads without it, and one with it round-trips.
    #[test]
    fn old_results_load_and_new_ones_round_trip() {
        let mut r = crate::synthetic::result(crate::result_file::ExperimentData::Sweep(
            crate::synthetic::sweep(vec![]),
        ));
        let mut v = serde_json::to_value(&r).unwrap();
        assert!(v.get("host_noise").is_none());
        v.as_object_mut().unwrap().remove("host_noise");
        let back =
            crate::result_file::parse_result(&serde_json::to_string(&v).unwrap(), "old").unwrap();
        assert_eq!(back.host_noise, None);
        r.host_noise = Some(record(
            vec![side(0, 1, 0, 0, 100)],
            vec![side(0, 1, 0, 0, 100)],
        ));
        let text = serde_json::to_string(&r).unwrap();
        let back = crate::result_file::parse_result(&text, "new").unwrap();
        assert_eq!(back.host_noise, r.host_noise);
    }

    #[test]
    fn gaps_fall_in_the_blocks_they_began_in() {
        let c = CpuNoise::of(
            1,
            &noise(40_000_000, &[(1_000, 10_000), (39_999_000, 20_000)]),
        );
        assert_eq!(c.blocks_lost_ns.len(), 8);
        assert_eq!((c.blocks_lost_ns[0], c.blocks_lost_ns[7]), (10_000, 20_000));
        assert_eq!((c.lost_ns, c.max_gap_ns, c.gaps), (30_000, 20_000, 2));
        assert_eq!(c.blocks_lost_ns.iter().sum::<u64>(), c.lost_ns);
        // Gaps not all kept: no blocks, no interval.
        let mut n = noise(40_000_000, &[(1_000, 10_000)]);
        n.gaps = 5;
        assert!(CpuNoise::of(0, &n).blocks_lost_ns.is_empty());
        assert_eq!(cpus_to_probe(Some(3), 64), vec![3]);
        assert_eq!(cpus_to_probe(None, 64), vec![0, 1, 2, 3]);
        assert_eq!(cpus_to_probe(None, 2), vec![0, 1]);
    }
}
