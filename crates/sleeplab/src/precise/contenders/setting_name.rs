//! The canonical name of a [`ContenderSetting`]: its `Display`, which
//! [`ContenderSetting::parse`] reads back.

use std::fmt;

use super::settings::ContenderSetting;
use super::values::format_duration;
use crate::precise::spin::SpinStrategy;
use crate::precise::tradeoff::{ContentionPolicy, CpuBudget, SlicePolicy};

impl fmt::Display for ContenderSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let default = Self::from_name(self.name()).map_err(|_| fmt::Error)?;
        let mut params: Vec<String> = Vec::new();
        match (self, default) {
            (Self::SeedHybrid { sigmas }, Self::SeedHybrid { sigmas: d }) if *sigmas != d => {
                params.push(format!("x={sigmas}"));
            }
            (
                Self::FixedMargin { margin_ns, spin },
                Self::FixedMargin {
                    margin_ns: dm,
                    spin: ds,
                },
            ) => {
                if *margin_ns != dm {
                    params.push(format_duration(*margin_ns));
                }
                if *spin != ds {
                    params.push(format!("spin={}", spin_name(*spin)));
                }
            }
            (
                Self::Precise {
                    estimator: e,
                    tradeoff: t,
                    spin,
                },
                Self::Precise {
                    estimator: de,
                    tradeoff: dt,
                    spin: ds,
                },
            ) => {
                let mut push = |cond: bool, s: String| {
                    if cond {
                        params.push(s);
                    }
                };
                push(e.quantile != de.quantile, format!("q={}", e.quantile));
                push(
                    e.cap_ns != de.cap_ns,
                    format!("cap={}", format_duration(e.cap_ns)),
                );
                push(e.window != de.window, format!("window={}", e.window));
                let tol = t.lateness_tolerance_ns;
                push(
                    tol != dt.lateness_tolerance_ns,
                    format!("tol={}", format_duration(tol)),
                );
                let budget = match t.cpu_budget {
                    CpuBudget::Auto => "auto".to_owned(),
                    CpuBudget::Unlimited => "none".to_owned(),
                    CpuBudget::Percent(p) => format!("{p}%"),
                };
                push(t.cpu_budget != dt.cpu_budget, format!("budget={budget}"));
                let early = t.early_tolerance_ns;
                push(
                    early != dt.early_tolerance_ns,
                    format!("early={}", format_duration(early)),
                );
                push(*spin != ds, format!("spin={}", spin_name(*spin)));
                let contention = match t.contention {
                    ContentionPolicy::Adapt => "adapt",
                    ContentionPolicy::Ignore => "ignore",
                };
                push(
                    t.contention != dt.contention,
                    format!("contention={contention}"),
                );
                let slice = match t.slice {
                    SlicePolicy::Short => "short",
                    SlicePolicy::Inherit => "inherit",
                };
                push(t.slice != dt.slice, format!("slice={slice}"));
            }
            _ => {}
        }
        f.write_str(self.name())?;
        if !params.is_empty() {
            write!(f, ":{}", params.join(","))?;
        }
        Ok(())
    }
}

fn spin_name(spin: SpinStrategy) -> &'static str {
    match spin {
        SpinStrategy::Spin => "pause",
        SpinStrategy::YieldSpin => "yield",
    }
}
