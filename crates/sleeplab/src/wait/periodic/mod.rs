//! Periodic timers: every way Linux wakes a thread on an absolute grid `t0 + k·P`, as a
//! registry of named rows.
//!
//! A [`PeriodicMechanism`] row names and describes one and carries its constructor; a
//! [`PeriodicTimer`] is its state. The life of a timer:
//!
//! 1. [`arm`](PeriodicTimer::arm) with a period: `t0` is the clock read right before
//!    arming, deadline `k` is due at `t0 + k·P` (k ≥ 1);
//! 2. [`wait`](PeriodicTimer::wait) for each expiry: an [`Expiry`] with the programmed
//!    deadline, the wake time and the deadlines it stands for (more than one after an
//!    overrun). A wait never returns before its deadline (for mechanisms with
//!    [`exact_counts`](PeriodicMechanism::exact_counts)), and a signal that interrupts
//!    it does not end it: it resumes toward the same deadline;
//! 3. [`disarm`](PeriodicTimer::disarm), which returns the CPU time and context switches
//!    spent outside the calling thread (callback threads, a child process).
//!
//! Arm, wait and disarm on one thread (a POSIX timer signals the thread that armed it).
//! A stop flag is checked between waits; a wait ends at the next expiry, so a stop takes
//! at most a period.
//!
//! ```
//! use sleeplab::wait::periodic::{Options, PeriodicTimer};
//! use std::sync::atomic::{AtomicBool, Ordering};
//!
//! let stop = AtomicBool::new(false);
//! let mut timer = PeriodicTimer::new("clock-nanosleep-abs", &Options::default()).unwrap();
//! timer.arm(1_000_000, 20).unwrap(); // 1 ms, about 20 ticks
//! let mut late = Vec::new();
//! for _ in 0..20 {
//!     let e = timer.wait().unwrap();
//!     assert!(e.wake_ns >= e.deadline_ns); // never early
//!     late.push((e.deadline_ns, e.wake_ns, e.overruns()));
//!     if stop.load(Ordering::Relaxed) {
//!         break;
//!     }
//! }
//! let helpers = timer.disarm();
//! assert_eq!(helpers.cpu_ns, 0); // a sleep loop has no helper
//! ```
//!
//! # Adding a mechanism
//! Write a type implementing [`Periodic`] and its `const` row in a family file, and list
//! the row in [`MECHANISMS`] below (table order). Nothing else names it. (A mechanism
//! from another crate, like the CLI's `spin_sleep` interval, makes its own row with
//! [`PeriodicMechanism::row`].)

mod grid;
mod itimer;
mod loops;
mod posix_signal;
mod posix_thread;
mod precise_ticker;
mod timerfd;
mod tokio_interval;

pub use grid::{Expiry, Grid, Wake, passed_deadlines, reconcile};

use super::{Support, ThreadUsage, WaitError, assert_unique_names};
use std::fmt;

/// Most deadlines a mechanism that records expiries outside the calling thread
/// (`posix-timer-thread`, `setitimer`) buffers per arming: 64 MiB of wakes.
pub const MAX_BUFFERED_TICKS: u64 = 1 << 22;

/// How a mechanism is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// Leave the thread's timer slack as it is (the user set it). Otherwise the `ticker`
    /// sets 1 ns, as `PreciseSleeper::new` does, and puts the old slack back on disarm.
    pub keep_timer_slack: bool,
}

/// What arming a timer set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Armed {
    /// The grid's origin: the clock read right before arming, ns. Deadline `k` is due
    /// at `t0 + k·P`.
    pub t0_ns: u64,
    /// The timer slack in force while waiting, when the mechanism changed it.
    pub timer_slack_ns: Option<u64>,
}

impl Armed {
    /// Armed at `t0_ns`, the timer slack left alone.
    pub fn at(t0_ns: u64) -> Self {
        Self {
            t0_ns,
            timer_slack_ns: None,
        }
    }
}

/// The state of a periodic mechanism. Implementations follow the contract of
/// [`PeriodicTimer`], which is what callers use; the methods are only called between
/// `arm` and `disarm`, in order, on one thread.
pub trait Periodic: Send {
    /// Arms the timer with period `period_ns` (> 0) for about `ticks` deadlines (only
    /// mechanisms that buffer expiries use the count); returns the grid's origin.
    fn arm(&mut self, period_ns: u64, ticks: u64) -> Result<Armed, WaitError>;

    /// Blocks until the next expiry; the clock read after waking and the deadlines it
    /// stands for. Resumes after `EINTR`.
    fn wait(&mut self) -> Result<Wake, WaitError>;

    /// Appends the next wake or wakes to `out`. By default one [`wait`](Self::wait).
    /// Mechanisms whose expiries are seen outside the calling thread override it to keep
    /// the calling thread asleep: they return a batch at least every 50 ms (possibly
    /// empty), end the run at its last deadline, and then fail with
    /// [`WaitError::Ended`] (or [`WaitError::Interrupted`]).
    fn wait_batch(&mut self, out: &mut Vec<Wake>) -> Result<(), WaitError> {
        out.push(self.wait()?);
        Ok(())
    }

    /// Stops the timer; returns the usage outside the calling thread since `arm`.
    fn disarm(&mut self) -> ThreadUsage;
}

/// Creates a mechanism's state, or says why this machine cannot.
pub type NewPeriodic = fn(&Options) -> Result<Box<dyn Periodic>, WaitError>;

/// A named periodic mechanism: a row of the registry, carrying its constructor.
#[derive(Clone, Copy)]
pub struct PeriodicMechanism {
    /// The name on the command line, e.g. `timerfd-interval`.
    pub name: &'static str,
    /// Its family (the file it lives in), e.g. `posix-timer`.
    pub family: &'static str,
    /// What it does, in one line.
    pub description: &'static str,
    /// Whether timer slack delays its wake-ups.
    pub slack_applies: bool,
    /// Periods must be whole multiples of this, ns (1000 for `setitimer`'s timeval).
    pub period_unit_ns: u64,
    /// False when the deadlines a wake stands for are estimates (see [`reconcile`]).
    pub exact_counts: bool,
    /// Usage so far of a helper thread every timer of this mechanism shares (glibc's
    /// SIGEV_THREAD thread), to read before and after a run.
    pub shared_helper_usage: Option<fn() -> Option<ThreadUsage>>,
    /// The row this one is a variant of (`tokio-interval-delay` of
    /// `tokio-interval-burst`), which a short survey measures in its place; `None` for a
    /// row of its own.
    pub variant_of: Option<&'static str>,
    /// Creates its state.
    pub new: NewPeriodic,
}

impl PeriodicMechanism {
    /// Whether its wait for a tick can block (put the thread to sleep): all but the
    /// busy wait.
    pub fn blocks(&self) -> bool {
        self.family != "busy"
    }

    /// A row with exact counts, any period, and no shared helper; the others set the
    /// fields by struct update.
    pub const fn row(
        name: &'static str,
        family: &'static str,
        description: &'static str,
        slack_applies: bool,
        new: NewPeriodic,
    ) -> Self {
        Self {
            name,
            family,
            description,
            slack_applies,
            period_unit_ns: 1,
            exact_counts: true,
            shared_helper_usage: None,
            variant_of: None,
            new,
        }
    }

    /// This row, a variant of the row named `of`.
    pub(crate) const fn variant_of(self, of: &'static str) -> Self {
        Self {
            variant_of: Some(of),
            ..self
        }
    }

    /// Creates a timer of this mechanism.
    pub fn build(&'static self, options: &Options) -> Result<PeriodicTimer, WaitError> {
        Ok(PeriodicTimer {
            mechanism: self,
            inner: (self.new)(options)?,
            grid: None,
        })
    }

    /// Whether this machine supports it (by building it once).
    pub fn support(&'static self) -> Support {
        Support::of(self.build(&Options::default()))
    }

    /// Why it cannot run at `period_ns`, if it cannot.
    pub fn skip_reason(&self, period_ns: u64) -> Option<String> {
        let unit = self.period_unit_ns.max(1);
        (period_ns % unit != 0).then(|| match unit {
            1_000 => format!("{} takes whole microseconds", self.name),
            1_000_000 => format!("{} takes whole milliseconds", self.name),
            _ => format!("{} takes whole multiples of {unit} ns", self.name),
        })
    }
}

impl PartialEq for PeriodicMechanism {
    /// Rows are equal when their names are (names are unique in a registry).
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for PeriodicMechanism {}

impl fmt::Debug for PeriodicMechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeriodicMechanism")
            .field("name", &self.name)
            .field("family", &self.family)
            .field("period_unit_ns", &self.period_unit_ns)
            .field("exact_counts", &self.exact_counts)
            .field("variant_of", &self.variant_of)
            .finish_non_exhaustive()
    }
}

/// The registry, in table order.
pub const MECHANISMS: &[PeriodicMechanism] = &[
    timerfd::INTERVAL,
    timerfd::EPOLL,
    posix_signal::POSIX_SIGNAL,
    posix_thread::POSIX_THREAD,
    itimer::SETITIMER,
    loops::CLOCK_NANOSLEEP_ABS,
    loops::NANOSLEEP,
    loops::BUSY_WAIT,
    precise_ticker::TICKER,
    tokio_interval::BURST,
    tokio_interval::DELAY,
    tokio_interval::BURST_MT,
];

assert_unique_names!(MECHANISMS);

/// Every periodic mechanism of this crate, in table order.
pub fn mechanisms() -> &'static [PeriodicMechanism] {
    MECHANISMS
}

/// Looks a periodic mechanism up by name.
pub fn find(name: &str) -> Option<&'static PeriodicMechanism> {
    MECHANISMS.iter().find(|m| m.name == name)
}

/// A periodic timer: arm, wait for each expiry, disarm (also on drop).
pub struct PeriodicTimer {
    mechanism: &'static PeriodicMechanism,
    inner: Box<dyn Periodic>,
    grid: Option<Grid>,
}

impl fmt::Debug for PeriodicTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeriodicTimer")
            .field("mechanism", &self.mechanism.name)
            .field("grid", &self.grid)
            .finish()
    }
}

impl PeriodicTimer {
    /// A timer of the mechanism `name`.
    pub fn new(name: &str, options: &Options) -> Result<Self, WaitError> {
        find(name)
            .ok_or_else(|| WaitError::Unknown(name.to_string()))?
            .build(options)
    }

    /// The mechanism.
    pub fn mechanism(&self) -> &'static PeriodicMechanism {
        self.mechanism
    }

    /// Arms the timer with period `period_ns` for about `ticks` deadlines (mechanisms
    /// that buffer expiries size their buffer for them, at most [`MAX_BUFFERED_TICKS`],
    /// and may end after them). Re-arming restarts the grid.
    pub fn arm(&mut self, period_ns: u64, ticks: u64) -> Result<Armed, WaitError> {
        if period_ns == 0 {
            return Err(WaitError::Unavailable("a period of 0 never expires".into()));
        }
        if let Some(reason) = self.mechanism.skip_reason(period_ns) {
            return Err(WaitError::Unavailable(reason));
        }
        self.disarm();
        let armed = self.inner.arm(period_ns, ticks)?;
        self.grid = Some(Grid::new(armed.t0_ns, period_ns));
        Ok(armed)
    }

    /// Waits for the next expiry (see the module documentation).
    pub fn wait(&mut self) -> Result<Expiry, WaitError> {
        let grid = self.grid.as_mut().ok_or(WaitError::Ended)?;
        let wake = self.inner.wait()?;
        Ok(grid.advance(wake))
    }

    /// Appends the next wake or wakes to `out`, keeping the calling thread asleep while
    /// the expiries are seen elsewhere (see [`Periodic::wait_batch`]).
    pub fn wait_batch(&mut self, out: &mut Vec<Wake>) -> Result<(), WaitError> {
        let grid = self.grid.as_mut().ok_or(WaitError::Ended)?;
        let from = out.len();
        self.inner.wait_batch(out)?;
        for w in &out[from..] {
            grid.advance(*w);
        }
        Ok(())
    }

    /// The grid of the armed timer (with the deadlines covered so far).
    pub fn grid(&self) -> Option<&Grid> {
        self.grid.as_ref()
    }

    /// Stops the timer (nothing happens when it is not armed); returns the CPU time and
    /// context switches spent outside the calling thread on its behalf since `arm`.
    pub fn disarm(&mut self) -> ThreadUsage {
        match self.grid.take() {
            Some(_) => self.inner.disarm(),
            None => ThreadUsage::default(),
        }
    }
}

impl Drop for PeriodicTimer {
    fn drop(&mut self) {
        self.disarm();
    }
}

/// The buffer a mechanism that records expiries elsewhere needs for `ticks` deadlines.
fn buffered(name: &str, ticks: u64) -> Result<usize, WaitError> {
    if ticks > MAX_BUFFERED_TICKS {
        return Err(WaitError::Unavailable(format!(
            "{name} records at most {MAX_BUFFERED_TICKS} ticks per arming"
        )));
    }
    Ok(ticks as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A variant names a row of its own, of its family.
    #[test]
    fn variants_name_rows_of_their_own() {
        let rows: Vec<_> = mechanisms()
            .iter()
            .map(|m| (m.name, m.variant_of, m.family))
            .collect();
        crate::wait::assert_variants_name_rows(&rows);
    }

    #[test]
    fn rows_are_findable_and_say_what_they_cannot_do() {
        for m in mechanisms() {
            assert_eq!(find(m.name), Some(m));
            assert!(m.skip_reason(2_000_000).is_none(), "{}", m.name);
        }
        assert!(find("timerfd").is_none());
        let set = find("setitimer").unwrap();
        assert_eq!(
            set.skip_reason(1_500).as_deref(),
            Some("setitimer takes whole microseconds")
        );
        assert!(matches!(
            PeriodicTimer::new("nope", &Options::default()),
            Err(WaitError::Unknown(_))
        ));
    }

    #[test]
    fn an_unarmed_timer_does_not_wait() {
        let mut t = PeriodicTimer::new("timerfd-interval", &Options::default()).unwrap();
        assert!(matches!(t.wait(), Err(WaitError::Ended)));
        assert!(matches!(
            t.wait_batch(&mut Vec::new()),
            Err(WaitError::Ended)
        ));
        assert_eq!(t.disarm(), ThreadUsage::default());
        assert!(matches!(t.arm(0, 1), Err(WaitError::Unavailable(_))));
        assert!(buffered("x", MAX_BUFFERED_TICKS + 1).is_err());
    }
}
