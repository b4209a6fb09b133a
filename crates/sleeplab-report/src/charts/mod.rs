//! Charts as inline SVG, drawn with plotters' SVG backend into a `String`.
//!
//! One file per chart kind: [`xy`] (lines and points on linear or log axes: requested
//! vs actual, CDFs, CPU vs interval, error per period), [`dumbbell`] (two or more values
//! per category: timer slack's effect), [`bars`] (a value per category with min/max
//! whiskers: pace error, runtimes), [`heatmap`] (a value per cell of a grid: the
//! simulator), [`scatter`] (every sample against its request, the 0 request on a strip of
//! its own: seed 000), [`stacked`] (bars stacked by part: where a wake's lateness went).
//! Every chart is an `<svg data-chart="ID">` so tests and the browser check can find it;
//! it scales down with the page (`max-width: 100%`).
//!
//! [`axis`] holds the axes they all take (scale, tick unit, range); `frame` the set-up
//! they share (mesh style, legend box, value ranges, the category chart of bars and
//! dumbbells).
//!
//! Text drawn by plotters is escaped by plotters (checked by the report's escaping
//! test), so names from result files are safe in legends and tick labels.

pub(crate) mod axis;
pub(crate) mod bars;
pub(crate) mod dumbbell;
pub(crate) mod frame;
pub(crate) mod heatmap;
pub(crate) mod scatter;
pub(crate) mod stacked;
pub(crate) mod xy;

use super::escape;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A drawn chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Its id (the `data-chart` attribute), unique within a page.
    pub id: String,
    /// The `<svg>` element.
    pub svg: String,
}

/// The drawing area charts draw on.
pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// The result of drawing.
pub type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// The font family of chart text (a generic family: no font files are embedded).
pub const FONT: &str = "sans-serif";

/// Tick label size, px.
pub const TICK_SIZE: u32 = 13;

/// Axis description size, px.
pub const DESC_SIZE: u32 = 14;

/// Colours for series, in order (Tableau 10: distinct, colour-blind aware, print well).
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x79, 0x70, 0x6e),
];

/// The colour of series `i`.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The colour as CSS `#rrggbb` (for HTML legends).
pub fn css(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// Grid line colours.
pub(crate) fn bold_grid() -> RGBAColor {
    BLACK.mix(0.13)
}

pub(crate) fn light_grid() -> RGBAColor {
    BLACK.mix(0.05)
}

/// Draws a chart of `size` px with `draw` and returns it tagged with `id` and an
/// accessible `label`. A drawing error is returned as text (the page shows it in the
/// chart's place and keeps the table).
pub fn render(
    id: &str,
    label: &str,
    size: (u32, u32),
    draw: impl FnOnce(&Area<'_>) -> DrawResult,
) -> Result<Chart, String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        draw(&root).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(Chart {
        id: id.to_string(),
        svg: tag(&buf, id, label),
    })
}

/// Width in px of the label area left of a category axis for `names`.
pub(crate) fn label_width(names: &[String]) -> u32 {
    let chars = names
        .iter()
        .map(|n| n.chars().count().min(MAX_LABEL_CHARS))
        .max()
        .unwrap_or(4);
    (chars as u32 * 8 + 20).clamp(60, 280)
}

/// Category names longer than this are cut (with `…`) in charts; tables show them whole.
pub const MAX_LABEL_CHARS: usize = 30;

/// `name` cut to [`MAX_LABEL_CHARS`].
pub fn short_label(name: &str) -> String {
    if name.chars().count() <= MAX_LABEL_CHARS {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(MAX_LABEL_CHARS - 1).collect();
        s.push('…');
        s
    }
}

/// Draws category names left of the plot, right-aligned, centred on rows `0..n` of a
/// value-major chart whose y axis runs from −0.5 (bottom) to n − 0.5 (top); row 0 is
/// the top one.
pub(crate) fn draw_category_labels<DB, X, Y>(
    root: &DrawingArea<DB, Shift>,
    chart: &ChartContext<'_, DB, Cartesian2d<X, Y>>,
    names: &[String],
    x0: X::ValueType,
) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: plotters::coord::ranged1d::Ranged,
    X::ValueType: Clone,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    let n = names.len();
    let ink = BLACK.mix(0.85);
    let style = TextStyle::from((FONT, TICK_SIZE).into_font())
        .color(&ink)
        .pos(Pos::new(HPos::Right, VPos::Center));
    // The chart's coordinates are the backend's pixels; `root` may be shifted (titled).
    let (bx, by) = root.get_base_pixel();
    for (i, name) in names.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(x0.clone(), (n - 1 - i) as f64));
        root.draw(&Text::new(
            short_label(name),
            (px - bx - 8, py - by),
            style.clone(),
        ))?;
    }
    Ok(())
}

/// Adds the identifying attributes to the root `<svg` of `svg`.
fn tag(svg: &str, id: &str, label: &str) -> String {
    let attrs = format!(
        "<svg data-chart=\"{}\" class=\"chart\" role=\"img\" aria-label=\"{}\"",
        escape::html(id),
        escape::html(label)
    );
    match svg.find("<svg") {
        Some(i) => format!("{}{}{}", &svg[..i], attrs, &svg[i + 4..]),
        None => svg.to_string(),
    }
}

/// The decade range `[10^floor(log10 lo), 10^ceil(log10 hi)]` around positive values,
/// so a log axis always has labelled powers of ten.
pub fn decade_range(lo: f64, hi: f64) -> (f64, f64) {
    let lo = if lo.is_finite() && lo > 0.0 { lo } else { 1.0 };
    let hi = if hi.is_finite() && hi > lo {
        hi
    } else {
        lo * 10.0
    };
    let a = 10f64.powf(lo.log10().floor());
    let mut b = 10f64.powf(hi.log10().ceil());
    if b <= a {
        b = a * 10.0;
    }
    (a, b)
}

/// A log axis over `[lo, hi]` with the ticks of [`log_ticks`].
pub(crate) fn log_axis(
    lo: f64,
    hi: f64,
) -> plotters::coord::combinators::WithKeyPoints<plotters::coord::combinators::LogCoord<f64>> {
    use plotters::coord::combinators::BindKeyPoints;
    let (bold, light) = log_ticks(lo, hi);
    (lo..hi)
        .log_scale()
        .with_key_points(bold)
        .with_light_points(light)
}

/// Tick values of a log axis over `[lo, hi]`: (labelled, grid lines). Labels at whole
/// decades when the range holds two or more (at most 8 of them), else at 1–2–5 steps,
/// else at every integer multiple; grid lines at every integer multiple of a decade.
pub fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let (lo, hi) = (lo.min(hi), lo.max(hi));
    if !(lo > 0.0 && hi.is_finite()) {
        return (vec![], vec![]);
    }
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let within = |v: &f64| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9);
    let at = |k: i32, m: f64| m * 10f64.powi(k);
    let light: Vec<f64> = (k0..=k1)
        .flat_map(|k| (1..=9).map(move |m| at(k, f64::from(m))))
        .filter(within)
        .collect();
    let decades: Vec<f64> = (k0..=k1).map(|k| at(k, 1.0)).filter(within).collect();
    let bold = if decades.len() >= 2 {
        let step = decades.len().div_ceil(8);
        decades.into_iter().step_by(step).collect()
    } else {
        let b: Vec<f64> = (k0..=k1)
            .flat_map(|k| [1.0, 2.0, 5.0].map(|m| at(k, m)))
            .filter(within)
            .collect();
        if b.len() >= 3 { b } else { light.clone() }
    };
    (bold, light)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ticks_label_decades_or_finer_steps() {
        let (b, l) = log_ticks(1_000.0, 1e7);
        assert_eq!(b, vec![1e3, 1e4, 1e5, 1e6, 1e7]);
        assert_eq!(l.len(), 4 * 9 + 1);
        let (b, _) = log_ticks(1e6, 1e7);
        assert_eq!(b, vec![1e6, 1e7]);
        let (b, _) = log_ticks(15.0, 90.0);
        assert_eq!(b, vec![20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0]);
        let (b, _) = log_ticks(1.5e6, 9e6);
        assert_eq!(b, (2..=9).map(|m| f64::from(m) * 1e6).collect::<Vec<_>>());
        let (b, _) = log_ticks(1.5e3, 6e4);
        assert_eq!(b, vec![2e3, 5e3, 1e4, 2e4, 5e4]);
        let (b, _) = log_ticks(1.0, 1e20);
        assert!(b.len() <= 8, "{b:?}");
        assert_eq!(log_ticks(0.0, 5.0), (vec![], vec![]));
    }

    #[test]
    fn decades_cover_the_data() {
        assert_eq!(decade_range(3.0, 250.0), (1.0, 1000.0));
        assert_eq!(decade_range(1000.0, 1000.0), (1000.0, 10_000.0));
        assert_eq!(decade_range(0.0, f64::NAN), (1.0, 10.0));
    }

    #[test]
    fn tags_the_root_svg_and_escapes_the_label() {
        let c = render("a-b", "<b>&", (100, 80), |_| Ok(())).unwrap();
        assert!(c.svg.starts_with("<svg data-chart=\"a-b\" class=\"chart\""));
        assert!(c.svg.contains("aria-label=\"&lt;b&gt;&amp;\""));
        assert_eq!(c.svg.matches("<svg").count(), 1);
        assert!(c.svg.contains("viewBox=\"0 0 100 80\""));
    }
}
