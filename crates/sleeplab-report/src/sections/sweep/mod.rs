//! The sweep's sections, one file per topic: [`requested`] (requested vs actual, seed
//! 000's log-log scatter and seed 002 figure 2's axes, with load levels as series),
//! [`timertest`] (seed 000's own tables, mean and σ per request × load, and its scatter
//! of every kept sample with the 0 request on a strip of its own), [`figure2`] (seed 002
//! figure 2, when the sweep measured the precise-sleep strategies), [`distributions`],
//! [`cpu`] (what waiting costs the CPU) and [`slack`] (timer slack's effect). Every
//! caption is a checked [`Sentence`](sleeplab_stats::Sentence).

mod captions;
mod cpu;
mod distributions;
mod figure2;
mod requested;
mod slack;
#[cfg(test)]
mod tests;
mod timertest;

use crate::charts::color;
use crate::html::Section;
use crate::units::ns;
use crate::view::{MainSweep, Results};
use plotters::style::RGBColor;
use sleeplab::wait::{self, Family};
use sleeplab_results::Wording;
use sleeplab_results::sweep::SweepCell;
use sleeplab_stats::{Sentence, Stat, Summary, n_clause, small_n};

/// The mechanisms the overview charts show, when measured (one per family, and spin).
pub const HIGHLIGHT: [&str; 6] = [
    "nanosleep",
    "select",
    "poll",
    "timerfd-reuse",
    "futex",
    "spin",
];

/// The page's one picture of the machine (under the answer): the main sweep's
/// requested against actual, where there is a main sweep.
pub fn hero(r: &Results<'_>) -> Option<crate::html::Figure> {
    r.main_sweep().map(|m| requested::hero(&m))
}

/// Every sweep section the results support (`hints` words the command that measures
/// seed 002's figure 2).
pub fn sections(r: &Results<'_>, hints: Wording) -> Vec<Section> {
    let mut out = Vec::new();
    if let Some(m) = r.main_sweep() {
        let mut rva = requested::section(&m, r.top.fingerprint.cpu_count);
        let fig2 = figure2::section(&r.sweeps(), hints);
        if fig2.is_none() {
            rva.blocks.push(figure2::absent(hints));
        }
        out.push(rva);
        out.extend(timertest::section(&m));
        out.extend(fig2);
        out.extend(distributions::section(&m));
    }
    if let Some(s) = r.slack_sweep() {
        out.push(slack::section(&s));
    }
    if let Some(m) = r.main_sweep() {
        out.extend(cpu::section(&m));
    }
    out
}

/// Every caption the sweep's sections build from `r` that compares, with its claims
/// (the walk over every verdict's producer checks them: `report/verdicts.rs`).
#[cfg(test)]
pub(crate) fn captions(r: &Results<'_>) -> Vec<Sentence> {
    let mut out = Vec::new();
    if let Some(m) = r.main_sweep() {
        out.push(requested::hero_caption(&m));
        out.push(requested::load_caption(&m, r.top.fingerprint.cpu_count));
        out.extend(
            m.mechanisms()
                .iter()
                .map(|mech| timertest::tables_caption(&m, mech)),
        );
        out.push(cpu::caption(&m, &highlighted(&m)));
    }
    if let Some(s) = r.slack_sweep() {
        out.push(slack::caption(&s));
    }
    out
}

/// Whether a mechanism really sleeps (not spin or yield).
fn sleeps(name: &str) -> bool {
    !matches!(
        wait::find(name).map(|m| m.family),
        Some(Family::Busy) | None
    )
}

/// Whether a cell is a sleep to compare: a sleeping mechanism none of whose calls
/// returned early (a periodic timer's expiry is not a sleep of the requested length).
fn honest(c: &SweepCell) -> bool {
    sleeps(&c.mechanism) && c.summary.early_count == 0 && c.summary.count > 0
}

/// The highlighted mechanisms present (at least two), with their colours; otherwise the
/// first six measured.
fn highlighted<'a>(m: &MainSweep<'a>) -> Vec<(&'a str, RGBColor)> {
    let mechs = m.mechanisms();
    let mut chosen: Vec<&str> = HIGHLIGHT
        .iter()
        .filter_map(|h| mechs.iter().copied().find(|m| m == h))
        .collect();
    if chosen.len() < 2 {
        chosen = mechs
            .iter()
            .copied()
            .filter(|n| *n != "yield")
            .take(6)
            .collect();
    }
    chosen
        .into_iter()
        .enumerate()
        .map(|(i, n)| (n, color(i)))
        .collect()
}

/// The colour of load level number `i` (0 = idle).
fn load_color(i: usize) -> RGBColor {
    [color(0), color(1), color(2), color(4), color(7)][i.min(4)]
}

fn load_name(load: usize) -> String {
    match load {
        0 => "no load".into(),
        1 => "1 busy thread".into(),
        n => format!("{n} busy threads"),
    }
}

/// `stat` of `s` in the report's units, quoted ([`Sentence::quote`]).
fn quote(out: &mut Sentence, s: &Summary, stat: Stat) -> Option<String> {
    out.quote(s, stat, ns)
}
