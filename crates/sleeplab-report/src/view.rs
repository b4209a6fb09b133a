//! A flat view of what a result holds: a single experiment, or every stage of a survey.
//! Sections and findings ask it for the data they draw from.

use sleeplab_results::cpu::CpuData;
use sleeplab_results::model::{ExperimentData, ResultFile, SurveyData};
use sleeplab_results::pace::PaceData;
use sleeplab_results::runtimes::RuntimesData;
use sleeplab_results::short::ShortData;
use sleeplab_results::sweep::{SweepCell, SweepData};
use sleeplab_results::timers::TimersData;

/// One experiment's result, with the survey stage that produced it (if any).
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// The stage name (`sweep`, `sweep-slack`…) when inside a survey.
    pub stage: Option<&'a str>,
    /// The result.
    pub result: &'a ResultFile,
}

/// Everything a report draws from.
#[derive(Debug, Clone)]
pub struct Results<'a> {
    /// The file as given (a survey or one experiment).
    pub top: &'a ResultFile,
    /// The survey, when the file is one.
    pub survey: Option<&'a SurveyData>,
    /// Every experiment result, in order (the stages' results for a survey).
    pub entries: Vec<Entry<'a>>,
}

impl<'a> Results<'a> {
    /// The view of `top`.
    pub fn of(top: &'a ResultFile) -> Self {
        match <&SurveyData>::try_from(&top.data) {
            Ok(s) => Self {
                top,
                survey: Some(s),
                entries: s
                    .results
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| <&SurveyData>::try_from(&r.data).is_err())
                    .map(|(i, r)| Entry {
                        stage: s.stage_of(i).map(|st| st.name.as_str()),
                        result: r,
                    })
                    .collect(),
            },
            Err(_) => Self {
                top,
                survey: None,
                entries: vec![Entry {
                    stage: None,
                    result: top,
                }],
            },
        }
    }

    /// The data of type `T` of every entry that holds one, in order.
    pub fn all<T>(&self) -> Vec<(Entry<'a>, &'a T)>
    where
        &'a T: TryFrom<&'a ExperimentData>,
    {
        self.entries
            .iter()
            .filter_map(|e| <&T>::try_from(&e.result.data).ok().map(|d| (*e, d)))
            .collect()
    }

    /// The first entry holding data of type `T`, with its data.
    pub fn first<T>(&self) -> Option<(Entry<'a>, &'a T)>
    where
        &'a T: TryFrom<&'a ExperimentData>,
    {
        self.entries
            .iter()
            .find_map(|e| <&T>::try_from(&e.result.data).ok().map(|d| (*e, d)))
    }

    /// Every sweep, in order.
    pub fn sweeps(&self) -> Vec<&'a SweepData> {
        self.all::<SweepData>()
            .into_iter()
            .map(|(_, d)| d)
            .collect()
    }

    /// The sweep that maps requested vs actual: the one with the most distinct
    /// (mechanism, request, load) cells.
    pub fn main_sweep(&self) -> Option<MainSweep<'a>> {
        self.sweeps()
            .into_iter()
            .filter(|s| !s.cells.is_empty())
            .max_by_key(|s| {
                let mut keys: Vec<(&str, u64, usize)> = s
                    .cells
                    .iter()
                    .map(|c| (c.mechanism.as_str(), c.requested_ns, c.load))
                    .collect();
                keys.sort_unstable();
                keys.dedup();
                // Prefer the first on ties (max_by_key keeps the last): weight by position.
                keys.len()
            })
            .map(MainSweep::new)
    }

    /// The sweep that compares timer slacks: the first with cells measured at two or
    /// more slacks for the same (mechanism, request, load).
    pub fn slack_sweep(&self) -> Option<SlackSweep<'a>> {
        self.sweeps().into_iter().find_map(SlackSweep::new)
    }

    /// The first `short` result.
    pub fn short(&self) -> Option<(Entry<'a>, &'a ShortData)> {
        self.first()
    }

    /// The first `pace` result.
    pub fn pace(&self) -> Option<(Entry<'a>, &'a PaceData)> {
        self.first()
    }

    /// The first `cpu` result.
    pub fn cpu(&self) -> Option<(Entry<'a>, &'a CpuData)> {
        self.first()
    }

    /// The first `timers` result.
    pub fn timers(&self) -> Option<(Entry<'a>, &'a TimersData)> {
        self.first()
    }

    /// The first `runtimes` result.
    pub fn runtimes(&self) -> Option<(Entry<'a>, &'a RuntimesData)> {
        self.first()
    }

    /// Every note of every result, without repeats.
    pub fn notes(&self) -> Vec<&'a str> {
        let mut out: Vec<&str> = Vec::new();
        for n in self
            .top
            .notes
            .iter()
            .chain(self.entries.iter().flat_map(|e| e.result.notes.iter()))
        {
            if !out.contains(&n.as_str()) {
                out.push(n);
            }
        }
        out
    }
}

/// The main sweep, at its main timer slack (the one most of its cells ran under).
#[derive(Debug, Clone)]
pub struct MainSweep<'a> {
    /// The sweep.
    pub data: &'a SweepData,
    /// The slack its charts use.
    pub slack: u64,
}

impl<'a> MainSweep<'a> {
    fn new(data: &'a SweepData) -> Self {
        let mut slacks = distinct(data.cells.iter().map(|c| c.timer_slack_ns));
        // The slack with most cells; ties go to the larger (the default).
        slacks.sort_by_key(|&s| {
            (
                data.cells.iter().filter(|c| c.timer_slack_ns == s).count(),
                s,
            )
        });
        Self {
            data,
            slack: slacks.last().copied().unwrap_or(0),
        }
    }

    /// Cells at the main slack.
    pub fn cells(&self) -> impl Iterator<Item = &'a SweepCell> + '_ {
        self.data
            .cells
            .iter()
            .filter(move |c| c.timer_slack_ns == self.slack)
    }

    /// The cell (mechanism, request, load) at the main slack.
    pub fn cell(&self, mechanism: &str, requested_ns: u64, load: usize) -> Option<&'a SweepCell> {
        self.data.cell(mechanism, requested_ns, load, self.slack)
    }

    /// Mechanisms with cells, in config order.
    pub fn mechanisms(&self) -> Vec<&'a str> {
        let mut out: Vec<&str> = Vec::new();
        for m in self
            .data
            .config
            .mechanisms
            .iter()
            .map(String::as_str)
            .chain(self.data.cells.iter().map(|c| c.mechanism.as_str()))
        {
            if !out.contains(&m) && self.cells().any(|c| c.mechanism == m) {
                out.push(m);
            }
        }
        out
    }

    /// Load levels measured, ascending.
    pub fn loads(&self) -> Vec<usize> {
        distinct(self.cells().map(|c| c.load as u64))
            .into_iter()
            .map(|l| l as usize)
            .collect()
    }

    /// Requests measured, ascending.
    pub fn requests(&self) -> Vec<u64> {
        distinct(self.cells().map(|c| c.requested_ns))
    }
}

/// A sweep measured at two or more timer slacks.
#[derive(Debug, Clone)]
pub struct SlackSweep<'a> {
    /// The sweep.
    pub data: &'a SweepData,
    /// The larger slack (normally Linux's default, 50 µs).
    pub high: u64,
    /// The smaller slack (normally 1 ns).
    pub low: u64,
}

impl<'a> SlackSweep<'a> {
    fn new(data: &'a SweepData) -> Option<Self> {
        let slacks = distinct(data.cells.iter().map(|c| c.timer_slack_ns));
        let (low, high) = (*slacks.first()?, *slacks.last()?);
        if low == high {
            return None;
        }
        let paired = data.cells.iter().any(|c| {
            c.timer_slack_ns == high
                && data
                    .cell(&c.mechanism, c.requested_ns, c.load, low)
                    .is_some()
        });
        paired.then_some(Self { data, high, low })
    }

    /// (cell at the high slack, the same cell at the low slack), for every pair.
    pub fn pairs(&self) -> Vec<(&'a SweepCell, &'a SweepCell)> {
        self.data
            .cells
            .iter()
            .filter(|c| c.timer_slack_ns == self.high)
            .filter_map(|c| {
                self.data
                    .cell(&c.mechanism, c.requested_ns, c.load, self.low)
                    .map(|l| (c, l))
            })
            .collect()
    }
}

/// Distinct values, ascending.
pub fn distinct(values: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut v: Vec<u64> = values.collect();
    v.sort_unstable();
    v.dedup();
    v
}
