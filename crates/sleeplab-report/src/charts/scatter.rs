//! Every sample against its request on log-log axes, with the 0 request on a strip of
//! its own at the left (a log axis has no place for 0): seed 000's scatter of every
//! sample. The strip and the log plot share one elapsed axis; points are spread
//! sideways by a small deterministic jitter so equal values stay visible.

use super::frame::house_style;
use super::xy::{Axis, Series};
use super::{Area, DrawResult, FONT, decade_range, log_axis};
use plotters::prelude::*;

/// Width of the 0 strip, px, not counting the elapsed axis's labels.
const STRIP: u32 = 56;

/// Width of the elapsed axis's labels, px.
const LABELS: u32 = 64;

/// Sideways spread of the points, decades (the strip: a share of its width).
const JITTER: f64 = 0.06;

/// A scatter of samples: `series` hold (requested, elapsed) points; those at
/// requested 0 are drawn on the strip.
#[derive(Debug, Clone, PartialEq)]
pub struct Scatter {
    /// A title above the plot (small multiples).
    pub title: Option<String>,
    /// The requested axis (its label; the scale is log).
    pub x: Axis,
    /// The elapsed axis (its label; the scale is log).
    pub y: Axis,
    /// The samples, by series.
    pub series: Vec<Series>,
}

/// The `i`-th jitter offset, in [−1, 1): a golden-ratio sequence, so any prefix is
/// spread evenly.
fn jitter(i: usize) -> f64 {
    ((i as f64 * 0.618_033_988_75).fract() - 0.5) * 2.0
}

impl Scatter {
    /// Whether any series has a sample at request 0 (the strip is drawn only then).
    pub fn has_zero(&self) -> bool {
        self.series
            .iter()
            .any(|s| s.points.iter().any(|p| p.0 == 0.0))
    }

    /// The range of the positive values `pick` takes from the points: room of `pad` on
    /// each side when they span a decade or more, whole decades otherwise.
    fn fit(&self, pick: impl Fn(&(f64, f64)) -> f64, pad: f64) -> (f64, f64) {
        let (lo, hi) = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(&pick))
            .filter(|v| v.is_finite() && *v > 0.0)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        if lo.is_finite() && hi / lo >= 10.0 {
            (lo / pad, hi * pad)
        } else {
            decade_range(lo, hi)
        }
    }

    /// Draws the chart.
    pub fn draw(&self, root: &Area<'_>) -> DrawResult {
        let (y0, y1) = self.fit(|p| p.1, 1.4);
        let root = match &self.title {
            Some(t) => root.titled(t, (FONT, 15).into_font().style(FontStyle::Bold))?,
            None => root.clone(),
        };
        let zero = self.has_zero();
        let (strip, main) = if zero {
            let (a, b) = root.split_horizontally(LABELS + STRIP);
            (Some(a), b)
        } else {
            (None, root)
        };
        let dot =
            |c: RGBColor, p: (f64, f64)| Circle::new(p, 2, ShapeStyle::from(&c.mix(0.55)).filled());
        let yu = self.y.unit;
        let yf = move |v: &f64| yu.format(*v);
        if let Some(strip) = strip {
            let mut chart = ChartBuilder::on(&strip)
                .margin_top(6)
                .margin_bottom(6)
                .margin_left(6)
                .x_label_area_size(44)
                .y_label_area_size(LABELS)
                .build_cartesian_2d(-1.0..1.0, log_axis(y0, y1))?;
            // One label, at the middle: the request 0.
            let xf = |v: &f64| {
                if v.abs() < 1e-9 {
                    "0".to_string()
                } else {
                    String::new()
                }
            };
            house_style(
                chart
                    .configure_mesh()
                    .disable_x_mesh()
                    .x_desc("asked for 0")
                    .y_desc(self.y.label.as_str())
                    .x_label_formatter(&xf)
                    .x_labels(3)
                    .y_label_formatter(&yf)
                    .y_labels(8),
            )
            .draw()?;
            for s in &self.series {
                let pts = s.points.iter().filter(|p| p.0 == 0.0 && p.1 > 0.0);
                chart.draw_series(
                    pts.enumerate()
                        .map(|(i, p)| dot(s.color, (0.6 * jitter(i), p.1))),
                )?;
            }
        }
        let (x0, x1) = self.fit(|p| p.0, 2.0);
        let mut chart = ChartBuilder::on(&main)
            .margin_top(6)
            .margin_bottom(6)
            .margin_right(18)
            .margin_left(if zero { 4 } else { 6 })
            .x_label_area_size(44)
            .y_label_area_size(if zero { 0 } else { LABELS })
            .build_cartesian_2d(log_axis(x0, x1), log_axis(y0, y1))?;
        let xu = self.x.unit;
        let xf = move |v: &f64| xu.format(*v);
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(self.x.label.as_str())
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .x_labels(8)
            .y_labels(8);
        if !zero {
            mesh.y_desc(self.y.label.as_str());
        }
        house_style(&mut mesh).draw()?;
        // The ideal y = x, where the two ranges meet.
        let (lo, hi) = (x0.max(y0), x1.min(y1));
        if hi > lo {
            let pts: Vec<(f64, f64)> = (0..=32)
                .map(|i| {
                    let v = lo * (hi / lo).powf(f64::from(i) / 32.0);
                    (v, v)
                })
                .collect();
            chart.draw_series(DashedLineSeries::new(
                pts,
                6,
                5,
                ShapeStyle::from(&BLACK.mix(0.45)).stroke_width(1),
            ))?;
        }
        for s in &self.series {
            let pts = s.points.iter().filter(|p| p.0 > 0.0 && p.1 > 0.0);
            chart.draw_series(
                pts.enumerate()
                    .map(|(i, p)| dot(s.color, (p.0 * 10f64.powf(JITTER * jitter(i)), p.1))),
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::{color, render};

    fn spec(points: Vec<(f64, f64)>) -> Scatter {
        Scatter {
            title: Some("nanosleep".into()),
            x: Axis::log_ns("requested"),
            y: Axis::log_ns("elapsed"),
            series: vec![Series {
                name: "no load".into(),
                color: color(0),
                points,
                style: crate::charts::xy::Style::Markers,
            }],
        }
    }

    #[test]
    fn the_zero_request_has_its_own_strip() {
        let s = spec(vec![(0.0, 900.0), (0.0, 1_100.0), (1_000.0, 60_000.0)]);
        assert!(s.has_zero());
        let c = render("t", "t", (400, 300), |a| s.draw(a)).unwrap();
        // Its tick label, and one dot per sample: two on the strip, one on the log plot.
        assert!(c.svg.contains(">\n0\n</text>"), "{}", c.svg);
        assert_eq!(c.svg.matches("<circle").count(), 3);
        let without = spec(vec![(1_000.0, 60_000.0)]);
        assert!(!without.has_zero());
        let c = render("t", "t", (400, 300), |a| without.draw(a)).unwrap();
        assert_eq!(c.svg.matches("<circle").count(), 1);
    }

    #[test]
    fn jitter_stays_within_its_band() {
        assert!((0..1000).map(jitter).all(|j| (-1.0..1.0).contains(&j)));
        assert_ne!(jitter(1), jitter(2));
    }
}
