//! A value per category as a horizontal bar, with a whisker from a low to a high value:
//! seed 002 figure 1 (mean frame error, whiskers from min to max), runtimes compared.

use super::xy::{Axis, Scale};
use super::{
    Area, DESC_SIZE, DrawResult, FONT, TICK_SIZE, bold_grid, decade_range, draw_category_labels,
    label_width, light_grid, log_axis,
};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
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

    fn shown(&self, v: f64) -> bool {
        v.is_finite() && (self.x.scale == Scale::Linear || v > 0.0)
    }

    /// Draws the chart.
    pub fn draw(&self, root: &Area<'_>) -> DrawResult {
        let mut all = Vec::new();
        for b in &self.bars {
            all.push(b.value);
            if let Some((l, h)) = b.whisker {
                all.push(l);
                all.push(h);
            }
        }
        all.retain(|&v| self.shown(v));
        let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (x0, x1) = match (self.x.range, self.x.scale) {
            (Some(r), _) => r,
            (None, Scale::Log) => decade_range(lo, hi),
            (None, Scale::Linear) => (
                0.0,
                if hi.is_finite() && hi > 0.0 {
                    hi * 1.08
                } else {
                    1.0
                },
            ),
        };
        match self.x.scale {
            Scale::Log => self.draw_in(root, log_axis(x0, x1), x0),
            Scale::Linear => self.draw_in(root, x0..x1, x0),
        }
    }

    fn draw_in<X>(&self, root: &Area<'_>, xr: X, x0: f64) -> DrawResult
    where
        X: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
    {
        let names: Vec<String> = self.bars.iter().map(|b| b.name.clone()).collect();
        let n = self.bars.len().max(1);
        let mut chart = ChartBuilder::on(root)
            .margin(14)
            .margin_left(8)
            .x_label_area_size(44)
            .y_label_area_size(label_width(&names))
            .build_cartesian_2d(xr, -0.5..(n as f64 - 0.5))?;
        let unit = self.x.unit;
        let xf = move |v: &f64| unit.format(*v);
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc(self.x.label.as_str())
            .x_label_formatter(&xf)
            .x_labels(8)
            .label_style((FONT, TICK_SIZE).into_font().color(&BLACK.mix(0.75)))
            .axis_desc_style((FONT, DESC_SIZE))
            .bold_line_style(bold_grid())
            .light_line_style(light_grid())
            .axis_style(BLACK.mix(0.45))
            .draw()?;
        let rows = self.bars.len();
        for (i, b) in self.bars.iter().enumerate() {
            let y = (rows - 1 - i) as f64;
            if self.shown(b.value) {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x0, y - 0.32), (b.value, y + 0.32)],
                    ShapeStyle::from(&b.color.mix(0.85)).filled(),
                )))?;
            }
            if let Some((l, h)) = b.whisker.filter(|&(l, h)| self.shown(l) && self.shown(h)) {
                let s = ShapeStyle::from(&BLACK.mix(0.8)).stroke_width(2);
                chart.draw_series([
                    PathElement::new(vec![(l, y), (h, y)], s),
                    PathElement::new(vec![(l, y - 0.2), (l, y + 0.2)], s),
                    PathElement::new(vec![(h, y - 0.2), (h, y + 0.2)], s),
                ])?;
            }
        }
        draw_category_labels(root, &chart, &names, x0)?;
        if let Some((bar, whisker)) = &self.legend {
            // A legend of two dummy series drawn outside the data.
            let c = self.bars.first().map_or(super::color(0), |b| b.color);
            chart
                .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())?
                .label(bar.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new(
                        [(x, y - 5), (x + 16, y + 5)],
                        ShapeStyle::from(&c.mix(0.85)).filled(),
                    )
                });
            chart
                .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())?
                .label(whisker.as_str())
                .legend(|(x, y)| {
                    PathElement::new(
                        vec![(x, y), (x + 16, y)],
                        ShapeStyle::from(&BLACK.mix(0.8)).stroke_width(2),
                    )
                });
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .margin(8)
                .label_font((FONT, TICK_SIZE))
                .background_style(WHITE.mix(0.92))
                .border_style(BLACK.mix(0.25))
                .draw()?;
        }
        Ok(())
    }
}
