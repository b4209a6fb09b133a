//! A value per category as a horizontal bar, with a whisker from a low to a high value:
//! seed 002 figure 1 (mean frame error, whiskers from min to max), runtimes compared.

use super::frame::{Swatch, category_chart, drawable};
use super::xy::Axis;
use super::{Area, DrawResult};
use plotters::prelude::*;

/// One bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The category.
    pub name: String,
    /// The bar's length.
    pub value: f64,
    /// The whisker, when there is one: (low, high).
    pub whisker: Option<(f64, f64)>,
    /// Its colour.
    pub color: RGBColor,
}

/// A horizontal bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    /// Bars, top to bottom.
    pub bars: Vec<Bar>,
    /// The value axis (horizontal).
    pub x: Axis,
    /// What the bar and the whisker show, for the legend: e.g. ("mean", "min–max").
    pub legend: Option<(String, String)>,
}

impl Bars {
    /// The height that gives every bar room.
    pub fn height(&self) -> u32 {
        100 + 30 * self.bars.len().max(1) as u32
    }

    /// Draws the chart.
    pub fn draw(&self, root: &Area<'_>) -> DrawResult {
        let shown = |v: f64| drawable(self.x.scale, v);
        let values = self.bars.iter().flat_map(|b| {
            std::iter::once(b.value).chain(b.whisker.into_iter().flat_map(|(l, h)| [l, h]))
        });
        let names: Vec<String> = self.bars.iter().map(|b| b.name.clone()).collect();
        category_chart(root, &self.x, &names, values, |c| {
            let rows = self.bars.len();
            // Bars start at zero where the axis reaches below it (a change).
            let x0 = if c.origin() < 0.0 { 0.0 } else { c.origin() };
            for (i, b) in self.bars.iter().enumerate() {
                let y = (rows - 1 - i) as f64;
                if shown(b.value) {
                    c.rect(
                        (x0, y - 0.32),
                        (b.value, y + 0.32),
                        ShapeStyle::from(&b.color.mix(0.85)).filled(),
                    )?;
                }
                if let Some((l, h)) = b.whisker.filter(|&(l, h)| shown(l) && shown(h)) {
                    let s = ShapeStyle::from(&BLACK.mix(0.8)).stroke_width(2);
                    c.path(vec![(l, y), (h, y)], s)?;
                    c.path(vec![(l, y - 0.2), (l, y + 0.2)], s)?;
                    c.path(vec![(h, y - 0.2), (h, y + 0.2)], s)?;
                }
            }
            if let Some((bar, whisker)) = &self.legend {
                let first = self.bars.first().map_or(super::color(0), |b| b.color);
                c.legend_entry(bar, Swatch::Box(first))?;
                c.legend_entry(whisker, Swatch::Line(BLACK.mix(0.8)))?;
                c.legend()?;
            }
            Ok(())
        })
    }
}
