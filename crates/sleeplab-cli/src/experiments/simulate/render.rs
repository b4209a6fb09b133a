//! `simulate` in the terminal: heat tables, one per strategy and metric (rows: requested
//! interval, columns: model), each number followed by a grade from the ramp
//! ` .:-=+*#%@` so the heat shows in a plain terminal without colour. With a single
//! model (replay) the strategies become the columns instead.

use super::data::{SimCell, SimulateData};
use super::models::{ModelSpec, short_ns};
use sleeplab_stats::{fmt_ns, new_table};
use std::fmt::Write;

/// The shading ramp, coolest first.
pub const RAMP: [char; 10] = [' ', '.', ':', '-', '=', '+', '*', '#', '%', '@'];

/// Relative-error grade boundaries (fractions): below the first is ` `, at or above the
/// last is `@` (100 %: a sleep twice as long as asked).
pub const ERROR_STEPS: [f64; 9] = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0];

/// CPU grade boundaries (% of one core).
pub const CPU_STEPS: [f64; 9] = [1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 50.0, 70.0, 90.0];

/// The grade character of `value` on `steps` (plain comparisons: the same on every
/// machine).
pub fn grade(value: f64, steps: &[f64; 9]) -> char {
    RAMP[steps.iter().filter(|&&s| value >= s).count()]
}

/// A percentage with about three significant digits.
pub fn fmt_percent(p: f64) -> String {
    if !p.is_finite() {
        return "–".into();
    }
    let a = p.abs();
    if a == 0.0 {
        "0 %".into()
    } else if a >= 100.0 {
        format!("{p:.0} %")
    } else if a >= 10.0 {
        format!("{p:.1} %")
    } else if a >= 1.0 {
        format!("{p:.2} %")
    } else if a >= 0.1 {
        format!("{p:.3} %")
    } else {
        format!("{p:.4} %")
    }
}

/// The metrics shown, each with its title, value (as a percentage; `None` where the
/// cell's sample cannot resolve it) and grade steps.
struct Metric {
    title: &'static str,
    value: fn(&SimCell) -> Option<f64>,
    steps: &'static [f64; 9],
    error: bool,
}

const METRICS: [Metric; 3] = [
    Metric {
        title: "mean relative error",
        value: |c| Some(100.0 * c.mean_rel_error),
        steps: &ERROR_STEPS,
        error: true,
    },
    Metric {
        title: "p99 relative error",
        value: |c| c.p99_rel_error.map(|v| 100.0 * v),
        steps: &ERROR_STEPS,
        error: true,
    },
    Metric {
        title: "CPU",
        value: |c| Some(c.cpu_percent),
        steps: &CPU_STEPS,
        error: false,
    },
];

fn heat(m: &Metric, c: Option<&SimCell>) -> String {
    match c {
        None => "–".into(),
        Some(c) => {
            // The quantile rule: a p99 of fewer than 100 sleeps is not shown.
            let Some(v) = (m.value)(c) else {
                return format!("– (n = {})", c.sleeps);
            };
            let g = if m.error {
                grade(v / 100.0, m.steps)
            } else {
                grade(v, m.steps)
            };
            format!("{} {g}{g}", fmt_percent(v))
        }
    }
}

/// Renders the simulation as text.
pub fn render(data: &SimulateData) -> String {
    let cfg = &data.config;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "simulate: {} sleeps per cell after {} warm-up sleeps, seed {}; virtual costs: clock read {}, spin pause {}, native sleep call {} CPU",
        cfg.sleeps,
        cfg.warmup,
        cfg.seed,
        fmt_ns(cfg.costs.clock_read_ns),
        fmt_ns(cfg.costs.spin_pause_ns),
        fmt_ns(cfg.costs.sleep_cpu_ns),
    );
    let _ = writeln!(out, "model: {}", describe_models(&cfg.models));
    let _ = writeln!(
        out,
        "relative error = (actual − requested) / requested; CPU = virtual CPU / virtual wall time"
    );
    if cfg.models.len() == 1 {
        for m in &METRICS {
            let mut header = vec!["requested \\ strategy".to_string()];
            header.extend(cfg.strategies.iter().cloned());
            let mut t = new_table(header);
            for &req in &cfg.intervals_ns {
                let mut row = vec![short_ns(req)];
                row.extend(cfg.strategies.iter().map(|s| heat(m, data.cell(s, req, 0))));
                t.add_row(row);
            }
            let _ = writeln!(out, "\n{} ({})\n{t}", m.title, cfg.models[0].label());
        }
    } else {
        for s in &cfg.strategies {
            for m in &METRICS {
                let mut header = vec!["requested \\ period".to_string()];
                header.extend(cfg.models.iter().map(ModelSpec::label));
                let mut t = new_table(header);
                for &req in &cfg.intervals_ns {
                    let mut row = vec![short_ns(req)];
                    row.extend((0..cfg.models.len()).map(|k| heat(m, data.cell(s, req, k))));
                    t.add_row(row);
                }
                let _ = writeln!(out, "\n{s}: {}\n{t}", m.title);
            }
        }
    }
    let early: u64 = data.cells.iter().map(|c| c.early).sum();
    if early > 0 {
        let _ = writeln!(
            out,
            "\nEARLY RETURNS: {early} sleeps returned before their deadline"
        );
    }
    let _ = writeln!(out, "\n{}", legend());
    out
}

fn describe_models(models: &[ModelSpec]) -> String {
    let mut sched: Vec<String> = Vec::new();
    let mut probs: Vec<f64> = Vec::new();
    let mut out = Vec::new();
    for m in models {
        match m {
            ModelSpec::Scheduler(s) => {
                sched.push(short_ns(s.period_ns));
                if !probs.contains(&s.preempt_prob) {
                    probs.push(s.preempt_prob);
                }
            }
            ModelSpec::Replay(r) => out.push(format!(
                "replay of {} ({} at load {}, timer slack {}; measured at {})",
                r.file,
                r.mechanism,
                r.load,
                fmt_ns(r.timer_slack_ns),
                r.anchors
                    .iter()
                    .map(|a| format!("{} ({} samples)", short_ns(a.requested_ns), a.samples))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
    if !sched.is_empty() {
        out.insert(
            0,
            format!(
                "seed 002 scheduler: wake = request end + U(0, period) + period while rand < {}; periods {}",
                probs
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join("/"),
                sched.join(", ")
            ),
        );
    }
    out.join("; ")
}

/// [`ERROR_STEPS`] as text.
const ERROR_LABELS: [&str; 9] = [
    "0.01 %", "0.03 %", "0.1 %", "0.3 %", "1 %", "3 %", "10 %", "30 %", "100 %",
];

/// [`CPU_STEPS`] as text.
const CPU_LABELS: [&str; 9] = [
    "1 %", "2 %", "5 %", "10 %", "20 %", "30 %", "50 %", "70 %", "90 %",
];

/// The grade legend.
pub fn legend() -> String {
    let row = |labels: &[&str; 9]| {
        let mut parts = vec![format!("'{}' < {}", RAMP[0], labels[0])];
        for (i, l) in labels.iter().enumerate() {
            parts.push(format!("'{}' ≥ {l}", RAMP[i + 1]));
        }
        parts.join("  ")
    };
    format!(
        "grades: error {}\n        CPU   {}",
        row(&ERROR_LABELS),
        row(&CPU_LABELS)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grades_cover_the_ramp() {
        assert_eq!(grade(0.0, &ERROR_STEPS), ' ');
        assert_eq!(grade(0.00005, &ERROR_STEPS), ' ');
        assert_eq!(grade(0.0001, &ERROR_STEPS), '.');
        assert_eq!(grade(0.02, &ERROR_STEPS), '+');
        assert_eq!(grade(0.5, &ERROR_STEPS), '%');
        assert_eq!(grade(7.0, &ERROR_STEPS), '@');
        assert_eq!(grade(100.0, &CPU_STEPS), '@');
        assert_eq!(grade(0.5, &CPU_STEPS), ' ');
    }

    #[test]
    fn percentages() {
        assert_eq!(fmt_percent(0.0), "0 %");
        assert_eq!(fmt_percent(0.01234), "0.0123 %");
        assert_eq!(fmt_percent(0.5), "0.500 %");
        assert_eq!(fmt_percent(4.567), "4.57 %");
        assert_eq!(fmt_percent(45.67), "45.7 %");
        assert_eq!(fmt_percent(456.7), "457 %");
    }
}
