//! `ticker`: the library's own [`Ticker`] (a [`PreciseSleeper`] to each deadline of the
//! grid) with [`MissedTickBehavior::Skip`], so a late tick reports the grid instants it
//! passed (`Tick::missed`) and the next tick is the first one still ahead, as a kernel
//! interval timer does.
//!
//! `PreciseSleeper::new` sets the thread's timer slack to 1 ns, as a user of the library
//! gets it; the previous slack is put back on disarm. With
//! [`Options::keep_timer_slack`] the sleeper leaves the slack alone instead.

use super::{Armed, Options, Periodic, PeriodicMechanism, Wake};
use crate::clock::monotonic_ns;
use crate::precise::{MissedTickBehavior, PreciseSleeper, SlackPolicy, Ticker};
use crate::system::{set_timer_slack_ns, timer_slack_ns};
use crate::wait::{ThreadUsage, WaitError};

/// `ticker`.
struct TickerMechanism {
    keep_timer_slack: bool,
    /// The running ticker and the slack to restore.
    run: Option<(Ticker, u64)>,
}

impl Periodic for TickerMechanism {
    fn arm(&mut self, period_ns: u64, _ticks: u64) -> Result<Armed, WaitError> {
        let slack_before = timer_slack_ns();
        let sleeper = if self.keep_timer_slack {
            // The default options and either slack policy are in range.
            PreciseSleeper::builder()
                .slack_policy(SlackPolicy::LeaveAlone)
                .build_unchecked(crate::clock::RealEnv, true)
        } else {
            PreciseSleeper::new()
        };
        let slack = sleeper.timer_slack_ns();
        let t0 = monotonic_ns();
        let ticker = Ticker::with_sleeper_at_ns(sleeper, t0.saturating_add(period_ns), period_ns)
            .with_missed_tick_behavior(MissedTickBehavior::Skip);
        self.run = Some((ticker, slack_before));
        Ok(Armed {
            t0_ns: t0,
            timer_slack_ns: slack,
        })
    }

    fn wait(&mut self) -> Result<Wake, WaitError> {
        let (ticker, _) = self.run.as_mut().ok_or(WaitError::Ended)?;
        let tick = ticker.tick();
        Ok(Wake {
            wake_ns: monotonic_ns(),
            expirations: 1 + tick.missed,
        })
    }

    fn disarm(&mut self) -> ThreadUsage {
        if let Some((_, slack_before)) = self.run.take()
            && !self.keep_timer_slack
            && slack_before > 0
        {
            let _ = set_timer_slack_ns(slack_before);
        }
        ThreadUsage::default()
    }
}

pub(super) const TICKER: PeriodicMechanism = PeriodicMechanism::row(
    "ticker",
    "ticker",
    "sleeplab::precise::Ticker (Skip): PreciseSleeper to each deadline, slack 1 ns",
    true,
    |options: &Options| {
        Ok(Box::new(TickerMechanism {
            keep_timer_slack: options.keep_timer_slack,
            run: None,
        }))
    },
);
