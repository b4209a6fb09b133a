//! Several values per category on one line (a "dumbbell"): the same wait under two
//! settings, e.g. timer slack at its default and at 1 ns. Categories are rows, so long
//! names stay readable.

use super::frame::{category_chart, drawable};
use super::xy::Axis;
use super::{Area, DrawResult};
use plotters::prelude::*;

/// A dumbbell chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Dumbbell {
    /// Category names, top to bottom.
    pub rows: Vec<String>,
    /// The groups compared (legend name, colour).
    pub groups: Vec<(String, RGBColor)>,
    /// `values[row][group]`; a missing value is not drawn.
    pub values: Vec<Vec<Option<f64>>>,
    /// The value axis (horizontal).
    pub x: Axis,
}

impl Dumbbell {
    /// The height that gives every row room: 28 px per row plus axes and legend.
    pub fn height(&self) -> u32 {
        110 + 28 * self.rows.len().max(1) as u32
    }

    /// Draws the chart.
    pub fn draw(&self, root: &Area<'_>) -> DrawResult {
        let shown = |v: f64| drawable(self.x.scale, v);
        let values = self.values.iter().flatten().flatten().copied();
        category_chart(root, &self.x, &self.rows, values, |c| {
            let rows = self.rows.len();
            for (i, row) in self.values.iter().enumerate() {
                let y = (rows - 1 - i) as f64;
                let present: Vec<f64> = row
                    .iter()
                    .flatten()
                    .copied()
                    .filter(|&v| shown(v))
                    .collect();
                if present.len() >= 2 {
                    let lo = present.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = present.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    c.path(
                        vec![(lo, y), (hi, y)],
                        ShapeStyle::from(&BLACK.mix(0.25)).stroke_width(4),
                    )?;
                }
            }
            for (g, (name, color)) in self.groups.iter().enumerate() {
                let pts: Vec<(f64, f64)> = self
                    .values
                    .iter()
                    .enumerate()
                    .filter_map(|(i, row)| {
                        row.get(g)
                            .copied()
                            .flatten()
                            .filter(|&v| shown(v))
                            .map(|v| (v, (rows - 1 - i) as f64))
                    })
                    .collect();
                c.dots(pts, *color, Some(name))?;
            }
            c.legend()
        })
    }
}
