//! Strategy settings by name: the one parser of `NAME[:PARAM[,PARAM]…]`, so a benchmark
//! can run each strategy at several settings (`seed-hybrid:x=2`, `fixed-margin:250us`,
//! `precise:q=0.999,budget=3%`). `precise`'s parameters are the sleeper's option table
//! ([`OPTIONS`](crate::precise::OPTIONS)), read and checked by it.

use super::abs_sleep::AbsSleep;
use super::fixed_margin::FixedMargin;
use super::pure_spin::PureSpin;
use super::registry::STRATEGIES;
use super::sdl_precise::SdlPrecise;
use super::seed_hybrid::SeedHybrid;
use super::std_sleep::StdSleep;
use crate::clock::Env;
use crate::duration::{format_ns, parse_ns};
use crate::lab::WaitStrategy;
use crate::precise::options::{SPINS, parse_decimal};
use crate::precise::precise_strategy::Precise;
use crate::precise::spin::SpinStrategy;
use crate::precise::{OptionError, OptionValue, PreciseSleeperBuilder, SleeperOption};

/// A strategy name that is not in the registry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown wait strategy `{name}` (known: {known})")]
pub struct UnknownStrategy {
    /// The name that was asked for.
    pub name: String,
    /// The known names, comma-separated.
    pub known: String,
}

impl UnknownStrategy {
    fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            known: STRATEGIES
                .iter()
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// Builds the strategy called `name` with its default parameters, fresh (nothing
/// learned). Names are matched exactly (see [`STRATEGIES`]); for parameters, see
/// [`strategy_by_setting`].
///
/// The strategies do not touch the thread's timer slack (not even `precise`): the
/// caller decides it, so every strategy in a comparison runs under the same slack. Use
/// [`PreciseSleeper`](crate::precise::PreciseSleeper) for the self-configuring version.
pub fn strategy_by_name<E: Env>(
    name: &str,
) -> Result<Box<dyn WaitStrategy<E> + Send>, UnknownStrategy> {
    StrategySetting::from_name(name).map(|s| s.build())
}

/// Builds the strategy a setting names, e.g. `seed-hybrid:x=2` or
/// `precise:q=0.999,budget=3%` (see [`StrategySetting::parse`]), fresh.
pub fn strategy_by_setting<E: Env>(
    setting: &str,
) -> Result<Box<dyn WaitStrategy<E> + Send>, SettingError> {
    StrategySetting::parse(setting).map(|s| s.build())
}

/// A strategy with its parameters, parsed from a setting name (see the grammar below);
/// [`build`](Self::build) makes the strategy. Its `Display` is the canonical setting
/// name (parameters that differ from the defaults, in a fixed order).
///
/// A `PARAM` is `key=value`, or a bare value for the strategy's primary parameter
/// (seed-hybrid's `x`, fixed-margin's `margin`). Durations are written in the grammar
/// of [`crate::duration`] (`250us`, `1.5ms`, `1μs`; whole nanoseconds). `precise` takes
/// every option of the sleeper's table but the timer slack, by its short key (`q`,
/// `tol`, `budget`, `early`, `slice`) or its name (`quantile`, `lateness_tolerance`…),
/// with the table's ranges. Unknown names, unknown keys, repeated keys and bad values
/// are a [`SettingError`] naming what was wrong and what is known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StrategySetting {
    /// `std-sleep`.
    StdSleep,
    /// `clock-nanosleep-abs`.
    AbsSleep,
    /// `spin`.
    PureSpin,
    /// `sdl-precise`.
    SdlPrecise,
    /// `seed-hybrid[:x=X]`: estimate = mean + X·σ (default 1).
    SeedHybrid {
        /// X.
        sigmas: f64,
    },
    /// `fixed-margin[:MARGIN][,spin=pause|yield]` (default 125 µs, yield).
    FixedMargin {
        /// The margin, ns.
        margin_ns: u64,
        /// How the spin phase waits.
        spin: SpinStrategy,
    },
    /// `precise[:q=Q,cap=D,window=N,tol=D,budget=auto|none|P%,early=D,spin=pause|yield,
    /// contention=adapt|ignore,slice=short|inherit,prior=D,half_life=N,headroom=D]`: the
    /// sleeper's options (its timer slack aside).
    Precise(PreciseSleeperBuilder),
}

/// One parameter a strategy setting accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    /// The key, e.g. `q`.
    pub key: &'static str,
    /// What it sets, in one line, with its default.
    pub description: String,
}

/// Why a setting name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// The name before `:` is not a strategy.
    #[error(transparent)]
    Unknown(#[from] UnknownStrategy),
    /// A key the strategy does not have.
    #[error("`{strategy}` has no parameter `{key}` (known: {known})")]
    UnknownParam {
        /// The strategy.
        strategy: &'static str,
        /// The key as given (for a bare value: the value).
        key: String,
        /// Its known keys, comma-separated, or `none`.
        known: String,
    },
    /// A value that does not parse or is out of range.
    #[error("bad value `{value}` for `{strategy}:{key}`: expected {expected}")]
    BadValue {
        /// The strategy.
        strategy: &'static str,
        /// The key.
        key: &'static str,
        /// The value as given.
        value: String,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// The same key twice.
    #[error("parameter `{key}` of `{strategy}` given twice")]
    Repeated {
        /// The strategy.
        strategy: &'static str,
        /// The key.
        key: &'static str,
    },
    /// `name:` with nothing after it, or `,,`.
    #[error("empty parameter in `{setting}`")]
    EmptyParam {
        /// The whole setting as given.
        setting: String,
    },
    /// Values each in range that do not go together (a prior above the cap).
    #[error("`{strategy}`: {error}")]
    Inconsistent {
        /// The strategy.
        strategy: &'static str,
        /// What does not go together.
        error: OptionError,
    },
}

/// seed-hybrid's and fixed-margin's own parameters: key, what it sets.
const SEED_PARAMS: &[(&str, &str)] = &[("x", "estimate = mean + x·σ of 1 ms sleeps")];
const FIXED_PARAMS: &[(&str, &str)] = &[
    ("margin", "time left to the spin phase, a duration"),
    ("spin", "pause or yield"),
];
const SIGMAS: &str = "a number from 0 to 100";
const MARGIN: &str = "a duration with a unit (ns, us, ms, s), e.g. 250us";

impl StrategySetting {
    /// The strategy called `name` with its default parameters (exact names, see
    /// [`STRATEGIES`](super::STRATEGIES)).
    pub fn from_name(name: &str) -> Result<Self, UnknownStrategy> {
        Ok(match name {
            StdSleep::NAME => Self::StdSleep,
            AbsSleep::NAME => Self::AbsSleep,
            PureSpin::NAME => Self::PureSpin,
            SdlPrecise::NAME => Self::SdlPrecise,
            SeedHybrid::NAME => Self::SeedHybrid { sigmas: 1.0 },
            FixedMargin::NAME => Self::FixedMargin {
                margin_ns: FixedMargin::DEFAULT_MARGIN_NS,
                spin: SpinStrategy::YieldSpin,
            },
            Precise::NAME => Self::Precise(PreciseSleeperBuilder::default()),
            _ => return Err(UnknownStrategy::new(name)),
        })
    }

    /// Parses `NAME[:PARAM[,PARAM]…]` (see the grammar in the [type docs](Self)).
    pub fn parse(setting: &str) -> Result<Self, SettingError> {
        let (name, params) = match setting.split_once(':') {
            Some((n, rest)) => (n.trim(), Some(rest)),
            None => (setting.trim(), None),
        };
        let mut out = Self::from_name(name)?;
        let Some(params) = params else {
            return Ok(out);
        };
        let mut seen: Vec<&'static str> = Vec::new();
        for raw in params.split(',').map(str::trim) {
            if raw.is_empty() {
                return Err(SettingError::EmptyParam {
                    setting: setting.to_owned(),
                });
            }
            let (key, value) = match raw.split_once('=') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => (out.primary().unwrap_or(raw), raw),
            };
            let key = out.known_key(key)?;
            if seen.contains(&key) {
                let strategy = out.name();
                return Err(SettingError::Repeated { strategy, key });
            }
            seen.push(key);
            out.set(key, value)?;
        }
        if let Self::Precise(builder) = &out {
            builder
                .validate()
                .map_err(|error| SettingError::Inconsistent {
                    strategy: Precise::NAME,
                    error,
                })?;
        }
        Ok(out)
    }

    /// A fresh strategy with these parameters (nothing learned).
    pub fn build<E: Env>(&self) -> Box<dyn WaitStrategy<E> + Send> {
        match *self {
            Self::StdSleep => Box::new(StdSleep),
            Self::AbsSleep => Box::new(AbsSleep),
            Self::PureSpin => Box::new(PureSpin),
            Self::SdlPrecise => Box::new(SdlPrecise),
            Self::SeedHybrid { sigmas } => Box::new(SeedHybrid::with_sigmas(sigmas)),
            Self::FixedMargin { margin_ns, spin } => Box::new(FixedMargin::new(margin_ns, spin)),
            Self::Precise(builder) => Box::new(builder.strategy()),
        }
    }

    /// The strategy's registry name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::StdSleep => StdSleep::NAME,
            Self::AbsSleep => AbsSleep::NAME,
            Self::PureSpin => PureSpin::NAME,
            Self::SdlPrecise => SdlPrecise::NAME,
            Self::SeedHybrid { .. } => SeedHybrid::NAME,
            Self::FixedMargin { .. } => FixedMargin::NAME,
            Self::Precise(_) => Precise::NAME,
        }
    }

    /// The parameters this strategy accepts, each with its default, in the order its
    /// canonical name lists them.
    pub fn params(&self) -> Vec<ParamInfo> {
        let defaults = Self::from_name(self.name()).unwrap_or(*self);
        let own = |params: &[(&'static str, &str)]| -> Vec<ParamInfo> {
            params
                .iter()
                .map(|&(key, what)| ParamInfo {
                    key,
                    description: format!(
                        "{what} (default {})",
                        defaults.param_value(key).unwrap_or_default()
                    ),
                })
                .collect()
        };
        match self {
            Self::SeedHybrid { .. } => own(SEED_PARAMS),
            Self::FixedMargin { .. } => own(FIXED_PARAMS),
            Self::Precise(_) => setting_options()
                .map(|(key, o)| ParamInfo {
                    key,
                    description: format!(
                        "{}: {} (default {})",
                        o.doc,
                        o.expected,
                        o.format(o.default_value())
                    ),
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The text of parameter `key`'s value here (as the setting grammar reads it).
    pub(super) fn param_value(&self, key: &str) -> Option<String> {
        match (self, key) {
            (Self::SeedHybrid { sigmas }, "x") => Some(sigmas.to_string()),
            (Self::FixedMargin { margin_ns, .. }, "margin") => Some(format_ns(*margin_ns)),
            (Self::FixedMargin { spin, .. }, "spin") => {
                let i = SPINS.iter().position(|s| s == spin).unwrap_or(0);
                Some(spin_option().format(OptionValue::Choice(i)))
            }
            (Self::Precise(builder), key) => {
                SleeperOption::by_setting_key(key).map(|o| o.format(o.get(builder)))
            }
            _ => None,
        }
    }

    /// The key a bare value sets, if the strategy has a primary parameter.
    fn primary(&self) -> Option<&'static str> {
        match self {
            Self::SeedHybrid { .. } => Some("x"),
            Self::FixedMargin { .. } => Some("margin"),
            _ => None,
        }
    }

    /// The canonical key of `key` (for `precise`, an option's name reads as its key).
    fn known_key(&self, key: &str) -> Result<&'static str, SettingError> {
        let found = match self {
            Self::SeedHybrid { .. } => SEED_PARAMS.iter().map(|p| p.0).find(|k| *k == key),
            Self::FixedMargin { .. } => FIXED_PARAMS.iter().map(|p| p.0).find(|k| *k == key),
            Self::Precise(_) => SleeperOption::by_setting_key(key).and_then(|o| o.setting_key),
            _ => None,
        };
        found.ok_or_else(|| {
            let known = self
                .params()
                .iter()
                .map(|p| p.key)
                .collect::<Vec<_>>()
                .join(", ");
            SettingError::UnknownParam {
                strategy: self.name(),
                key: key.to_owned(),
                known: if known.is_empty() {
                    "none".into()
                } else {
                    known
                },
            }
        })
    }

    fn set(&mut self, key: &'static str, value: &str) -> Result<(), SettingError> {
        let strategy = self.name();
        let bad = |expected| SettingError::BadValue {
            strategy,
            key,
            value: value.to_owned(),
            expected,
        };
        match (self, key) {
            (Self::SeedHybrid { sigmas }, "x") => {
                *sigmas = parse_decimal(value)
                    .filter(|x| (0.0..=100.0).contains(x))
                    .ok_or_else(|| bad(SIGMAS))?;
            }
            (Self::FixedMargin { margin_ns, .. }, "margin") => {
                *margin_ns = parse_ns(value).map_err(|_| bad(MARGIN))?;
            }
            (Self::FixedMargin { spin, .. }, "spin") => {
                let option = spin_option();
                *spin = match option.parse(value) {
                    Ok(OptionValue::Choice(i)) => SPINS[i],
                    _ => return Err(bad(option.expected)),
                };
            }
            (Self::Precise(builder), key) => {
                let option = SleeperOption::by_setting_key(key).ok_or_else(|| bad(""))?;
                option
                    .parse(value)
                    .and_then(|v| option.set(builder, v))
                    .map_err(|_| bad(option.expected))?;
            }
            // `known_key` admitted only this strategy's keys.
            _ => unreachable!("key {key} checked by known_key"),
        }
        Ok(())
    }
}

/// The sleeper's options that are strategy settings, with their keys, in table order.
pub(super) fn setting_options() -> impl Iterator<Item = (&'static str, &'static SleeperOption)> {
    crate::precise::OPTIONS
        .iter()
        .filter_map(|o| o.setting_key.map(|k| (k, o)))
}

/// The table's `spin` option: its words and errors serve fixed-margin's `spin` too.
fn spin_option() -> &'static SleeperOption {
    crate::precise::OPTIONS
        .iter()
        .find(|o| o.name == "spin")
        .unwrap_or(&crate::precise::OPTIONS[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::VirtualEnv;
    use crate::precise::CpuBudget;

    fn parse(s: &str) -> StrategySetting {
        StrategySetting::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn every_registry_name_parses_to_its_defaults_and_builds() {
        for info in STRATEGIES {
            let s = parse(info.name);
            assert_eq!(s.name(), info.name);
            assert_eq!(s.to_string(), info.name, "defaults print as the bare name");
            assert_eq!(s.build::<VirtualEnv>().name(), info.name);
            assert!(strategy_by_name::<VirtualEnv>(info.name).is_ok());
        }
    }

    #[test]
    fn parameters_by_key_and_bare_primary_values() {
        assert_eq!(
            parse("seed-hybrid:x=2"),
            StrategySetting::SeedHybrid { sigmas: 2.0 }
        );
        assert_eq!(
            parse("seed-hybrid:0"),
            StrategySetting::SeedHybrid { sigmas: 0.0 }
        );
        assert_eq!(
            parse("fixed-margin:250us"),
            StrategySetting::FixedMargin {
                margin_ns: 250_000,
                spin: SpinStrategy::YieldSpin
            }
        );
        assert_eq!(
            parse(" fixed-margin : margin=1.5ms , spin=pause ").to_string(),
            "fixed-margin:1500us,spin=pause"
        );
        let StrategySetting::Precise(builder) =
            parse("precise:q=0.999,cap=2ms,window=1024,tol=50us,budget=3%,early=100µs,spin=yield")
        else {
            panic!("not precise");
        };
        let strategy = builder.strategy();
        let (estimator, tradeoff, spin) = (
            *strategy.estimator().config(),
            strategy.tradeoff(),
            strategy.spin_strategy(),
        );
        assert_eq!(
            (estimator.quantile, estimator.cap_ns, estimator.window),
            (0.999, 2_000_000, 1024)
        );
        assert_eq!(tradeoff.lateness_tolerance_ns, 50_000);
        assert_eq!(tradeoff.cpu_budget, CpuBudget::Percent(3.0));
        assert_eq!(tradeoff.early_tolerance_ns, 100_000);
        assert_eq!(spin, SpinStrategy::YieldSpin);
        // The canonical name lists what differs from the defaults, in a fixed order.
        assert_eq!(
            parse("precise:spin=yield,early=100us,budget=3,tol=50us,window=1024,cap=2ms,q=0.999")
                .to_string(),
            "precise:q=0.999,cap=2ms,window=1024,tol=50us,budget=3%,early=100us,spin=yield"
        );
        assert_eq!(
            parse("precise:budget=none").to_string(),
            "precise:budget=none"
        );
        assert_eq!(parse("precise:budget=auto").to_string(), "precise");
        assert_eq!(parse("precise:q=0.99").to_string(), "precise");
        assert_eq!(
            parse("precise:contention=ignore").to_string(),
            "precise:contention=ignore"
        );
        assert_eq!(parse("precise:contention=adapt").to_string(), "precise");
        assert!(StrategySetting::parse("precise:contention=maybe").is_err());
        assert_eq!(
            parse("precise:slice=inherit").to_string(),
            "precise:slice=inherit"
        );
        assert_eq!(parse("precise:slice=short").to_string(), "precise");
        assert!(StrategySetting::parse("precise:slice=long").is_err());
    }

    #[test]
    fn settings_reach_the_strategy() {
        let mut s = strategy_by_setting::<VirtualEnv>("precise:early=1ms").unwrap();
        let mut env = VirtualEnv::new();
        let r = s.sleep_until(&mut env, 10_000_000);
        assert_eq!(r.deadline_ns, 10_000_000);
        assert!(r.woke_ns >= 9_000_000 && r.woke_ns < 10_000_000, "{r:?}");
        let mut f = strategy_by_setting::<VirtualEnv>("fixed-margin:2ms,spin=pause").unwrap();
        let r = f.sleep_until(&mut env, 20_000_000);
        assert_eq!(r.margin_ns, 2_000_000);
        assert!(env.spin_pauses() > 0);
    }

    #[test]
    fn bad_settings_are_typed_errors_naming_the_problem() {
        let err = |s: &str| StrategySetting::parse(s).unwrap_err();
        assert!(matches!(err("nope"), SettingError::Unknown(u) if u.name == "nope"));
        assert!(matches!(err("nope:x=1"), SettingError::Unknown(_)));
        assert_eq!(
            err("seed-hybrid:y=2").to_string(),
            "`seed-hybrid` has no parameter `y` (known: x)"
        );
        assert_eq!(
            err("spin:fast").to_string(),
            "`spin` has no parameter `fast` (known: none)"
        );
        assert_eq!(
            err("precise:0.999").to_string(),
            "`precise` has no parameter `0.999` (known: q, cap, window, tol, budget, early, spin, contention, host, slice, prior, half_life, headroom)"
        );
        assert_eq!(
            err("fixed-margin:250").to_string(),
            "bad value `250` for `fixed-margin:margin`: expected a duration with a unit (ns, us, ms, s), e.g. 250us"
        );
        assert_eq!(
            err("precise:q=1.5").to_string(),
            "bad value `1.5` for `precise:q`: expected a quantile from 0.5 to 1"
        );
        for bad in [
            "seed-hybrid:x=-1",
            "seed-hybrid:x=nan",
            "precise:budget=120%",
            "precise:window=0",
            "precise:cap=0ns",
            "precise:spin=fast",
            "precise:tol=1e3us",
        ] {
            assert!(matches!(err(bad), SettingError::BadValue { .. }), "{bad}");
        }
        assert_eq!(
            err("precise:q=0.9,q=0.99").to_string(),
            "parameter `q` of `precise` given twice"
        );
        assert!(matches!(
            err("fixed-margin:"),
            SettingError::EmptyParam { .. }
        ));
        assert!(matches!(
            err("precise:q=0.9,,tol=1us"),
            SettingError::EmptyParam { .. }
        ));
    }
}
