//! Lines and points on linear or logarithmic axes: requested vs actual (seed 000's
//! log-log scatter, seed 002 figure 2), latency CDFs, CPU vs interval (figure 3), error
//! per period (seed 004), comparisons of two runs.

pub use super::axis::{Axis, Scale, Unit};
use super::frame::{house_style, legend_box};
use super::{Area, DrawResult, FONT, decade_range, log_axis};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A line with a marker at every point.
    LineMarkers,
    /// A line only.
    Line,
    /// A dashed line (references such as the ideal y = x).
    Dashed,
    /// Markers only (scatter).
    Markers,
}

/// One series.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its name (legend).
    pub name: String,
    /// Its colour.
    pub color: RGBColor,
    /// Points in data coordinates; points a log axis cannot show (≤ 0) are left out.
    pub points: Vec<(f64, f64)>,
    /// How it is drawn.
    pub style: Style,
}

/// Where the legend goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Legend {
    /// No legend (the page shows one in HTML, e.g. for small multiples).
    None,
    /// Lower right (empty in requested-vs-actual plots: nothing returns early).
    LowerRight,
    /// Upper left.
    UpperLeft,
    /// Upper right.
    UpperRight,
}

/// An x–y chart.
#[derive(Debug, Clone, PartialEq)]
pub struct XyChart {
    /// A title drawn above the plot (small multiples); `None` for none.
    pub title: Option<String>,
    /// The x axis.
    pub x: Axis,
    /// The y axis.
    pub y: Axis,
    /// The series, drawn in order.
    pub series: Vec<Series>,
    /// Draw the ideal line y = x (requested = actual) in grey.
    pub ideal: bool,
    /// Where the legend goes.
    pub legend: Legend,
}

impl XyChart {
    /// Draws the chart.
    pub fn draw(&self, root: &Area<'_>) -> DrawResult {
        let (x0, x1) = self.fit(&self.x, |p| p.0);
        let (y0, y1) = self.fit(&self.y, |p| p.1);
        match (self.x.scale, self.y.scale) {
            (Scale::Log, Scale::Log) => self.draw_in(root, log_axis(x0, x1), log_axis(y0, y1)),
            (Scale::Log, Scale::Linear) => self.draw_in(root, log_axis(x0, x1), y0..y1),
            (Scale::Linear, Scale::Log) => self.draw_in(root, x0..x1, log_axis(y0, y1)),
            (Scale::Linear, Scale::Linear) => self.draw_in(root, x0..x1, y0..y1),
        }
    }

    /// The range of an axis: fixed, or fitted to the data (and the ideal line).
    fn fit(&self, axis: &Axis, pick: impl Fn(&(f64, f64)) -> f64) -> (f64, f64) {
        if let Some(r) = axis.range {
            return r;
        }
        let values = self
            .series
            .iter()
            .flat_map(|s| s.points.iter())
            .map(&pick)
            .filter(|v| v.is_finite() && (axis.scale == Scale::Linear || *v > 0.0));
        let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        match axis.scale {
            // A little room around the data; whole decades when the data spans less
            // than one (so the axis has a power of ten to label).
            Scale::Log if lo.is_finite() && hi.is_finite() && lo > 0.0 && hi / lo >= 10.0 => {
                (lo / 1.4, hi * 1.4)
            }
            Scale::Log => decade_range(lo, hi),
            Scale::Linear => {
                if !lo.is_finite() {
                    (0.0, 1.0)
                } else {
                    let lo = lo.min(0.0);
                    let hi = if hi > lo { hi * 1.05 } else { lo + 1.0 };
                    (lo, hi)
                }
            }
        }
    }

    fn draw_in<X, Y>(&self, root: &Area<'_>, xr: X, yr: Y) -> DrawResult
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let (xlog, ylog) = (self.x.scale == Scale::Log, self.y.scale == Scale::Log);
        let mut builder = ChartBuilder::on(root);
        builder
            .margin_top(if self.title.is_some() { 6 } else { 14 })
            .margin_right(18)
            .margin_left(6)
            .margin_bottom(6)
            .x_label_area_size(44)
            .y_label_area_size(64);
        if let Some(t) = &self.title {
            builder.caption(t, (FONT, 15).into_font().style(FontStyle::Bold));
        }
        let mut chart = builder.build_cartesian_2d(xr, yr)?;
        let (xu, yu) = (self.x.unit, self.y.unit);
        let xf = move |v: &f64| xu.format(*v);
        let yf = move |v: &f64| yu.format(*v);
        house_style(
            chart
                .configure_mesh()
                .x_desc(self.x.label.as_str())
                .y_desc(self.y.label.as_str())
                .x_label_formatter(&xf)
                .y_label_formatter(&yf)
                .x_labels(if xlog { 8 } else { 7 })
                .y_labels(if ylog { 8 } else { 6 }),
        )
        .draw()?;

        let ok = |p: &(f64, f64)| {
            p.0.is_finite() && p.1.is_finite() && (!xlog || p.0 > 0.0) && (!ylog || p.1 > 0.0)
        };
        if self.ideal {
            let (a, b) = (chart.x_range(), chart.y_range());
            let lo = a.start.max(b.start);
            let hi = a.end.min(b.end);
            if hi > lo {
                let n = 64;
                let pts: Vec<(f64, f64)> = (0..=n)
                    .map(|i| {
                        let t = i as f64 / n as f64;
                        let v = if xlog && ylog {
                            lo * (hi / lo).powf(t)
                        } else {
                            lo + (hi - lo) * t
                        };
                        (v, v)
                    })
                    .collect();
                chart
                    .draw_series(DashedLineSeries::new(
                        pts,
                        6,
                        5,
                        ShapeStyle::from(&BLACK.mix(0.45)).stroke_width(1),
                    ))?
                    .label("ideal (actual = requested)")
                    .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLACK.mix(0.45)));
            }
        }
        for s in &self.series {
            let pts: Vec<(f64, f64)> = s.points.iter().copied().filter(ok).collect();
            let color = s.color;
            let line = ShapeStyle::from(&color).stroke_width(2);
            let anno = match s.style {
                Style::LineMarkers => {
                    chart.draw_series(LineSeries::new(pts.clone(), line))?;
                    chart.draw_series(
                        pts.iter()
                            .map(|&p| Circle::new(p, 3, ShapeStyle::from(&color).filled())),
                    )?
                }
                Style::Line => chart.draw_series(LineSeries::new(pts, line))?,
                Style::Dashed => chart.draw_series(DashedLineSeries::new(pts, 7, 4, line))?,
                Style::Markers => chart.draw_series(
                    pts.iter()
                        .map(|&p| Circle::new(p, 6, ShapeStyle::from(&color.mix(0.8)).filled())),
                )?,
            };
            if self.legend != Legend::None {
                anno.label(s.name.as_str()).legend(move |(x, y)| {
                    PathElement::new(
                        vec![(x, y), (x + 18, y)],
                        ShapeStyle::from(&color).stroke_width(3),
                    )
                });
            }
        }
        let position = match self.legend {
            Legend::None => return Ok(()),
            Legend::LowerRight => SeriesLabelPosition::LowerRight,
            Legend::UpperLeft => SeriesLabelPosition::UpperLeft,
            Legend::UpperRight => SeriesLabelPosition::UpperRight,
        };
        legend_box(&mut chart, position)
    }
}
