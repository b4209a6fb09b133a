//! The builder's options by name, through the option table ([`OPTIONS`]): set one from
//! its value or its text, read one, check them all together, and build a sleeper once
//! they pass.

use super::builder::PreciseSleeperBuilder;
use super::options::{OPTIONS, OptionError, OptionValue, SleeperOption};
use super::sleeper::PreciseSleeper;
use crate::clock::{Env, RealEnv};

impl PreciseSleeperBuilder {
    /// Sets the option called `name` (see [`OPTIONS`]) if `value` is of
    /// its kind and in its range; otherwise leaves everything as it was.
    pub fn set(&mut self, name: &str, value: OptionValue) -> Result<(), OptionError> {
        SleeperOption::named(name)?.set(self, value)
    }

    /// Sets the option called `name` from its text form (`"50us"`, `"0.999"`, `"3%"`,
    /// `"yield"`; see [`SleeperOption::parse`]).
    pub fn set_text(&mut self, name: &str, text: &str) -> Result<(), OptionError> {
        let option = SleeperOption::named(name)?;
        let value = option.parse(text)?;
        option.set(self, value)
    }

    /// The value of the option called `name`.
    pub fn get(&self, name: &str) -> Result<OptionValue, OptionError> {
        Ok(SleeperOption::named(name)?.get(self))
    }

    /// Whether every option is in its documented range, the typed methods' values
    /// included, and the options agree with each other: a stated prior is at most the
    /// cap (an unstated one follows the cap down: 200 µs or the cap, whichever is less).
    pub fn validate(&self) -> Result<(), OptionError> {
        for option in OPTIONS {
            option.check(option.get(self))?;
        }
        if self.prior_stated && self.estimator.prior_ns > self.estimator.cap_ns {
            return Err(OptionError::PriorAboveCap {
                prior_ns: self.estimator.prior_ns,
                cap_ns: self.estimator.cap_ns,
            });
        }
        Ok(())
    }

    /// A sleeper on the real clock, once every option is in its range
    /// ([`validate`](Self::validate)). Applies the slack and slice policies to the calling
    /// thread, and to each other thread the sleeper later sleeps on (a sleeper follows the
    /// thread that uses it: see [`PreciseSleeper`]). With
    /// [`SlackPolicy::LeaveAlone`](super::SlackPolicy::LeaveAlone) it still reports the
    /// slack in force.
    ///
    /// # Errors
    /// The first option out of its range, or a stated prior above the cap: the
    /// [`OptionError`] that [`set`](Self::set) and the C and Python bindings give for it.
    pub fn build(self) -> Result<PreciseSleeper<RealEnv>, OptionError> {
        self.validate()?;
        Ok(self.build_unchecked(RealEnv, true))
    }

    /// A sleeper over any environment, once every option is in its range; applies the
    /// slack and slice policies to the calling thread, and to each other thread it later
    /// sleeps on.
    ///
    /// # Errors
    /// As [`build`](Self::build).
    pub fn build_with_env<E: Env>(self, env: E) -> Result<PreciseSleeper<E>, OptionError> {
        self.validate()?;
        Ok(self.build_unchecked(env, false))
    }
}
