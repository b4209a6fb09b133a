//! Reading and writing result files.

use super::{OLDEST_READABLE_VERSION, ResultFile, SCHEMA_VERSION};
use sleeplab_stats::atomic_write;
use std::path::Path;

/// Why a result file could not be read. Every variant is a user error (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file cannot be read.
    #[error("cannot read result file {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is empty.
    #[error("result file {0} is empty")]
    Empty(String),
    /// Not JSON, or truncated.
    #[error("result file {path} is not valid JSON: {source}")]
    NotJson {
        /// The path.
        path: String,
        /// The parser's message (with line and column).
        source: serde_json::Error,
    },
    /// JSON, but not a sleeplab result.
    #[error("{0} is not a sleeplab result (no schema_version field)")]
    NotAResult(String),
    /// A result of another format version.
    #[error(
        "result file {path} has schema_version {found}; this sleeplab reads versions {OLDEST_READABLE_VERSION} to {expected}"
    )]
    Version {
        /// The path.
        path: String,
        /// The version in the file.
        found: serde_json::Value,
        /// The version this build reads.
        expected: u32,
    },
    /// A sleeplab result whose content does not match the schema.
    #[error("result file {path} does not match the result schema: {source}")]
    Schema {
        /// The path.
        path: String,
        /// The mismatch.
        source: serde_json::Error,
    },
}

/// Loads and validates a result file.
pub fn load_result(path: &Path) -> Result<ResultFile, LoadError> {
    let p = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Io {
        path: p.clone(),
        source,
    })?;
    parse_result(&text, &p)
}

/// Parses a result from text; `origin` names it in errors.
pub fn parse_result(text: &str, origin: &str) -> Result<ResultFile, LoadError> {
    if text.trim().is_empty() {
        return Err(LoadError::Empty(origin.into()));
    }
    let mut value: serde_json::Value =
        serde_json::from_str(text).map_err(|source| LoadError::NotJson {
            path: origin.into(),
            source,
        })?;
    let version = value
        .get("schema_version")
        .ok_or_else(|| LoadError::NotAResult(origin.into()))?;
    let readable = u64::from(OLDEST_READABLE_VERSION)..=u64::from(SCHEMA_VERSION);
    if !version.as_u64().is_some_and(|v| readable.contains(&v)) {
        return Err(LoadError::Version {
            path: origin.into(),
            found: version.clone(),
            expected: SCHEMA_VERSION,
        });
    }
    // Version 1 predates the quantile rule; a later file may have been edited by hand.
    sleeplab_stats::recheck_quantiles(&mut value);
    serde_json::from_value(value).map_err(|source| LoadError::Schema {
        path: origin.into(),
        source,
    })
}

/// Writes a result as pretty JSON, whole or not at all.
pub fn write_json(path: &Path, result: &ResultFile) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(result)?;
    atomic_write(path, text.as_bytes())
}

/// The JSON Schema of [`ResultFile`].
pub fn result_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(ResultFile)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fuzz regression (`fuzz/` target `result_json`, crash-7a9069f0): a result whose
    /// floats have 17–20 significant digits did not load back to the same value after
    /// being written, because serde_json's default float parser may be 1 ULP off. With
    /// its `float_roundtrip` feature every value written loads back exactly.
    #[test]
    fn fuzz_crash_7a9069f0_floats_round_trip_exactly() {
        let text = include_str!(
            "../../../sleeplab-cli/tests/fixtures/fuzz/result_json-crash-7a9069f0.json"
        );
        let result = parse_result(text, "crash").unwrap();
        let again = serde_json::to_string(&result).unwrap();
        let back = parse_result(&again, "again").unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&result).unwrap()
        );
        // The exact values: the nearest f64 to each decimal in the file.
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let cpu = v["data"]["candidates"][2]["cpu_percent"].as_f64().unwrap();
        assert_eq!(cpu.to_bits(), 0x4026_88a2_737c_db98, "11.26686440371649597");
        let shortest: f64 = serde_json::from_str("11.266864403716495").unwrap();
        assert_eq!(shortest.to_bits(), 0x4026_88a2_737c_db97);
    }

    /// The committed fixture is a version-1 survey (written before the rule): it held
    /// quantiles of too few samples, and none survive loading.
    #[test]
    fn a_version_1_survey_loads_with_no_unresolved_quantile() {
        let text = include_str!("../../../sleeplab-cli/tests/fixtures/survey.json");
        let mut raw: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(raw["schema_version"], 1);
        let nulled = sleeplab_stats::recheck_quantiles(&mut raw);
        assert!(
            nulled > 100,
            "the v1 fixture held {nulled} unresolved quantiles"
        );
        let loaded = parse_result(text, "fixture").unwrap();
        let mut again = serde_json::to_value(&loaded).unwrap();
        assert_eq!(sleeplab_stats::recheck_quantiles(&mut again), 0);
        // A version-1 file holds no intervals: they load as null, written beside their
        // quantiles; without them the file is what the rule left of it.
        assert!(drop_null_intervals(&mut again) > 100);
        assert_eq!(again, raw, "loading nulls exactly what the rule rejects");
    }

    /// Removes every null `*_ci_ns` / `*_ci` key; returns how many.
    fn drop_null_intervals(v: &mut serde_json::Value) -> usize {
        match v {
            serde_json::Value::Array(items) => items.iter_mut().map(drop_null_intervals).sum(),
            serde_json::Value::Object(map) => {
                let before = map.len();
                map.retain(|k, v| !(v.is_null() && (k.ends_with("_ci_ns") || k.ends_with("_ci"))));
                before - map.len() + map.values_mut().map(drop_null_intervals).sum::<usize>()
            }
            _ => 0,
        }
    }
}
