//! Contender settings by name: the one parser of `NAME[:PARAM[,PARAM]…]`, so a benchmark
//! can run each contender at several settings (`seed-hybrid:x=2`, `fixed-margin:250us`,
//! `precise:q=0.999,budget=3%`).

use super::abs_sleep::AbsSleep;
use super::fixed_margin::FixedMargin;
use super::pure_spin::PureSpin;
use super::registry::STRATEGIES;
use super::sdl_precise::SdlPrecise;
use super::seed_hybrid::SeedHybrid;
use super::std_sleep::StdSleep;
use crate::clock::Env;
use crate::precise::estimator::EstimatorConfig;
use crate::precise::precise_strategy::Precise;
use crate::precise::spin::SpinStrategy;
use crate::precise::tradeoff::{ContentionPolicy, CpuBudget, SlicePolicy, Tradeoff};
use crate::precise::wait_strategy::WaitStrategy;

use super::values::{parse_duration_ns, parse_number};

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
/// caller decides it, so every contender in a comparison runs under the same slack. Use
/// [`PreciseSleeper`](crate::precise::PreciseSleeper) for the self-configuring version.
pub fn strategy_by_name<E: Env>(
    name: &str,
) -> Result<Box<dyn WaitStrategy<E> + Send>, UnknownStrategy> {
    ContenderSetting::from_name(name).map(|s| s.build())
}

/// Builds the strategy a setting names, e.g. `seed-hybrid:x=2` or
/// `precise:q=0.999,budget=3%` (see [`ContenderSetting::parse`]), fresh.
pub fn strategy_by_setting<E: Env>(
    setting: &str,
) -> Result<Box<dyn WaitStrategy<E> + Send>, SettingError> {
    ContenderSetting::parse(setting).map(|s| s.build())
}

/// A contender with its parameters, parsed from a setting name (see the
/// grammar below); [`build`](Self::build) makes the strategy. Its `Display` is the
/// canonical setting name (parameters that differ from the defaults, in a fixed order).
///
/// A `PARAM` is `key=value`, or a bare value for the contender's primary parameter
/// (seed-hybrid's `x`, fixed-margin's `margin`). Durations take a unit (`ns`, `us`, `µs`,
/// `ms`, `s`; decimals allowed: `1.5ms`). Unknown names, unknown keys, repeated keys and
/// bad values are a [`SettingError`] naming what was wrong and what is known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ContenderSetting {
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
    /// contention=adapt|ignore,slice=short|inherit]`.
    Precise {
        /// The estimator's parameters (`q`, `cap`, `window`).
        estimator: EstimatorConfig,
        /// The trade-off (`tol`, `budget`, `early`).
        tradeoff: Tradeoff,
        /// How the spin phase waits (`spin`).
        spin: SpinStrategy,
    },
}

/// One parameter a contender setting accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamInfo {
    /// The key, e.g. `q`.
    pub key: &'static str,
    /// What it sets, in one line.
    pub description: &'static str,
}

const fn p(key: &'static str, description: &'static str) -> ParamInfo {
    ParamInfo { key, description }
}

const SEED_PARAMS: &[ParamInfo] = &[p("x", "estimate = mean + x·σ of 1 ms sleeps (default 1)")];
const FIXED_PARAMS: &[ParamInfo] = &[
    p(
        "margin",
        "time left to the spin phase, a duration (default 125us)",
    ),
    p("spin", "pause or yield (default yield)"),
];
const PRECISE_PARAMS: &[ParamInfo] = &[
    p(
        "q",
        "the lateness quantile the margin covers, 0.5..1 (default 0.99)",
    ),
    p(
        "cap",
        "largest oversleep learned and largest margin (default 50ms)",
    ),
    p(
        "window",
        "recent waits in the quantile window, 1..4096 (default 512)",
    ),
    p(
        "tol",
        "lateness accepted at the quantile, a duration (default 0)",
    ),
    p(
        "budget",
        "auto, none, or the % of each wait that may be spun (default auto)",
    ),
    p(
        "early",
        "return up to this long before the deadline (default 0)",
    ),
    p("spin", "pause or yield (default pause)"),
    p(
        "contention",
        "adapt (shorten or stop the spin while it keeps being preempted or starved) or ignore (default adapt)",
    ),
    p(
        "slice",
        "short (ask the scheduler for a 100 µs slice) or inherit (default short)",
    ),
];

/// Why a setting name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// The name before `:` is not a strategy.
    #[error(transparent)]
    Unknown(#[from] UnknownStrategy),
    /// A key the contender does not have.
    #[error("`{strategy}` has no parameter `{key}` (known: {known})")]
    UnknownParam {
        /// The contender.
        strategy: &'static str,
        /// The key as given (for a bare value: the value).
        key: String,
        /// Its known keys, comma-separated, or `none`.
        known: String,
    },
    /// A value that does not parse or is out of range.
    #[error("bad value `{value}` for `{strategy}:{key}`: expected {expected}")]
    BadValue {
        /// The contender.
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
        /// The contender.
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
}

impl ContenderSetting {
    /// The contender called `name` with its default parameters (exact names, see
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
            Precise::NAME => Self::Precise {
                estimator: EstimatorConfig::default(),
                tradeoff: Tradeoff::default(),
                spin: SpinStrategy::Spin,
            },
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
            Self::Precise {
                estimator,
                tradeoff,
                spin,
            } => Box::new(Precise::new(estimator, spin).with_tradeoff(tradeoff)),
        }
    }

    /// The contender's registry name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::StdSleep => StdSleep::NAME,
            Self::AbsSleep => AbsSleep::NAME,
            Self::PureSpin => PureSpin::NAME,
            Self::SdlPrecise => SdlPrecise::NAME,
            Self::SeedHybrid { .. } => SeedHybrid::NAME,
            Self::FixedMargin { .. } => FixedMargin::NAME,
            Self::Precise { .. } => Precise::NAME,
        }
    }

    /// The parameters this contender accepts.
    pub fn params(&self) -> &'static [ParamInfo] {
        match self {
            Self::SeedHybrid { .. } => SEED_PARAMS,
            Self::FixedMargin { .. } => FIXED_PARAMS,
            Self::Precise { .. } => PRECISE_PARAMS,
            _ => &[],
        }
    }

    /// The key a bare value sets, if the contender has a primary parameter.
    fn primary(&self) -> Option<&'static str> {
        match self {
            Self::SeedHybrid { .. } => Some("x"),
            Self::FixedMargin { .. } => Some("margin"),
            _ => None,
        }
    }

    fn known_key(&self, key: &str) -> Result<&'static str, SettingError> {
        let params = self.params();
        params
            .iter()
            .find(|p| p.key == key)
            .map(|p| p.key)
            .ok_or_else(|| {
                let known = params.iter().map(|p| p.key).collect::<Vec<_>>().join(", ");
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
        const DURATION: &str = "a duration with a unit (ns, us, ms, s), e.g. 250us";
        match (self, key) {
            (Self::SeedHybrid { sigmas }, "x") => {
                *sigmas = parse_number(value)
                    .filter(|x| (0.0..=100.0).contains(x))
                    .ok_or_else(|| bad("a number from 0 to 100"))?;
            }
            (Self::FixedMargin { margin_ns, .. }, "margin") => {
                *margin_ns = parse_duration_ns(value).ok_or_else(|| bad(DURATION))?;
            }
            (Self::FixedMargin { spin, .. } | Self::Precise { spin, .. }, "spin") => {
                *spin = match value {
                    "pause" => SpinStrategy::Spin,
                    "yield" => SpinStrategy::YieldSpin,
                    _ => return Err(bad("pause or yield")),
                };
            }
            (Self::Precise { estimator, .. }, "q") => {
                estimator.quantile = parse_number(value)
                    .filter(|q| (0.5..=1.0).contains(q))
                    .ok_or_else(|| bad("a quantile from 0.5 to 1"))?;
            }
            (Self::Precise { estimator, .. }, "cap") => {
                estimator.cap_ns = parse_duration_ns(value)
                    .filter(|&ns| ns > 0)
                    .ok_or_else(|| bad(DURATION))?;
                estimator.prior_ns = estimator.prior_ns.min(estimator.cap_ns);
            }
            (Self::Precise { estimator, .. }, "window") => {
                estimator.window = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=4096).contains(n))
                    .ok_or_else(|| bad("a whole number from 1 to 4096"))?;
            }
            (Self::Precise { tradeoff, .. }, "tol") => {
                tradeoff.lateness_tolerance_ns =
                    parse_duration_ns(value).ok_or_else(|| bad(DURATION))?;
            }
            (Self::Precise { tradeoff, .. }, "early") => {
                tradeoff.early_tolerance_ns =
                    parse_duration_ns(value).ok_or_else(|| bad(DURATION))?;
            }
            (Self::Precise { tradeoff, .. }, "contention") => {
                tradeoff.contention = match value {
                    "adapt" => ContentionPolicy::Adapt,
                    "ignore" => ContentionPolicy::Ignore,
                    _ => return Err(bad("adapt or ignore")),
                };
            }
            (Self::Precise { tradeoff, .. }, "slice") => {
                tradeoff.slice = match value {
                    "short" => SlicePolicy::Short,
                    "inherit" => SlicePolicy::Inherit,
                    _ => return Err(bad("short or inherit")),
                };
            }
            (Self::Precise { tradeoff, .. }, "budget") => {
                tradeoff.cpu_budget = match value {
                    "auto" => CpuBudget::Auto,
                    "none" => CpuBudget::Unlimited,
                    _ => CpuBudget::Percent(
                        parse_number(value.strip_suffix('%').unwrap_or(value))
                            .filter(|p| (0.0..=100.0).contains(p))
                            .ok_or_else(|| bad("auto, none, or a percentage from 0 to 100"))?,
                    ),
                };
            }
            // `known_key` admitted only this contender's keys.
            _ => unreachable!("key {key} checked by known_key"),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::precise::VirtualEnv;

    fn parse(s: &str) -> ContenderSetting {
        ContenderSetting::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
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
            ContenderSetting::SeedHybrid { sigmas: 2.0 }
        );
        assert_eq!(
            parse("seed-hybrid:0"),
            ContenderSetting::SeedHybrid { sigmas: 0.0 }
        );
        assert_eq!(
            parse("fixed-margin:250us"),
            ContenderSetting::FixedMargin {
                margin_ns: 250_000,
                spin: SpinStrategy::YieldSpin
            }
        );
        assert_eq!(
            parse(" fixed-margin : margin=1.5ms , spin=pause ").to_string(),
            "fixed-margin:1500us,spin=pause"
        );
        let ContenderSetting::Precise {
            estimator,
            tradeoff,
            spin,
        } = parse("precise:q=0.999,cap=2ms,window=1024,tol=50us,budget=3%,early=100µs,spin=yield")
        else {
            panic!("not precise");
        };
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
        assert!(ContenderSetting::parse("precise:contention=maybe").is_err());
        assert_eq!(
            parse("precise:slice=inherit").to_string(),
            "precise:slice=inherit"
        );
        assert_eq!(parse("precise:slice=short").to_string(), "precise");
        assert!(ContenderSetting::parse("precise:slice=long").is_err());
    }

    #[test]
    fn settings_reach_the_strategy() {
        let mut s = strategy_by_setting::<VirtualEnv>("precise:early=1ms").unwrap();
        let mut env = VirtualEnv::new();
        let r = s.sleep_until(&mut env, 10_000_000);
        assert_eq!(r.deadline, 10_000_000);
        assert!(r.woke >= 9_000_000 && r.woke < 10_000_000, "{r:?}");
        let mut f = strategy_by_setting::<VirtualEnv>("fixed-margin:2ms,spin=pause").unwrap();
        let r = f.sleep_until(&mut env, 20_000_000);
        assert_eq!(r.margin_ns, 2_000_000);
        assert!(env.spin_pauses() > 0);
    }

    #[test]
    fn bad_settings_are_typed_errors_naming_the_problem() {
        let err = |s: &str| ContenderSetting::parse(s).unwrap_err();
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
            "`precise` has no parameter `0.999` (known: q, cap, window, tol, budget, early, spin, contention, slice)"
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
