//! Several values per category on one line (a "dumbbell"): the same wait under two
//! settings, e.g. timer slack at its default and at 1 ns. Categories are rows, so long
//! names stay readable.

use super::xy::{Axis, Scale};
use super::{
    Area, DESC_SIZE, DrawResult, FONT, TICK_SIZE, bold_grid, decade_range, draw_category_labels,
    label_width, light_grid, log_axis,
};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
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

    fn shown(&self, v: f64) -> bool {
        v.is_finite() && (self.x.scale == Scale::Linear || v > 0.0)
    }

    /// Draws the chart.
    pub fn draw(&self, root: &Area<'_>) -> DrawResult {
        let all: Vec<f64> = self
            .values
            .iter()
            .flatten()
            .flatten()
            .copied()
            .filter(|&v| self.shown(v))
            .collect();
        let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (x0, x1) = match (self.x.range, self.x.scale) {
            (Some(r), _) => r,
            (None, Scale::Log) => decade_range(lo, hi),
            (None, Scale::Linear) => (
                if lo.is_finite() { lo.min(0.0) } else { 0.0 },
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
        let n = self.rows.len().max(1);
        let mut chart = ChartBuilder::on(root)
            .margin(14)
            .margin_left(8)
            .x_label_area_size(44)
            .y_label_area_size(label_width(&self.rows))
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
        let rows = self.rows.len();
        for (i, row) in self.values.iter().enumerate() {
            let y = (rows - 1 - i) as f64;
            let present: Vec<f64> = row
                .iter()
                .flatten()
                .copied()
                .filter(|&v| self.shown(v))
                .collect();
            if present.len() >= 2 {
                let lo = present.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = present.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(lo, y), (hi, y)],
                    ShapeStyle::from(&BLACK.mix(0.25)).stroke_width(4),
                )))?;
            }
        }
        for (g, (name, color)) in self.groups.iter().enumerate() {
            let color = *color;
            let pts: Vec<(f64, f64)> = self
                .values
                .iter()
                .enumerate()
                .filter_map(|(i, row)| {
                    row.get(g)
                        .copied()
                        .flatten()
                        .filter(|&v| self.shown(v))
                        .map(|v| (v, (rows - 1 - i) as f64))
                })
                .collect();
            chart
                .draw_series(
                    pts.into_iter()
                        .map(move |p| Circle::new(p, 6, ShapeStyle::from(&color).filled())),
                )?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    Circle::new((x + 6, y), 6, ShapeStyle::from(&color).filled())
                });
        }
        draw_category_labels(root, &chart, &self.rows, x0)?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .margin(8)
            .label_font((FONT, TICK_SIZE))
            .background_style(WHITE.mix(0.92))
            .border_style(BLACK.mix(0.25))
            .draw()?;
        Ok(())
    }
}
