//! Horizontal bars stacked by part: where a wake's lateness went (`explain`, `sweep
//! --trace`), one bar per cell, one segment per component in a colour of its own. Each
//! bar's total is written at its end; the value axis is linear from 0, so a segment's
//! length is its share of the bar and bars compare by length.

use super::frame::{category_chart, drawable};
use super::xy::Axis;
use super::{Area, DESC_SIZE, DrawResult, FONT};
use crate::units;
use plotters::prelude::*;

/// One bar: its row's name and its segments' values.
#[derive(Debug, Clone, PartialEq)]
pub struct StackedBar {
    /// The row's name.
    pub name: String,
    /// One value per segment, in the order of [`Stacked::segments`]; `None` leaves the
    /// row empty (a cell without this bar, e.g. too few wakes for a tail).
    pub values: Option<Vec<f64>>,
}

impl StackedBar {
    /// The bar's length: the sum of its drawable values (0 for an empty row).
    pub fn total(&self) -> f64 {
        self.values
            .iter()
            .flatten()
            .copied()
            .filter(|&v| v.is_finite() && v > 0.0)
            .sum()
    }
}

/// A stacked horizontal bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Stacked {
    /// A title above the plot, if any.
    pub title: Option<String>,
    /// The segments (name, colour), in the order they stack from the axis.
    pub segments: Vec<(String, RGBColor)>,
    /// Bars, top to bottom.
    pub bars: Vec<StackedBar>,
    /// The value axis (horizontal); linear, from 0, for honest lengths.
    pub x: Axis,
}

/// Room right of the longest bar for its total, as a share of the axis.
const LABEL_ROOM: f64 = 1.22;

impl Stacked {
    /// The height that gives every bar room: 30 px per row plus axes and the title.
    pub fn height(&self) -> u32 {
        90 + 30 * self.bars.len().max(1) as u32 + if self.title.is_some() { 26 } else { 0 }
    }

    /// The longest bar's length.
    pub fn longest(&self) -> f64 {
        self.bars.iter().map(StackedBar::total).fold(0.0, f64::max)
    }

    /// Draws the chart.
    pub fn draw(&self, root: &Area<'_>) -> DrawResult {
        let area = match &self.title {
            Some(t) => root.titled(t, (FONT, DESC_SIZE + 1).into_font().color(&BLACK))?,
            None => root.clone(),
        };
        let mut x = self.x.clone();
        if x.range.is_none() {
            let hi = self.longest();
            x.range = Some((0.0, if hi > 0.0 { hi * LABEL_ROOM } else { 1.0 }));
        }
        let names: Vec<String> = self.bars.iter().map(|b| b.name.clone()).collect();
        category_chart(&area, &x, &names, [], |c| {
            let rows = self.bars.len();
            for (i, b) in self.bars.iter().enumerate() {
                let Some(values) = &b.values else {
                    continue;
                };
                let y = (rows - 1 - i) as f64;
                let mut at = c.origin();
                for (&v, (_, color)) in values.iter().zip(&self.segments) {
                    if !(drawable(x.scale, v) && v > 0.0) {
                        continue;
                    }
                    c.rect(
                        (at, y - 0.32),
                        (at + v, y + 0.32),
                        ShapeStyle::from(&color.mix(0.9)).filled(),
                    )?;
                    at += v;
                }
                c.label((at, y), &units::ns(b.total()))?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::axis::Unit;
    use crate::charts::{color, css, render};

    fn chart() -> Stacked {
        Stacked {
            title: Some("typical".into()),
            segments: vec![("slack".into(), color(1)), ("run queue".into(), color(4))],
            bars: vec![
                StackedBar {
                    name: "1 ms, load 0".into(),
                    values: Some(vec![50_000.0, 3_000.0]),
                },
                StackedBar {
                    name: "1 ms, load 2".into(),
                    values: None,
                },
                StackedBar {
                    name: "100 µs, load 0".into(),
                    values: Some(vec![0.0, f64::NAN]),
                },
            ],
            x: Axis::linear("lateness", Unit::Ns),
        }
    }

    #[test]
    fn totals_skip_what_cannot_be_drawn() {
        let c = chart();
        assert_eq!(c.bars[0].total(), 53_000.0);
        assert_eq!(c.bars[1].total(), 0.0);
        assert_eq!(c.bars[2].total(), 0.0);
        assert_eq!(c.longest(), 53_000.0);
        assert_eq!(c.height(), 90 + 90 + 26);
    }

    #[test]
    fn draws_a_segment_per_nonzero_value_and_every_row_name() {
        let c = chart();
        let svg = render("s", "stacked", (600, c.height()), |a| c.draw(a))
            .unwrap()
            .svg;
        for name in ["1 ms, load 0", "1 ms, load 2", "100 µs, load 0", "typical"] {
            assert!(svg.contains(name), "{name} missing");
        }
        // Two segments drawn, each in its colour; the total at the bar's end.
        for (_, col) in &c.segments {
            assert_eq!(svg.matches(&css(*col).to_uppercase()).count(), 1, "{col:?}");
        }
        assert!(svg.contains("53 µs"), "{svg}");
    }
}
