//! `pace --repeat N`: the interleaved comparison run N times. On a noisy VM a tail moves
//! from run to run (pure spin's p99 was once 46 ns in one run, 5.96 µs in the next), so
//! each run's p99, CPU and frontier verdict is kept ([`PaceRun`]) and, per contender and
//! load level, the range across runs and how often each verdict held ([`RepeatRange`]).

use super::{PaceResult, standings};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab_stats::{Ci, UnitIntervals, fmt_ns_f, fmt_pct, new_table};

/// The verdict of a contender with a p99 that no other is shown to beat on both.
pub const ON_FRONTIER: &str = "on the frontier";

/// The verdict of a contender whose sample resolves no p99.
pub const NO_P99: &str = "no p99 (n < 100)";

/// One contender at one load level in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunPoint {
    /// Contender name or setting.
    pub strategy: String,
    /// Competing busy threads.
    pub load: usize,
    /// Frames measured.
    pub frames: u64,
    /// p99 lateness, ns (`null` below 100 frames).
    pub p99_ns: Option<f64>,
    /// Its 95 % interval from the pooled frames, ns (describes; decides nothing).
    pub p99_ci_ns: Option<Ci>,
    /// The intervals of its lateness statistics over the run's blocks (`stats::units`):
    /// what the run's verdicts rest on (absent in results written before them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<UnitIntervals>,
    /// CPU, % of one core.
    pub cpu_percent: f64,
    /// Its 95 % interval over the run's blocks, % of one core (absent where the run had
    /// too few blocks, and in results written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ci_percent: Option<Ci>,
    /// The frontier's verdict in this run: [`ON_FRONTIER`], `beaten on both by NAME`
    /// (a p99 and a CPU whose intervals over the run's blocks lie below), or [`NO_P99`].
    pub verdict: String,
}

/// One run of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaceRun {
    /// Every contender at every level, in the result's order.
    pub points: Vec<RunPoint>,
}

impl PaceRun {
    /// The run's points and verdicts from its results (levels in `loads` order).
    pub fn of(results: &[PaceResult], loads: &[usize]) -> Self {
        let mut points = Vec::new();
        for &load in loads {
            let level: Vec<&PaceResult> = results.iter().filter(|r| r.load == load).collect();
            let st = standings(&level);
            for (r, s) in level.iter().zip(&st) {
                let verdict = match (s.p99_ns(), s.dominated_by) {
                    (None, _) => NO_P99.to_string(),
                    (Some(_), None) => ON_FRONTIER.to_string(),
                    (Some(_), Some(i)) => format!("beaten on both by {}", st[i].strategy),
                };
                points.push(RunPoint {
                    strategy: r.strategy.clone(),
                    load,
                    frames: r.error.count,
                    p99_ns: s.p99_ns(),
                    p99_ci_ns: r.error.p99_ci_ns.filter(|_| s.p99.is_some()),
                    units: r.units.clone(),
                    cpu_percent: r.cpu_percent,
                    cpu_ci_percent: r.cpu_ci_percent,
                    verdict,
                });
            }
        }
        Self { points }
    }
}

/// How often one verdict held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VerdictCount {
    /// The verdict (see [`RunPoint::verdict`]).
    pub verdict: String,
    /// In how many runs.
    pub runs: u64,
}

/// One contender at one load level across the runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RepeatRange {
    /// Contender name or setting.
    pub strategy: String,
    /// Competing busy threads.
    pub load: usize,
    /// Runs that measured it.
    pub runs: u64,
    /// The smallest and the largest p99 over the runs that resolved one, ns (`null`
    /// when none did).
    pub p99_range_ns: Option<[f64; 2]>,
    /// Runs whose sample resolved a p99.
    pub p99_runs: u64,
    /// The smallest and the largest CPU over the runs, % of one core.
    pub cpu_range_percent: [f64; 2],
    /// Each verdict and how many runs it held in, most frequent first.
    pub verdicts: Vec<VerdictCount>,
}

/// The ranges of every contender and level over `runs`, in the first run's order.
pub fn ranges(runs: &[PaceRun]) -> Vec<RepeatRange> {
    let mut out: Vec<RepeatRange> = Vec::new();
    for p in runs.iter().flat_map(|r| &r.points) {
        let i = match out
            .iter()
            .position(|x| x.strategy == p.strategy && x.load == p.load)
        {
            Some(i) => i,
            None => {
                out.push(RepeatRange {
                    strategy: p.strategy.clone(),
                    load: p.load,
                    runs: 0,
                    p99_range_ns: None,
                    p99_runs: 0,
                    cpu_range_percent: [p.cpu_percent, p.cpu_percent],
                    verdicts: Vec::new(),
                });
                out.len() - 1
            }
        };
        let x = &mut out[i];
        x.runs += 1;
        if let Some(v) = p.p99_ns {
            x.p99_runs += 1;
            x.p99_range_ns = Some(match x.p99_range_ns {
                None => [v, v],
                Some([lo, hi]) => [lo.min(v), hi.max(v)],
            });
        }
        let [lo, hi] = x.cpu_range_percent;
        x.cpu_range_percent = [lo.min(p.cpu_percent), hi.max(p.cpu_percent)];
        match x.verdicts.iter_mut().find(|v| v.verdict == p.verdict) {
            Some(v) => v.runs += 1,
            None => x.verdicts.push(VerdictCount {
                verdict: p.verdict.clone(),
                runs: 1,
            }),
        }
    }
    for x in &mut out {
        // Most frequent first; ties keep the order they first appeared in.
        x.verdicts.sort_by_key(|v| std::cmp::Reverse(v.runs));
    }
    out
}

/// The ranges as a terminal table.
pub fn render(runs: usize, ranges: &[RepeatRange]) -> String {
    let mut t = new_table([
        "strategy",
        "load",
        "runs",
        "p99 min",
        "p99 max",
        "CPU min",
        "CPU max",
        "verdicts (runs)",
    ]);
    for x in ranges {
        let (lo, hi) = x
            .p99_range_ns
            .map_or((None, None), |[l, h]| (Some(l), Some(h)));
        t.add_row(vec![
            x.strategy.clone(),
            x.load.to_string(),
            x.runs.to_string(),
            fmt_ns_f(lo),
            fmt_ns_f(hi),
            fmt_pct(x.cpu_range_percent[0]),
            fmt_pct(x.cpu_range_percent[1]),
            x.verdicts
                .iter()
                .map(|v| format!("{} ({} of {})", v.verdict, v.runs, x.runs))
                .collect::<Vec<_>>()
                .join("; "),
        ]);
    }
    format!(
        "across {runs} runs of the interleaved comparison (p99 over the runs whose sample resolves one; a verdict of \"beaten on both by\" needs a p99 and a CPU whose 95 % intervals over the run's blocks lie below)\n{t}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(name: &str, p99: Option<f64>, cpu: f64, verdict: &str) -> RunPoint {
        RunPoint {
            strategy: name.into(),
            load: 0,
            frames: 1200,
            p99_ns: p99,
            p99_ci_ns: None,
            units: None,
            cpu_percent: cpu,
            cpu_ci_percent: None,
            verdict: verdict.into(),
        }
    }

    #[test]
    fn ranges_and_verdict_counts_by_hand() {
        let runs = [
            PaceRun {
                points: vec![
                    point("spin", Some(46.0), 99.0, ON_FRONTIER),
                    point("precise", Some(4_800.0), 0.81, ON_FRONTIER),
                ],
            },
            PaceRun {
                points: vec![
                    point("spin", Some(5_960.0), 98.0, ON_FRONTIER),
                    point(
                        "precise",
                        Some(12_870.0),
                        0.76,
                        "beaten on both by std-sleep",
                    ),
                ],
            },
            PaceRun {
                points: vec![
                    point("spin", None, 97.0, NO_P99),
                    point("precise", Some(6_000.0), 0.9, ON_FRONTIER),
                ],
            },
        ];
        let r = ranges(&runs);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].runs, r[0].p99_runs), (3, 2));
        assert_eq!(r[0].p99_range_ns, Some([46.0, 5_960.0]));
        assert_eq!(r[0].cpu_range_percent, [97.0, 99.0]);
        assert_eq!(r[1].p99_range_ns, Some([4_800.0, 12_870.0]));
        assert_eq!(r[1].cpu_range_percent, [0.76, 0.9]);
        let v: Vec<(&str, u64)> = r[1]
            .verdicts
            .iter()
            .map(|v| (v.verdict.as_str(), v.runs))
            .collect();
        assert_eq!(v, [(ON_FRONTIER, 2), ("beaten on both by std-sleep", 1)]);
        // Every run's verdicts add up to the runs.
        for x in &r {
            assert_eq!(x.verdicts.iter().map(|v| v.runs).sum::<u64>(), x.runs);
        }
        let text = render(3, &r);
        assert!(
            text.contains("on the frontier (2 of 3); beaten on both by std-sleep (1 of 3)"),
            "{text}"
        );
    }

    #[test]
    fn a_run_names_the_verdicts_of_its_frontier() {
        let rs = [
            PaceResult::uniform("a", 0, 400, 10_000, 1.0),
            PaceResult::uniform("b", 0, 400, 20_000, 2.0),
            PaceResult::uniform("c", 0, 50, 1, 0.1),
        ];
        let run = PaceRun::of(&rs, &[0]);
        let v: Vec<&str> = run.points.iter().map(|p| p.verdict.as_str()).collect();
        assert_eq!(v, [ON_FRONTIER, "beaten on both by a", NO_P99]);
    }
}
