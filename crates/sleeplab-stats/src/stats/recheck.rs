//! The quantile rule applied to a result as read from a file, before it is typed: files
//! of result schema 1 were written before the rule and hold p99s of 2 samples. Every
//! quantile whose sample cannot resolve it becomes `null`, wherever it sits.
//!
//! The shapes that hold quantiles, and the n each is checked against:
//! * a summary (`count` beside `p90_ns`, `p99_ns`, `p999_ns`): `count`;
//! * the timers' tick statistics (`received` beside `p99_lateness_ns`): `received`, the
//!   wakes that delivered a deadline (a lower bound of the ticks the lateness is over,
//!   so a quantile is never kept on too few);
//! * a runtime's periodic cell (`ticks` beside a `lateness` object with `p99_ns`): `ticks`;
//! * a simulate cell (`sleeps` beside `p99_rel_error`, `p99_lateness_ns`): `sleeps`;
//! * a replay anchor (`samples` beside `p99_oversleep_ns`): `samples`.
//!
//! A quantile's interval (`p99_ci_ns` beside `p99_ns`, `p99_rel_error_ci` beside
//! `p99_rel_error`) is nulled with it.

use super::Stat;
use serde_json::Value;

/// Nulls every quantile in `v` that its sample cannot resolve; returns how many.
pub fn recheck_quantiles(v: &mut Value) -> usize {
    match v {
        Value::Array(items) => items.iter_mut().map(recheck_quantiles).sum(),
        Value::Object(map) => {
            let mut nulled = 0;
            let count = |key: &str, map: &serde_json::Map<String, Value>| {
                map.get(key).and_then(Value::as_u64)
            };
            let mut null_if =
                |map: &mut serde_json::Map<String, Value>, key: &str, stat: Stat, n: u64| {
                    if stat.resolved_by(n) {
                        return;
                    }
                    if let Some(slot) = map.get_mut(key)
                        && !slot.is_null()
                    {
                        *slot = Value::Null;
                        nulled += 1;
                    }
                    if let Some(slot) = map.get_mut(&ci_key(key)) {
                        *slot = Value::Null;
                    }
                };
            if let Some(n) = count("count", map) {
                for (key, stat) in [
                    ("p90_ns", Stat::P90),
                    ("p99_ns", Stat::P99),
                    ("p999_ns", Stat::P999),
                ] {
                    null_if(map, key, stat, n);
                }
            }
            if let Some(n) = count("received", map) {
                null_if(map, "p99_lateness_ns", Stat::P99, n);
            }
            if let Some(n) = count("ticks", map)
                && let Some(Value::Object(lateness)) = map.get_mut("lateness")
            {
                null_if(lateness, "p99_ns", Stat::P99, n);
            }
            if let Some(n) = count("sleeps", map) {
                null_if(map, "p99_rel_error", Stat::P99, n);
                null_if(map, "p99_lateness_ns", Stat::P99, n);
            }
            if let Some(n) = count("samples", map) {
                null_if(map, "p99_oversleep_ns", Stat::P99, n);
            }
            nulled + map.values_mut().map(recheck_quantiles).sum::<usize>()
        }
        _ => 0,
    }
}

/// The key of a quantile's interval: `p99_ci_ns` for `p99_ns`, `p99_rel_error_ci` for
/// `p99_rel_error`.
pub fn ci_key(key: &str) -> String {
    match key.strip_suffix("_ns") {
        Some(stem) => format!("{stem}_ci_ns"),
        None => format!("{key}_ci"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nulls_what_the_sample_cannot_resolve_and_keeps_the_rest() {
        let mut v = json!({
            "cells": [
                {"summary": {"count": 2, "median_ns": 5.0, "p90_ns": 6.0, "p99_ns": 7.0, "p99_ci_ns": [6.0, null], "p999_ns": 8.0}},
                {"summary": {"count": 150, "p90_ns": 6.0, "p99_ns": 7.0, "p999_ns": 8.0}},
            ],
            "merged": {"received": 99, "p99_lateness_ns": 4.0},
            "periodic": {"ticks": 100, "lateness": {"p99_ns": 3.0}},
            "sim": {"sleeps": 40, "p99_rel_error": 0.5, "p99_rel_error_ci": [0.1, null], "p99_lateness_ns": 9.0},
            "anchor": {"samples": 150, "p99_oversleep_ns": 9},
        });
        assert_eq!(recheck_quantiles(&mut v), 7);
        assert_eq!(v["cells"][0]["summary"]["p99_ci_ns"], Value::Null);
        assert_eq!(v["sim"]["p99_rel_error"], Value::Null);
        assert_eq!(v["sim"]["p99_rel_error_ci"], Value::Null);
        assert_eq!(v["anchor"]["p99_oversleep_ns"], json!(9));
        assert_eq!(
            (ci_key("p99_ns"), ci_key("p50_rel_error")),
            ("p99_ci_ns".into(), "p50_rel_error_ci".into())
        );
        assert_eq!(v["cells"][0]["summary"]["median_ns"], json!(5.0));
        assert_eq!(v["cells"][0]["summary"]["p90_ns"], Value::Null);
        assert_eq!(v["cells"][1]["summary"]["p99_ns"], json!(7.0));
        assert_eq!(v["cells"][1]["summary"]["p999_ns"], Value::Null);
        assert_eq!(v["merged"]["p99_lateness_ns"], Value::Null);
        assert_eq!(v["periodic"]["lateness"]["p99_ns"], json!(3.0));
        // Idempotent.
        assert_eq!(recheck_quantiles(&mut v), 0);
    }
}
