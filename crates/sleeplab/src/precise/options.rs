//! The option table: every option of the precise sleeper once, with its name, kind,
//! range, unit, doc and its place on [`PreciseSleeperBuilder`]; the default is the
//! builder's. Every surface goes through it, so they cannot disagree:
//!
//! * the strategy settings (`precise:q=0.999,tol=50us`) read each value's text with
//!   [`SleeperOption::parse`] and write it back with [`SleeperOption::format`];
//! * the C setters (`sleeplab_options_set_<name>[_ns]`) are generated from it, and pass
//!   their typed argument to [`PreciseSleeperBuilder::set`];
//! * the Python keyword arguments, `sleeplab.OPTIONS`, `sleeplab.DEFAULTS` and the
//!   stubs' signatures come from it.
//!
//! A value out of its range is an [`OptionError`], the same one for every surface
//! (`SLEEPLAB_EINVAL` in C, `ValueError` in Python).

use super::builder::PreciseSleeperBuilder;
use super::estimator::EstimatorConfig;
use super::sleeper::SlackPolicy;
use super::spin::SpinStrategy;
use super::tradeoff::{ContentionPolicy, CpuBudget, HostPolicy, SlicePolicy};
use crate::duration::{format_ns, parse_ns};

type B = PreciseSleeperBuilder;

/// What kind of value an option takes, and its range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptionKind {
    /// One of a few words; C passes a word's index (`SLEEPLAB_SPIN_YIELD` is 1).
    Choice(&'static [&'static str]),
    /// A duration of at least `min_ns`: nanoseconds in C (`_ns` setters), seconds or a
    /// duration string in Python, the duration grammar in settings.
    Duration {
        /// The shortest accepted, ns.
        min_ns: u64,
    },
    /// A whole number in `min..=max`.
    Count {
        /// The smallest accepted.
        min: u64,
        /// The largest accepted.
        max: u64,
    },
    /// A real number in `min..=max` (NaN refused).
    Number {
        /// The smallest accepted.
        min: f64,
        /// The largest accepted.
        max: f64,
    },
    /// A [`CpuBudget`]: `auto`, `none` (unlimited) or a percentage from 0 to 100.
    Budget,
}

/// An option's value, typed by its [`OptionKind`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptionValue {
    /// The index of a [`OptionKind::Choice`]'s word.
    Choice(usize),
    /// A duration, ns.
    Ns(u64),
    /// A whole number.
    Count(u64),
    /// A real number.
    Number(f64),
    /// A CPU budget.
    Budget(CpuBudget),
}

/// Why an option was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// No option has that name.
    #[error("unknown option `{name}` (known: {known})")]
    Unknown {
        /// The name as given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A value of the wrong kind or out of range.
    #[error("bad value `{value}` for {option}: expected {expected}")]
    BadValue {
        /// The option's name.
        option: &'static str,
        /// The value as given (its text, or the typed value written out).
        value: String,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// A stated prior above the cap.
    #[error(
        "prior {} is above the cap {}: the estimate before any data is at most the largest margin",
        format_ns(*.prior_ns),
        format_ns(*.cap_ns)
    )]
    PriorAboveCap {
        /// The prior, ns.
        prior_ns: u64,
        /// The cap, ns.
        cap_ns: u64,
    },
}

/// Where an option lives on the builder, typed by kind (private: the table's rows are
/// made by the constructors below, so kind and access always agree).
#[derive(Clone, Copy)]
enum Access {
    Choice(fn(&B) -> usize, fn(&mut B, usize)),
    Ns(fn(&B) -> u64, fn(&mut B, u64)),
    Count(fn(&B) -> u64, fn(&mut B, u64)),
    Number(fn(&B) -> f64, fn(&mut B, f64)),
    Budget(fn(&B) -> CpuBudget, fn(&mut B, CpuBudget)),
}

/// One option of the precise sleeper: a row of [`OPTIONS`].
#[derive(Clone, Copy)]
pub struct SleeperOption {
    /// The name on every surface: the Python keyword, the C setter
    /// `sleeplab_options_set_<name>` (`_ns` added for durations), a setting key.
    pub name: &'static str,
    /// The short key strategy settings print (`q` for `quantile`; settings accept the
    /// name too), or `None` for an option that is not a strategy setting: the timer
    /// slack, which a harness comparing strategies sets once for all of them.
    pub setting_key: Option<&'static str>,
    /// The kind of value and its range.
    pub kind: OptionKind,
    /// What the value counts, for docs (`ns`, `waits`, `%`; empty for words and ratios).
    pub unit: &'static str,
    /// What it does, in one line.
    pub doc: &'static str,
    /// The accepted values in words, for errors (`a quantile from 0.5 to 1`).
    pub expected: &'static str,
    access: Access,
}

impl std::fmt::Debug for SleeperOption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SleeperOption")
            .field("name", &self.name)
            .field("setting_key", &self.setting_key)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

const DURATION: &str = "a whole number of ns with a unit (ns, us, µs, ms, s), e.g. 250us";

pub(crate) const SPINS: [SpinStrategy; 2] = [SpinStrategy::Spin, SpinStrategy::YieldSpin];
const CONTENTIONS: [ContentionPolicy; 2] = [ContentionPolicy::Adapt, ContentionPolicy::Ignore];
const HOSTS: [HostPolicy; 2] = [HostPolicy::Adapt, HostPolicy::Ignore];
const SLICES: [SlicePolicy; 2] = [SlicePolicy::Short, SlicePolicy::Inherit];
const SLACKS: [SlackPolicy; 2] = [SlackPolicy::SetMinimal, SlackPolicy::LeaveAlone];

/// The index of `x` in `all` (the table's words are listed in the same order).
fn index_of<T: PartialEq>(all: &[T], x: &T) -> usize {
    all.iter().position(|a| a == x).unwrap_or(0)
}

/// Every option of the precise sleeper, in the order a strategy setting's canonical
/// name lists them (`precise:q=0.999,cap=2ms,window=1024,tol=50us,…`).
pub const OPTIONS: &[SleeperOption] = &[
    SleeperOption {
        name: "quantile",
        setting_key: Some("q"),
        kind: OptionKind::Number {
            min: EstimatorConfig::MIN_QUANTILE,
            max: EstimatorConfig::MAX_QUANTILE,
        },
        unit: "",
        doc: "the quantile of the native oversleep the margin covers",
        expected: "a quantile from 0.5 to 1",
        access: Access::Number(|b| b.estimator.quantile, |b, q| b.estimator.quantile = q),
    },
    SleeperOption {
        name: "cap",
        setting_key: Some("cap"),
        kind: OptionKind::Duration { min_ns: 1 },
        unit: "ns",
        doc: "the largest oversleep learned and the largest margin; longer native oversleeps count as stalls",
        expected: "a duration above 0 with a unit (ns, us, µs, ms, s), e.g. 50ms",
        access: Access::Ns(|b| b.estimator.cap_ns, |b, ns| b.estimator.cap_ns = ns),
    },
    SleeperOption {
        name: "window",
        setting_key: Some("window"),
        kind: OptionKind::Count {
            min: 1,
            max: EstimatorConfig::MAX_WINDOW as u64,
        },
        unit: "waits",
        doc: "recent waits in the estimator's quantile window",
        expected: "a whole number from 1 to 4096",
        access: Access::Count(
            |b| b.estimator.window as u64,
            // The range check keeps it within 4096.
            |b, n| b.estimator.window = n as usize,
        ),
    },
    SleeperOption {
        name: "lateness_tolerance",
        setting_key: Some("tol"),
        kind: OptionKind::Duration { min_ns: 0 },
        unit: "ns",
        doc: "lateness accepted at the quantile: the margin is that much shorter, and each wait spins up to that much less",
        expected: DURATION,
        access: Access::Ns(
            |b| b.tradeoff.lateness_tolerance_ns,
            |b, ns| b.tradeoff.lateness_tolerance_ns = ns,
        ),
    },
    SleeperOption {
        name: "cpu_budget",
        setting_key: Some("budget"),
        kind: OptionKind::Budget,
        unit: "%",
        doc: "how much of each wait may be spun: auto (5 % of the wait, at least 500 µs, lifted on coarse schedulers), none (up to the cap) or a percentage",
        expected: "auto, none, or a percentage from 0 to 100",
        access: Access::Budget(|b| b.tradeoff.cpu_budget, |b, c| b.tradeoff.cpu_budget = c),
    },
    SleeperOption {
        name: "early_tolerance",
        setting_key: Some("early"),
        kind: OptionKind::Duration { min_ns: 0 },
        unit: "ns",
        doc: "return up to this long before the deadline instead of spinning to it, never earlier",
        expected: DURATION,
        access: Access::Ns(
            |b| b.tradeoff.early_tolerance_ns,
            |b, ns| b.tradeoff.early_tolerance_ns = ns,
        ),
    },
    SleeperOption {
        name: "spin",
        setting_key: Some("spin"),
        kind: OptionKind::Choice(&["pause", "yield"]),
        unit: "",
        doc: "how the spin phase waits between clock reads: a pause instruction, or sched_yield",
        expected: "pause or yield",
        access: Access::Choice(|b| index_of(&SPINS, &b.spin), |b, i| b.spin = SPINS[i]),
    },
    SleeperOption {
        name: "contention",
        setting_key: Some("contention"),
        kind: OptionKind::Choice(&["adapt", "ignore"]),
        unit: "",
        doc: "adapt: shorten or stop the spin while it keeps being preempted or starved; ignore: keep the margin",
        expected: "adapt or ignore",
        access: Access::Choice(
            |b| index_of(&CONTENTIONS, &b.tradeoff.contention),
            |b, i| b.tradeoff.contention = CONTENTIONS[i],
        ),
    },
    SleeperOption {
        name: "host",
        setting_key: Some("host"),
        kind: OptionKind::Choice(&["adapt", "ignore"]),
        unit: "",
        doc: "adapt: a spin the host (or, on bare metal, the hardware) keeps interrupting is shortened or stopped like one the scheduler preempts, and comes back when the host is quiet; ignore: only the scheduler's preemptions count",
        expected: "adapt or ignore",
        access: Access::Choice(
            |b| index_of(&HOSTS, &b.tradeoff.host),
            |b, i| b.tradeoff.host = HOSTS[i],
        ),
    },
    SleeperOption {
        name: "sched_slice",
        setting_key: Some("slice"),
        kind: OptionKind::Choice(&["short", "inherit"]),
        unit: "",
        doc: "short: ask the scheduler for a 100 µs slice on the building thread, so a wakeup preempts a busy thread; inherit: leave it",
        expected: "short or inherit",
        access: Access::Choice(
            |b| index_of(&SLICES, &b.tradeoff.slice),
            |b, i| b.tradeoff.slice = SLICES[i],
        ),
    },
    SleeperOption {
        name: "prior",
        setting_key: Some("prior"),
        kind: OptionKind::Duration { min_ns: 0 },
        unit: "ns",
        doc: "the margin's estimate before any data, at most the cap (unstated: 200 µs or the cap, whichever is less)",
        expected: DURATION,
        access: Access::Ns(
            |b| b.estimator.prior_ns,
            |b, ns| {
                b.estimator.prior_ns = ns;
                b.prior_stated = true;
            },
        ),
    },
    SleeperOption {
        name: "half_life",
        setting_key: Some("half_life"),
        kind: OptionKind::Count {
            min: 1,
            max: u32::MAX as u64,
        },
        unit: "waits",
        doc: "waits for the margin's excess over the baseline to halve",
        expected: "a whole number from 1 to 4294967295",
        access: Access::Count(
            |b| u64::from(b.estimator.half_life),
            // The range check keeps it within u32.
            |b, n| b.estimator.half_life = n as u32,
        ),
    },
    SleeperOption {
        name: "headroom",
        setting_key: Some("headroom"),
        kind: OptionKind::Duration { min_ns: 0 },
        unit: "ns",
        doc: "added to the estimate to form the margin (the clock reads and wakeup path the oversleep does not see)",
        expected: DURATION,
        access: Access::Ns(
            |b| b.estimator.headroom_ns,
            |b, ns| b.estimator.headroom_ns = ns,
        ),
    },
    SleeperOption {
        name: "timer_slack",
        setting_key: None,
        kind: OptionKind::Choice(&["minimal", "leave"]),
        unit: "",
        doc: "minimal: set the building thread's timer slack to 1 ns; leave: do not touch it",
        expected: "minimal or leave",
        access: Access::Choice(|b| index_of(&SLACKS, &b.slack), |b, i| b.slack = SLACKS[i]),
    },
];

impl SleeperOption {
    /// The option called `name`.
    pub fn named(name: &str) -> Result<&'static SleeperOption, OptionError> {
        OPTIONS
            .iter()
            .find(|o| o.name == name)
            .ok_or_else(|| OptionError::Unknown {
                name: name.to_owned(),
                known: OPTIONS
                    .iter()
                    .map(|o| o.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// The strategy-setting option whose key or name is `key`.
    pub fn by_setting_key(key: &str) -> Option<&'static SleeperOption> {
        OPTIONS
            .iter()
            .find(|o| o.setting_key.is_some_and(|k| k == key || o.name == key))
    }

    /// The value on `builder`.
    pub fn get(&self, builder: &PreciseSleeperBuilder) -> OptionValue {
        match self.access {
            Access::Choice(get, _) => OptionValue::Choice(get(builder)),
            Access::Ns(get, _) => OptionValue::Ns(get(builder)),
            Access::Count(get, _) => OptionValue::Count(get(builder)),
            Access::Number(get, _) => OptionValue::Number(get(builder)),
            Access::Budget(get, _) => OptionValue::Budget(get(builder)),
        }
    }

    /// The default: the value on [`PreciseSleeperBuilder::default`].
    pub fn default_value(&self) -> OptionValue {
        self.get(&PreciseSleeperBuilder::default())
    }

    /// `value` if it is of this option's kind and in its range.
    pub fn check(&self, value: OptionValue) -> Result<OptionValue, OptionError> {
        let ok = match (self.kind, value) {
            (OptionKind::Choice(words), OptionValue::Choice(i)) => i < words.len(),
            (OptionKind::Duration { min_ns }, OptionValue::Ns(ns)) => ns >= min_ns,
            (OptionKind::Count { min, max }, OptionValue::Count(n)) => (min..=max).contains(&n),
            (OptionKind::Number { min, max }, OptionValue::Number(x)) => (min..=max).contains(&x),
            (OptionKind::Budget, OptionValue::Budget(CpuBudget::Percent(p))) => {
                (0.0..=100.0).contains(&p)
            }
            (OptionKind::Budget, OptionValue::Budget(_)) => true,
            _ => false,
        };
        if ok {
            Ok(value)
        } else {
            Err(self.bad(self.format(value)))
        }
    }

    /// Sets this option on `builder` if `value` passes [`check`](Self::check); otherwise
    /// leaves the builder as it was.
    pub fn set(
        &self,
        builder: &mut PreciseSleeperBuilder,
        value: OptionValue,
    ) -> Result<(), OptionError> {
        match (self.access, self.check(value)?) {
            (Access::Choice(_, put), OptionValue::Choice(i)) => put(builder, i),
            (Access::Ns(_, put), OptionValue::Ns(ns)) => put(builder, ns),
            (Access::Count(_, put), OptionValue::Count(n)) => put(builder, n),
            (Access::Number(_, put), OptionValue::Number(x)) => put(builder, x),
            (Access::Budget(_, put), OptionValue::Budget(b)) => put(builder, b),
            // `check` admitted only values of the row's kind, and the rows pair each
            // kind with its access.
            _ => return Err(self.bad(self.format(value))),
        }
        Ok(())
    }

    /// Reads a value's text form: a word of a choice, a duration in the grammar of
    /// [`crate::duration`], a whole number, a plain decimal (no sign or exponent), or a
    /// budget (`auto`, `none`, `3%` or `3`); then [`check`](Self::check)s it.
    pub fn parse(&self, text: &str) -> Result<OptionValue, OptionError> {
        let t = text.trim();
        let value = match self.kind {
            OptionKind::Choice(words) => {
                words.iter().position(|w| *w == t).map(OptionValue::Choice)
            }
            OptionKind::Duration { .. } => parse_ns(t).ok().map(OptionValue::Ns),
            OptionKind::Count { .. } => t.parse().ok().map(OptionValue::Count),
            OptionKind::Number { .. } => parse_decimal(t).map(OptionValue::Number),
            OptionKind::Budget => match t {
                "auto" => Some(OptionValue::Budget(CpuBudget::Auto)),
                "none" => Some(OptionValue::Budget(CpuBudget::Unlimited)),
                _ => parse_decimal(t.strip_suffix('%').unwrap_or(t))
                    .map(|p| OptionValue::Budget(CpuBudget::Percent(p))),
            },
        };
        let value = value.ok_or_else(|| self.bad(text.to_owned()))?;
        self.check(value).map_err(|_| self.bad(text.to_owned()))
    }

    /// A value's text form, which [`parse`](Self::parse) reads back (durations exactly:
    /// `250us`).
    pub fn format(&self, value: OptionValue) -> String {
        match (self.kind, value) {
            (OptionKind::Choice(words), OptionValue::Choice(i)) if i < words.len() => {
                words[i].to_owned()
            }
            (_, OptionValue::Choice(i)) => format!("#{i}"),
            (_, OptionValue::Ns(ns)) => format_ns(ns),
            (_, OptionValue::Count(n)) => n.to_string(),
            (_, OptionValue::Number(x)) => x.to_string(),
            (_, OptionValue::Budget(CpuBudget::Auto)) => "auto".into(),
            (_, OptionValue::Budget(CpuBudget::Unlimited)) => "none".into(),
            (_, OptionValue::Budget(CpuBudget::Percent(p))) => format!("{p}%"),
        }
    }

    fn bad(&self, value: String) -> OptionError {
        OptionError::BadValue {
            option: self.name,
            value,
            expected: self.expected,
        }
    }
}

/// A finite, non-negative decimal number written with digits and one point at most
/// (`0.999`, `3`, `.5`): no sign, exponent, `inf` or `NaN`.
pub(crate) fn parse_decimal(s: &str) -> Option<f64> {
    let ok = !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.');
    ok.then(|| s.parse::<f64>().ok())
        .flatten()
        .filter(|x| x.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_keys_are_unique_and_defaults_are_in_range() {
        for (i, a) in OPTIONS.iter().enumerate() {
            assert_eq!(
                a.check(a.default_value()),
                Ok(a.default_value()),
                "{}",
                a.name
            );
            for b in &OPTIONS[i + 1..] {
                assert_ne!(a.name, b.name);
                assert!(a.setting_key.is_none() || a.setting_key != b.setting_key);
            }
        }
        PreciseSleeperBuilder::default().validate().unwrap();
    }

    #[test]
    fn every_value_reads_back_and_reaches_the_builder() {
        let mut b = PreciseSleeperBuilder::default();
        for o in OPTIONS {
            let default = o.default_value();
            assert_eq!(o.parse(&o.format(default)), Ok(default), "{}", o.name);
            let other = match o.kind {
                OptionKind::Choice(_) => OptionValue::Choice(1),
                OptionKind::Duration { .. } => OptionValue::Ns(1_500),
                OptionKind::Count { max, .. } => OptionValue::Count(max),
                OptionKind::Number { min, .. } => OptionValue::Number(min),
                OptionKind::Budget => OptionValue::Budget(CpuBudget::Percent(2.5)),
            };
            o.set(&mut b, other).unwrap();
            assert_eq!(o.get(&b), other, "{}", o.name);
            assert_eq!(o.parse(&o.format(other)), Ok(other), "{}", o.name);
        }
        let s = b.strategy();
        assert_eq!(s.spin_strategy(), SpinStrategy::YieldSpin);
        assert_eq!(s.tradeoff().contention, ContentionPolicy::Ignore);
        assert_eq!(s.tradeoff().host, HostPolicy::Ignore);
        assert_eq!(s.tradeoff().slice, SlicePolicy::Inherit);
        assert_eq!(s.tradeoff().cpu_budget, CpuBudget::Percent(2.5));
        assert_eq!(b.slack, SlackPolicy::LeaveAlone);
        assert_eq!(s.estimator().config().quantile, 0.5);
    }

    #[test]
    fn refusals_leave_the_builder_as_it_was() {
        let mut b = PreciseSleeperBuilder::default();
        let before = b;
        let err = b.set("quantile", OptionValue::Number(1.5)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad value `1.5` for quantile: expected a quantile from 0.5 to 1"
        );
        assert!(b.set("quantile", OptionValue::Ns(1)).is_err(), "wrong kind");
        assert!(b.set("spin", OptionValue::Choice(2)).is_err());
        assert!(b.set_text("cpu_budget", "101%").is_err());
        assert!(b.set_text("lateness_tolerance", "0.5ns").is_err());
        assert!(b.set_text("cap", "0").is_err());
        assert!(matches!(
            b.set("colour", OptionValue::Count(1)),
            Err(OptionError::Unknown { .. })
        ));
        assert_eq!(b, before);
    }

    /// The prior follows the cap down unless stated; a stated prior above the cap is an
    /// error, whichever was set first.
    #[test]
    fn a_stated_prior_is_at_most_the_cap() {
        let mut b = PreciseSleeperBuilder::default();
        b.set_text("cap", "100us").unwrap();
        b.validate().unwrap();
        assert_eq!(b.strategy().estimator().config().prior_ns, 100_000);
        b.set_text("prior", "150us").unwrap();
        assert_eq!(
            b.validate().unwrap_err().to_string(),
            "prior 150us is above the cap 100us: the estimate before any data is at most the largest margin"
        );
        b.set_text("cap", "1ms").unwrap();
        b.validate().unwrap();
        assert_eq!(b.strategy().estimator().config().prior_ns, 150_000);
    }
}
