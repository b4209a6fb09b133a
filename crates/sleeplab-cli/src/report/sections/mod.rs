//! One module per kind of section. Each returns the sections its data supports, and
//! nothing when the result holds none of it.

pub mod explain;
pub mod frontier;
pub mod notes;
pub mod precise;
pub mod runtimes;
pub mod seeds;
pub mod short;
pub mod simulate;
pub mod stages;
pub mod sweep;
pub mod timers;
pub mod tune;

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
