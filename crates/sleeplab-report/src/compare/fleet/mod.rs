//! N results side by side: a fleet report. One row per machine (its file, host, kernel
//! and CPU), the measurements several machines hold as columns (each machine's median),
//! and the outliers named by one stated rule: a machine whose median of a cell is more
//! than [`OUTLIER_FACTOR`] times the fleet median of that cell (the median of the
//! medians of the machines that hold it), beyond the 95 % interval of its median over
//! its own run's units (its rounds or blocks, `stats::units`: its lower end above the
//! bar; each machine is one run, so the sentence says it leaves run-to-run variation
//! out). A median above the bar whose interval reaches below it, or that has none, is
//! not called an outlier: it is named as indistinguishable from the bar in this run.
//!
//! The fleet view of the matched table ([`Matched`]): every measurement at least two
//! machines hold is a cell. It is also what `compare --json` writes (docs/RESULTS.md).

use super::{Matched, Rendered, Run, View};
use crate::html::{Badge, Tone};
use crate::units::{ns, num, ratio};
use serde::Serialize;
use sleeplab_stats::{
    Cell, Ci, Claim, Est, INDISTINGUISHABLE, Order, SMALL_SAMPLE, Sentence, Stat, Table,
    WITHIN_RUN, basis_note, median, with_interval,
};

/// A machine is an outlier in a cell when its median is more than this many times the
/// fleet median of the cell.
pub const OUTLIER_FACTOR: f64 = 2.0;

/// At most this many of an outlier machine's cells are named in its sentence (the
/// worst first); the rest are counted.
const NAMED_CELLS: usize = 3;

/// One machine of the fleet: where its result comes from and what it runs on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Machine {
    /// The result file, as given.
    pub file: String,
    /// Its fingerprint's host name.
    pub hostname: String,
    /// Its kernel release.
    pub kernel: String,
    /// Its CPU model.
    pub cpu_model: String,
}

/// One measurement held by at least two machines.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetCell {
    /// The survey stage or experiment.
    pub stage: String,
    /// What was measured, e.g. `nanosleep 1 µs load 0`.
    pub measurement: String,
    /// Each machine's median, ns (`None` where the machine does not hold the cell).
    pub medians_ns: Vec<Option<f64>>,
    /// The 95 % interval of each machine's median, ns (`None` where it does not hold the
    /// cell or nothing bounds it).
    pub medians_ci_ns: Vec<Option<Ci>>,
    /// The sample size of each machine's median.
    pub n: Vec<Option<u64>>,
    /// The median of the machines' medians, ns.
    pub fleet_median_ns: f64,
    /// The 95 % interval of each machine's median over its own run's units (rounds,
    /// blocks), ns: what an outlier verdict rests on (`None` where the result holds no
    /// intervals over units, or too few units).
    pub medians_units_ci_ns: Vec<Option<Ci>>,
    /// How many units each of those intervals rests on (`None`: the result holds none).
    pub units: Vec<Option<u64>>,
    /// Each machine's median as an estimate (for the verdicts).
    #[serde(skip)]
    pub medians: Vec<Option<Est>>,
}

impl FleetCell {
    /// Machine `m`'s median with its interval over its run's units.
    fn est(&self, m: usize) -> Est {
        self.medians[m].unwrap_or(Est::point(f64::NAN))
    }

    /// The medians of the machines that hold the cell.
    fn held(&self) -> Vec<f64> {
        self.medians_ns.iter().flatten().copied().collect()
    }
}

/// A machine's median of a cell beyond the outlier rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outlier {
    /// Index into [`Fleet::machines`].
    pub machine: usize,
    /// Index into [`Fleet::cells`].
    pub cell: usize,
    /// Its median over the fleet median.
    pub ratio: f64,
}

/// N results matched cell by cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fleet {
    /// The machines, in the order given.
    pub machines: Vec<Machine>,
    /// The measurements at least two machines hold, in order of first appearance.
    pub cells: Vec<FleetCell>,
    /// The outlier rule's factor (`OUTLIER_FACTOR`).
    pub outlier_factor: f64,
    /// Every (machine, cell) beyond the rule, by machine, worst first.
    pub outliers: Vec<Outlier>,
    /// Every (machine, cell) whose median is above the bar but whose interval reaches
    /// below it (indistinguishable from the bar in this run), by machine, worst first.
    pub unclear: Vec<Outlier>,
    /// The report's sentences (the rule, then one per outlier machine).
    pub sentences: Vec<String>,
    /// The runs, for the page (not in the JSON: `machines` names them there).
    #[serde(skip)]
    pub runs: Vec<Run>,
}

impl Fleet {
    /// The fleet view of `m`.
    pub fn of(m: &Matched) -> Self {
        let cells: Vec<FleetCell> = m
            .rows
            .iter()
            .map(|r| {
                let medians_ns: Vec<Option<f64>> = r
                    .by_result
                    .iter()
                    .map(|x| x.as_ref().map(|x| x.point.median_ns))
                    .collect();
                let held: Vec<f64> = medians_ns.iter().flatten().copied().collect();
                FleetCell {
                    stage: r.group.clone(),
                    measurement: r.key.clone(),
                    n: r.by_result
                        .iter()
                        .map(|x| x.as_ref().map(|x| x.point.n))
                        .collect(),
                    fleet_median_ns: median(&held).unwrap_or(f64::NAN),
                    medians_ns,
                    medians_ci_ns: r
                        .by_result
                        .iter()
                        .map(|x| x.as_ref().and_then(|x| x.point.median_ci_ns))
                        .collect(),
                    medians_units_ci_ns: r
                        .by_result
                        .iter()
                        .map(|x| {
                            x.as_ref()
                                .and_then(|x| x.point.units.as_ref()?.median_ci_ns)
                        })
                        .collect(),
                    units: r
                        .by_result
                        .iter()
                        .map(|x| x.as_ref().and_then(|x| Some(x.point.units.as_ref()?.units)))
                        .collect(),
                    medians: r
                        .by_result
                        .iter()
                        .map(|x| x.as_ref().map(|x| x.median()))
                        .collect(),
                }
            })
            .collect();
        let machines = m
            .results
            .iter()
            .map(|(name, r)| Machine {
                file: name.clone(),
                hostname: r.fingerprint.hostname.clone(),
                kernel: r.fingerprint.kernel_release.clone(),
                cpu_model: r.fingerprint.cpu_model.clone(),
            })
            .collect();
        let mut f = Fleet {
            machines,
            outliers: outliers(&cells, OUTLIER_FACTOR, true),
            unclear: outliers(&cells, OUTLIER_FACTOR, false),
            cells,
            outlier_factor: OUTLIER_FACTOR,
            sentences: Vec::new(),
            runs: m.runs(),
        };
        f.sentences = f.findings().iter().map(|s| s.text.clone()).collect();
        f
    }
}

/// Every (machine, cell) whose median is more than `factor` × the cell's fleet median
/// and, as `clear` asks, whose interval lies above that bar (true) or reaches below it
/// (false), by machine, each machine's worst first.
fn outliers(cells: &[FleetCell], factor: f64, clear: bool) -> Vec<Outlier> {
    let mut out: Vec<Outlier> = cells
        .iter()
        .enumerate()
        .flat_map(|(c, cell)| {
            cell.medians_ns
                .iter()
                .enumerate()
                .filter_map(move |(m, v)| {
                    let v = (*v)?;
                    let bar = Est::exact(factor * cell.fleet_median_ns);
                    let above = bar.below(&cell.est(m));
                    (v > bar.value && above == clear).then(|| Outlier {
                        machine: m,
                        cell: c,
                        ratio: v / cell.fleet_median_ns.max(f64::MIN_POSITIVE),
                    })
                })
        })
        .collect();
    out.sort_by(|a, b| a.machine.cmp(&b.machine).then(b.ratio.total_cmp(&a.ratio)));
    out
}

impl Fleet {
    /// The rule as written in the sentences: `×2`.
    fn factor_text(&self) -> String {
        ratio(self.outlier_factor)
    }

    /// The sentences of the report, each with its claims: the rule and how many cells
    /// it judged, then one per machine with outliers (or that there are none), then the
    /// medians above the bar that their intervals do not separate from it.
    pub fn findings(&self) -> Vec<Sentence> {
        let mut out = self.outlier_findings();
        if !self.unclear.is_empty() {
            let k = self.factor_text();
            let mut s = Sentence::new(format!(
                "{} more {} above {k} the fleet median in point value, but {INDISTINGUISHABLE} from that bar (the 95 % interval of the median over its run's units reaches below it, or there is none): ",
                self.unclear.len(),
                if self.unclear.len() == 1 {
                    "median lies"
                } else {
                    "medians lie"
                }
            ));
            s.claim(Claim::Threshold { shown: k });
            for (i, o) in self.unclear.iter().take(NAMED_CELLS).enumerate() {
                let cell = &self.cells[o.cell];
                let mine = cell.est(o.machine);
                let bar = Est::exact(self.outlier_factor * cell.fleet_median_ns);
                s.claim(Claim::Verdict {
                    stat: Stat::Median,
                    a: bar,
                    b: mine,
                    stated: Order::Indistinguishable,
                });
                s.push(&format!(
                    "{}{} on {} ({}), {}{} against a bar of {}",
                    if i > 0 { "; " } else { "" },
                    cell.measurement,
                    self.machines[o.machine].hostname,
                    cell.stage,
                    with_interval(&mine, ns),
                    basis_note(&[&mine]),
                    ns(bar.value)
                ));
            }
            if self.unclear.len() > NAMED_CELLS {
                s.push(&format!("; and {} more", self.unclear.len() - NAMED_CELLS));
            }
            s.push(".");
            out.push(s);
        }
        out
    }

    /// The rule, then one sentence per machine with outliers (or that there are none).
    fn outlier_findings(&self) -> Vec<Sentence> {
        let k = self.factor_text();
        let mut rule = Sentence::new(format!(
            "{} machines, {} measurements held by at least two of them. An outlier is a machine whose median of a measurement is more than {k} the fleet median of that measurement (the median of the medians of the machines that hold it).",
            self.machines.len(),
            self.cells.len()
        ));
        rule.claim(Claim::Threshold { shown: k.clone() });
        let mut out = vec![rule];
        if self.outliers.is_empty() {
            let mut s = Sentence::new(if self.unclear.is_empty() {
                format!(
                    "No machine is an outlier: no median is more than {k} the fleet median of its measurement."
                )
            } else {
                format!(
                    "No machine is shown to be an outlier: no median's 95 % interval over its run's units lies above {k} the fleet median of its measurement."
                )
            });
            s.claim(Claim::Threshold { shown: k });
            out.push(s);
            return out;
        }
        for (m, machine) in self.machines.iter().enumerate() {
            let mine: Vec<&Outlier> = self.outliers.iter().filter(|o| o.machine == m).collect();
            if mine.is_empty() {
                continue;
            }
            let held = self
                .cells
                .iter()
                .filter(|c| c.medians_ns[m].is_some())
                .count();
            let mut s = Sentence::new(format!(
                "{} ({}) is an outlier in {} of the {held} measurements it holds (median more than {k} the fleet median, its 95 % interval over its run's units above it; {WITHIN_RUN}): ",
                machine.hostname,
                machine.file,
                mine.len()
            ));
            s.claim(Claim::Threshold { shown: k.clone() });
            let named: Vec<Sentence> = mine
                .iter()
                .take(NAMED_CELLS)
                .map(|o| self.outlier_clause(o))
                .collect();
            for (i, clause) in named.into_iter().enumerate() {
                if i > 0 {
                    s.push("; ");
                }
                s.append(clause);
            }
            if mine.len() > NAMED_CELLS {
                s.push(&format!("; and {} more", mine.len() - NAMED_CELLS));
            }
            s.push(".");
            out.push(s);
        }
        out
    }

    /// `nanosleep 1 µs load 0 (sweep): 300 µs against a fleet median of 100 µs (×3)`.
    fn outlier_clause(&self, o: &Outlier) -> Sentence {
        let cell = &self.cells[o.cell];
        let value = cell.medians_ns[o.machine].unwrap_or(f64::NAN);
        let n = cell.n[o.machine].unwrap_or(0);
        let shown = ns(value);
        let small = if n < SMALL_SAMPLE {
            format!(", n = {n}")
        } else {
            String::new()
        };
        let mut s = Sentence::new(format!(
            "{} ({}): {shown}{small} against a fleet median of {} ({})",
            cell.measurement,
            cell.stage,
            ns(cell.fleet_median_ns),
            ratio(o.ratio)
        ));
        s.claim(Claim::Quote {
            stat: Stat::Median,
            n,
            shown,
        })
        .claim(Claim::Median {
            of: cell.held(),
            value: cell.fleet_median_ns,
        })
        .claim(Claim::Verdict {
            stat: Stat::Median,
            a: Est::exact(self.outlier_factor * cell.fleet_median_ns),
            b: cell.est(o.machine),
            stated: Order::Below,
        });
        s
    }

    /// One row per machine: its file, host, kernel and CPU, how many outliers, then its
    /// median of every cell (an outlier marked).
    pub fn table(&self) -> Table {
        let many_stages = self.cells.iter().any(|c| c.stage != self.cells[0].stage);
        let mut header: Vec<String> = ["file", "host", "kernel", "CPU", "outliers"]
            .map(String::from)
            .to_vec();
        header.extend(self.cells.iter().map(|c| {
            if many_stages {
                format!("{}: {}", c.stage, c.measurement)
            } else {
                c.measurement.clone()
            }
        }));
        let mut t = Table::new(header);
        for (m, machine) in self.machines.iter().enumerate() {
            let count = self.outliers.iter().filter(|o| o.machine == m).count();
            let mut row = vec![
                Cell::Text(machine.file.clone()),
                Cell::Text(machine.hostname.clone()),
                Cell::Text(machine.kernel.clone()),
                Cell::Text(machine.cpu_model.clone()),
                Cell::Num(count.to_string()),
            ];
            row.extend(
                self.cells
                    .iter()
                    .enumerate()
                    .map(|(c, cell)| match cell.medians_ns[m] {
                        None => Cell::Empty,
                        Some(v) if self.outliers.iter().any(|o| o.machine == m && o.cell == c) => {
                            Cell::Warn(format!("{} !", ns(v)))
                        }
                        Some(v) => Cell::Num(ns(v)),
                    }),
            );
            t.row(row);
        }
        let mut fleet_row = vec![
            Cell::Text("fleet median".into()),
            Cell::Empty,
            Cell::Empty,
            Cell::Empty,
            Cell::Num(self.outliers.len().to_string()),
        ];
        fleet_row.extend(self.cells.iter().map(|c| Cell::Num(ns(c.fleet_median_ns))));
        t.row(fleet_row);
        t
    }
}

impl View for Fleet {
    /// The fleet as both renderers draw it.
    fn rendered(&self) -> Rendered {
        let k = self.factor_text();
        Rendered {
            title: format!("sleeplab compare: a fleet of {}", self.machines.len()),
            subtitle: format!(
                "Each machine's median of every measurement at least two hold; an outlier is more than {k} the fleet median."
            ),
            badges: vec![Badge {
                text: format!("{} outliers", self.outliers.len()),
                tone: if self.outliers.is_empty() {
                    Tone::Neutral
                } else {
                    Tone::Bad
                },
            }],
            head: vec![format!(
                "Medians; \"!\" marks an outlier (more than {k} the fleet median)."
            )],
            table: self.table(),
            table_section: ("machines".into(), "The machines".into()),
            note: None,
            sentences: self.sentences.clone(),
            figure: None,
            runs: self.runs.clone(),
            run_labels: self.machines.iter().map(|m| m.file.clone()).collect(),
            footer: format!(
                "Compared by sleeplab {}: {} results, {} measurements.",
                env!("CARGO_PKG_VERSION"),
                self.machines.len(),
                num(self.cells.len() as f64)
            ),
        }
    }
}

#[cfg(test)]
mod tests;
