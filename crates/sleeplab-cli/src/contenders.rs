//! Everything `sweep` can measure by name: the OS wait mechanisms of
//! [`sleeplab::wait`], and (as they land) the precise-sleep strategies.

use sleeplab::wait::{self, Support, Waiter};

/// Where a contender comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// An OS wait mechanism.
    Os,
    /// A precise-sleep strategy (sleep then spin).
    Strategy,
}

/// A contender's listing.
#[derive(Debug, Clone)]
pub struct Info {
    /// Name on the command line.
    pub name: &'static str,
    /// One line on what it does.
    pub description: &'static str,
    /// Family, for grouping (sleep, poll, timerfd, sync, busy, strategy).
    pub family: String,
    /// Where it comes from.
    pub origin: Origin,
    /// Smallest request it can express.
    pub min_ns: u64,
    /// False when it ignores the duration (measured at 0 only).
    pub takes_duration: bool,
    /// Whether this machine supports it.
    pub support: Support,
}

impl Info {
    /// Whether a request of `ns` is meaningful.
    pub fn accepts(&self, ns: u64) -> bool {
        ns >= self.min_ns && (self.takes_duration || ns == 0)
    }

    /// Why a request of `ns` is skipped, if it is.
    pub fn skip_reason(&self, ns: u64) -> Option<String> {
        if !self.takes_duration && ns != 0 {
            Some(format!(
                "{} ignores the duration; measured at 0 only",
                self.name
            ))
        } else if ns < self.min_ns {
            Some(format!(
                "{} cannot express {ns} ns (minimum {} ns)",
                self.name, self.min_ns
            ))
        } else {
            None
        }
    }
}

/// Something that waits for a requested number of nanoseconds.
pub trait Wait {
    /// Waits for `ns` nanoseconds.
    fn wait(&mut self, ns: u64);
}

impl Wait for Waiter {
    #[inline]
    fn wait(&mut self, ns: u64) {
        Waiter::wait(self, ns)
    }
}

/// Every contender, with its support on this machine.
pub fn all() -> Vec<Info> {
    wait::mechanisms()
        .iter()
        .map(|m| Info {
            name: m.name,
            description: m.description,
            family: m.family.to_string(),
            origin: Origin::Os,
            min_ns: m.min_ns,
            takes_duration: m.takes_duration,
            support: m.support(),
        })
        .collect()
}

/// Names of all contenders.
pub fn names() -> Vec<&'static str> {
    wait::mechanisms().iter().map(|m| m.name).collect()
}

/// Creates a contender's per-thread state.
pub fn build(name: &str) -> Result<Box<dyn Wait>, String> {
    Waiter::new(name)
        .map(|w| Box::new(w) as Box<dyn Wait>)
        .map_err(|e| e.to_string())
}
