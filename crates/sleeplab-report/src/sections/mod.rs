//! One module per kind of section. Each returns the sections its data supports, and
//! nothing when the result holds none of it.

pub(crate) mod explain;
pub(crate) mod frontier;
pub(crate) mod notes;
pub(crate) mod precise;
pub(crate) mod runtimes;
pub(crate) mod seeds;
pub(crate) mod short;
pub(crate) mod simulate;
pub(crate) mod stages;
pub(crate) mod sweep;
pub(crate) mod timers;
pub(crate) mod tune;

use super::charts::{Chart, render};
use super::html::Figure;

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
