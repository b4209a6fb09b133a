//! A value per cell of a grid, coloured on a sequential scale and written in the cell:
//! seed 002 figure 4 (relative error by requested sleep × scheduler period).

use super::{Area, DESC_SIZE, DrawResult, FONT, TICK_SIZE, label_width};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Text colour on light cells and for names.
const INK: RGBColor = RGBColor(0x33, 0x33, 0x33);

/// A heatmap.
#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    /// Column names, left to right.
    pub columns: Vec<String>,
    /// Row names, top to bottom.
    pub rows: Vec<String>,
    /// `values[row][column]`; a missing cell is drawn grey.
    pub values: Vec<Vec<Option<f64>>>,
    /// The text written in each cell.
    pub labels: Vec<Vec<String>>,
    /// What the columns are (x axis description).
    pub x_desc: String,
    /// What the rows are (y axis description).
    pub y_desc: String,
    /// Colour on a log scale (values spanning decades).
    pub log_color: bool,
    /// The values at the two ends of the colour scale; `None` fits this chart's values
    /// (give several heatmaps the same range to compare their colours).
    pub range: Option<(f64, f64)>,
}

impl Heatmap {
    /// A size that gives every cell room for its label.
    pub fn size(&self) -> (u32, u32) {
        let w = label_width(&self.rows) + 80 + 78 * self.columns.len().max(1) as u32;
        let h = 100 + 34 * self.rows.len().max(1) as u32;
        (w.min(1100), h)
    }

    /// Position of `v` on the colour scale, 0..=1.
    fn t(&self, v: f64, lo: f64, hi: f64) -> f64 {
        let (v, lo, hi) = if self.log_color {
            let f = |x: f64| x.max(1e-12).log10();
            (f(v), f(lo), f(hi))
        } else {
            (v, lo, hi)
        };
        if hi > lo {
            ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// Draws the chart.
    pub fn draw(&self, root: &Area<'_>) -> DrawResult {
        let all: Vec<f64> = self
            .values
            .iter()
            .flatten()
            .flatten()
            .copied()
            .filter(|v| v.is_finite() && (!self.log_color || *v > 0.0))
            .collect();
        let (lo, hi) = self.range.unwrap_or_else(|| {
            (
                all.iter().copied().fold(f64::INFINITY, f64::min),
                all.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        });
        let (nc, nr) = (self.columns.len().max(1), self.rows.len().max(1));
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(label_width(&self.rows) + 24)
            .build_cartesian_2d(0.0..nc as f64, 0.0..nr as f64)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(0)
            .x_desc(self.x_desc.as_str())
            .y_desc(self.y_desc.as_str())
            .axis_desc_style((FONT, DESC_SIZE))
            .axis_style(BLACK.mix(0.45))
            .draw()?;
        let centered = Pos::new(HPos::Center, VPos::Center);
        let on_dark = TextStyle::from((FONT, TICK_SIZE).into_font())
            .color(&WHITE)
            .pos(centered);
        let on_light = TextStyle::from((FONT, TICK_SIZE).into_font())
            .color(&INK)
            .pos(centered);
        for (r, row) in self.values.iter().enumerate() {
            let y = (nr - 1 - r) as f64;
            for (c, v) in row.iter().enumerate() {
                let x = c as f64;
                let (fill, dark) = match v {
                    Some(v) if v.is_finite() && lo.is_finite() => {
                        let t = self.t(*v, lo, hi);
                        (ramp(t), t > 0.55)
                    }
                    _ => (RGBColor(0xee, 0xee, 0xee), false),
                };
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x, y), (x + 1.0, y + 1.0)],
                    ShapeStyle::from(&fill).filled(),
                )))?;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x, y), (x + 1.0, y + 1.0)],
                    ShapeStyle::from(&WHITE).stroke_width(2),
                )))?;
                let label = self
                    .labels
                    .get(r)
                    .and_then(|l| l.get(c))
                    .cloned()
                    .unwrap_or_default();
                let (px, py) = chart.backend_coord(&(x + 0.5, y + 0.5));
                root.draw(&Text::new(
                    label,
                    (px, py),
                    if dark {
                        on_dark.clone()
                    } else {
                        on_light.clone()
                    },
                ))?;
            }
        }
        // Column and row names.
        for (c, name) in self.columns.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(c as f64 + 0.5, 0.0));
            root.draw(&Text::new(
                super::short_label(name),
                (px, py + 14),
                on_light.clone(),
            ))?;
        }
        let right = TextStyle::from((FONT, TICK_SIZE).into_font())
            .color(&INK)
            .pos(Pos::new(HPos::Right, VPos::Center));
        for (r, name) in self.rows.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(0.0, (nr - 1 - r) as f64 + 0.5));
            root.draw(&Text::new(
                super::short_label(name),
                (px - 8, py),
                right.clone(),
            ))?;
        }
        Ok(())
    }
}

/// A sequential colour ramp from pale yellow (0) through orange to dark red (1).
pub fn ramp(t: f64) -> RGBColor {
    const STOPS: [(f64, (f64, f64, f64)); 5] = [
        (0.0, (255.0, 247.0, 236.0)),
        (0.25, (253.0, 212.0, 158.0)),
        (0.5, (252.0, 141.0, 89.0)),
        (0.75, (215.0, 48.0, 31.0)),
        (1.0, (127.0, 0.0, 0.0)),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    for w in STOPS.windows(2) {
        let (a, ca) = w[0];
        let (b, cb) = w[1];
        if t <= b {
            let f = (t - a) / (b - a);
            let mix = |x: f64, y: f64| (x + (y - x) * f).round() as u8;
            return RGBColor(mix(ca.0, cb.0), mix(ca.1, cb.1), mix(ca.2, cb.2));
        }
    }
    RGBColor(127, 0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_ends() {
        assert_eq!(ramp(0.0), RGBColor(255, 247, 236));
        assert_eq!(ramp(1.0), RGBColor(127, 0, 0));
        assert_eq!(ramp(f64::NAN), RGBColor(255, 247, 236));
    }
}
