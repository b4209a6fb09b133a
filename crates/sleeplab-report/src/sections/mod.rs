//! The page's registry: one module per kind of section, the sections in page order
//! ([`SECTIONS`]) and the findings in rank order ([`FINDINGS`]). Each entry returns
//! what its data supports, and nothing when the result holds none of it.
//!
//! A new experiment needs no code here: its data's view (`ResultData::view`) is drawn
//! by [`views`] and its own findings (`ResultData::findings`) are stated after these.
//! One that wants charts adds its module here and its line in [`SECTIONS`]; a finding
//! across experiments goes in `findings/` and its line in [`FINDINGS`]. `lib.rs` draws
//! the page and states the findings from these lists alone.

pub(crate) mod explain;
pub(crate) mod frontier;
pub(crate) mod notes;
pub(crate) mod precise;
pub(crate) mod program;
pub(crate) mod runtimes;
pub(crate) mod seeds;
pub(crate) mod short;
pub(crate) mod simulate;
pub(crate) mod stages;
pub(crate) mod sweep;
pub(crate) mod timers;
pub(crate) mod tune;
pub(crate) mod views;

use super::charts::{Chart, render};
use super::findings::{self as f, Finding};
use super::html::{Figure, Section};
use super::view::Results;
use sleeplab_results::Wording;

/// What draws one kind of section: the sections the result supports (none where it
/// holds no such data); `Wording` words what a sentence asks the reader to run.
pub(crate) type Draw = fn(&Results<'_>, Wording) -> Vec<Section>;

/// What states one finding: `None` where the result lacks the data it needs.
pub(crate) type State = fn(&Results<'_>) -> Option<Finding>;

/// Every kind of section, in the page's order.
pub(crate) const SECTIONS: &[Draw] = &[
    sweep::sections,
    explain::sections,
    |r, _| short::section(r).into_iter().collect(),
    |r, _| seeds::short::section(r).into_iter().collect(),
    precise::sections,
    |r, _| simulate::section(r).into_iter().collect(),
    |r, _| timers::section(r).into_iter().collect(),
    |r, _| runtimes::section(r).into_iter().collect(),
    |r, hints| seeds::runtimes::section(r, hints).into_iter().collect(),
    |r, _| seeds::periodic::section(r).into_iter().collect(),
    |r, _| tune::section(r).into_iter().collect(),
    // Every experiment whose data draws itself (`ResultData::view`), after those above.
    views::sections,
    |r, _| stages::section(r).into_iter().collect(),
    |r, _| notes::section(r).into_iter().collect(),
];

/// Every finding that reads across experiments, most useful first; the findings each
/// experiment states of its own data (`ResultData::findings`) follow them (`lib.rs`).
/// Each traced cell's sentence is its section's, folded under its chart, and the answer
/// names the largest part: the list stays a page of findings, not one per cell.
pub(crate) const FINDINGS: &[State] = &[
    f::cheapest_short_sleep,
    f::timer_slack,
    f::poll_rounding,
    f::newer_waits,
    f::pace_loop,
    f::runtime_floors,
    f::binding_gain,
    f::load_effect,
    f::loaded_faster,
    f::long_sleeps,
    f::spin_cost,
    f::early_wakeups,
    f::first_calls,
    f::tune_best,
    f::tune_none,
];

/// Draws a chart of `size` with `draw`, into a figure with `caption`.
pub(crate) fn figure(
    id: &str,
    label: &str,
    size: (u32, u32),
    caption: String,
    draw: impl FnOnce(&super::charts::Area<'_>) -> super::charts::DrawResult,
) -> Figure {
    Figure {
        chart: render(id, label, size, draw),
        caption,
        legend: Vec::new(),
    }
}

/// Draws a chart (for grids).
pub(crate) fn chart(
    id: &str,
    label: &str,
    size: (u32, u32),
    draw: impl FnOnce(&super::charts::Area<'_>) -> super::charts::DrawResult,
) -> Result<Chart, String> {
    render(id, label, size, draw)
}
