//! The set-up every chart shares: the house style of a mesh, the legend box, the value
//! range of a value axis, and the category chart (rows of names, a value axis across)
//! that bars and dumbbells draw on.

use super::axis::{Axis, Scale};
use super::{
    Area, DESC_SIZE, DrawResult, FONT, TICK_SIZE, bold_grid, decade_range, label_width, light_grid,
    log_axis,
};
use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Applies the house style to a mesh: tick and description fonts, grid and axis ink.
pub(crate) fn house_style<'m, 'a, 'b, X, Y, DB>(
    m: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: plotters::coord::ranged1d::Ranged,
    Y: plotters::coord::ranged1d::Ranged,
    DB: DrawingBackend,
{
    m.label_style((FONT, TICK_SIZE).into_font().color(&BLACK.mix(0.75)))
        .axis_desc_style((FONT, DESC_SIZE).into_font().color(&BLACK.mix(0.85)))
        .bold_line_style(bold_grid())
        .light_line_style(light_grid())
        .axis_style(BLACK.mix(0.45))
}

/// Draws the legend box of `chart`'s labelled series at `position`.
pub(crate) fn legend_box<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> DrawResult
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .margin(8)
        .label_font((FONT, TICK_SIZE))
        .background_style(WHITE.mix(0.92))
        .border_style(BLACK.mix(0.25))
        .draw()?;
    Ok(())
}

/// Whether `v` can be drawn on an axis of `scale` (finite; positive on a log axis).
pub(crate) fn drawable(scale: Scale, v: f64) -> bool {
    v.is_finite() && (scale == Scale::Linear || v > 0.0)
}

/// The range of a value axis over `values`: fixed, whole decades on a log axis, or
/// from 0 (or the smallest negative value) to a little above the largest.
pub(crate) fn value_range(axis: &Axis, values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    if let Some(r) = axis.range {
        return r;
    }
    let (lo, hi) = values
        .into_iter()
        .filter(|&v| drawable(axis.scale, v))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    match axis.scale {
        Scale::Log => decade_range(lo, hi),
        Scale::Linear => (
            if lo.is_finite() { lo.min(0.0) } else { 0.0 },
            if hi.is_finite() && hi > 0.0 {
                hi * 1.08
            } else {
                1.0
            },
        ),
    }
}

/// A category chart: `names` as rows (top to bottom, row `i` at y = n − 1 − i) and
/// `x` across, its mesh drawn, ready for bars or dumbbells. Calls `draw` with the chart
/// and the value where the axis starts (where bars begin).
pub(crate) fn category_chart(
    root: &Area<'_>,
    x: &Axis,
    names: &[String],
    values: impl IntoIterator<Item = f64>,
    draw: impl FnOnce(&mut dyn CategoryCanvas) -> DrawResult,
) -> DrawResult {
    let (x0, x1) = value_range(x, values);
    match x.scale {
        Scale::Log => in_category(root, log_axis(x0, x1), x, names, x0, draw),
        Scale::Linear => in_category(root, x0..x1, x, names, x0, draw),
    }
}

/// What bars and dumbbells draw on: f64 coordinates (value, row), whatever the scale.
pub(crate) trait CategoryCanvas {
    /// Draws an element in data coordinates.
    fn path(&mut self, points: Vec<(f64, f64)>, style: ShapeStyle) -> DrawResult;
    /// A filled rectangle between two corners.
    fn rect(&mut self, a: (f64, f64), b: (f64, f64), style: ShapeStyle) -> DrawResult;
    /// A dot at `p` with a legend entry `label` (drawn once per call with a label).
    fn dots(&mut self, points: Vec<(f64, f64)>, color: RGBColor, label: Option<&str>)
    -> DrawResult;
    /// A legend entry with a swatch drawn by `swatch` (bars: a filled box, a line).
    fn legend_entry(&mut self, label: &str, swatch: Swatch) -> DrawResult;
    /// Draws the legend box (lower right).
    fn legend(&mut self) -> DrawResult;
    /// Writes `text` in tick-label type, left-aligned and vertically centred, 6 px right
    /// of `at` (a value written at the end of its bar).
    fn label(&mut self, at: (f64, f64), text: &str) -> DrawResult;
    /// The value where the axis starts.
    fn origin(&self) -> f64;
}

/// The swatch of a legend entry.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Swatch {
    /// A filled box in this colour.
    Box(RGBColor),
    /// A line in this colour.
    Line(RGBAColor),
}

struct Canvas<'r, 'c, 'b, X: plotters::coord::ranged1d::Ranged<ValueType = f64>> {
    chart: &'c mut ChartContext<'r, SVGBackend<'b>, Cartesian2d<X, RangedCoordf64>>,
    origin: f64,
}

impl<'r, 'b: 'r, X> CategoryCanvas for Canvas<'r, '_, 'b, X>
where
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    fn path(&mut self, points: Vec<(f64, f64)>, style: ShapeStyle) -> DrawResult {
        self.chart
            .draw_series(std::iter::once(PathElement::new(points, style)))?;
        Ok(())
    }

    fn rect(&mut self, a: (f64, f64), b: (f64, f64), style: ShapeStyle) -> DrawResult {
        self.chart
            .draw_series(std::iter::once(Rectangle::new([a, b], style)))?;
        Ok(())
    }

    fn dots(
        &mut self,
        points: Vec<(f64, f64)>,
        color: RGBColor,
        label: Option<&str>,
    ) -> DrawResult {
        let anno = self.chart.draw_series(
            points
                .into_iter()
                .map(move |p| Circle::new(p, 6, ShapeStyle::from(&color).filled())),
        )?;
        if let Some(l) = label {
            anno.label(l).legend(move |(x, y)| {
                Circle::new((x + 6, y), 6, ShapeStyle::from(&color).filled())
            });
        }
        Ok(())
    }

    fn legend_entry(&mut self, label: &str, swatch: Swatch) -> DrawResult {
        let anno = self
            .chart
            .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())?
            .label(label);
        match swatch {
            Swatch::Box(c) => {
                anno.legend(move |(x, y)| {
                    Rectangle::new(
                        [(x, y - 5), (x + 16, y + 5)],
                        ShapeStyle::from(&c.mix(0.85)).filled(),
                    )
                });
            }
            Swatch::Line(c) => {
                anno.legend(move |(x, y)| {
                    PathElement::new(
                        vec![(x, y), (x + 16, y)],
                        ShapeStyle::from(&c).stroke_width(2),
                    )
                });
            }
        }
        Ok(())
    }

    fn legend(&mut self) -> DrawResult {
        legend_box(self.chart, SeriesLabelPosition::LowerRight)
    }

    fn label(&mut self, at: (f64, f64), text: &str) -> DrawResult {
        let ink = BLACK.mix(0.8);
        let style = TextStyle::from((FONT, TICK_SIZE).into_font())
            .color(&ink)
            .pos(Pos::new(HPos::Left, VPos::Center));
        self.chart.draw_series(std::iter::once(
            EmptyElement::at(at) + Text::new(text.to_string(), (6, 0), style),
        ))?;
        Ok(())
    }

    fn origin(&self) -> f64 {
        self.origin
    }
}

fn in_category<X>(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    xr: X,
    axis: &Axis,
    names: &[String],
    x0: f64,
    draw: impl FnOnce(&mut dyn CategoryCanvas) -> DrawResult,
) -> DrawResult
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let n = names.len().max(1);
    let mut chart = ChartBuilder::on(root)
        .margin(14)
        .margin_left(8)
        .x_label_area_size(44)
        .y_label_area_size(label_width(names))
        .build_cartesian_2d(xr, -0.5..(n as f64 - 0.5))?;
    let unit = axis.unit;
    let xf = move |v: &f64| unit.format(*v);
    house_style(
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc(axis.label.as_str())
            .x_label_formatter(&xf)
            .x_labels(8),
    )
    .draw()?;
    super::draw_category_labels(root, &chart, names, x0)?;
    let mut canvas = Canvas {
        chart: &mut chart,
        origin: x0,
    };
    draw(&mut canvas)
}
