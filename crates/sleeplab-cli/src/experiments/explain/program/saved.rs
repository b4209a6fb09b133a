//! A program's run as a saved trace, and the account read back from one
//! (`explain --save FILE`, `--keep-over DUR`, `explain --from FILE`).
//!
//! The file is the capture crate's format ([`SavedTrace`]: the events, the wake windows
//! kept) with the run's description as its JSON (`SavedRun`: the program, how the run
//! ended, the device interrupts' names, the machine's fingerprint, what was kept).
//! Documented in docs/RESULTS.md ("A saved trace").

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use sleeplab::system::Fingerprint;
use sleeplab_account::{Found, Keep, Kept, SavedTrace, SavedWindow, Timeline};
use sleeplab_capture::Captured;
use sleeplab_stats::atomic_write;

use super::output::Run;
use crate::error::UsageError;

/// The description's `format`.
pub const FORMAT: &str = "sleeplab saved trace";
/// The description's version.
pub const VERSION: u32 = 1;

/// The bytes of events a saved trace of kept windows holds at most.
pub const KEEP_MAX_BYTES: u64 = 256 << 20;

/// The run's description, saved beside its events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedRun {
    /// [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The run as the outputs tell it.
    pub run: Run,
    /// The device interrupts' names by number, from `/proc/interrupts` at the end.
    pub irq_names: BTreeMap<i32, String>,
    /// The machine (its virtualization words the host's share, as a result's does).
    pub fingerprint: Fingerprint,
    /// What was kept, for a trace of late waits' windows (`None`: the whole run).
    pub kept: Option<KeptRun>,
}

/// What a flight recorder's trace kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptRun {
    /// A wait later than this past its deadline kept its window, ns.
    pub over_ns: u64,
    /// At most this many windows.
    pub max_windows: usize,
    /// At most about this many bytes of events.
    pub max_bytes: u64,
    /// Waits the run found with a timeout (all of them, kept or not).
    pub waits: usize,
    /// Waits later than the threshold.
    pub over: usize,
    /// Of those, not kept: over a bound, or left untried after as many failed tries as
    /// windows allowed.
    pub dropped: usize,
    /// Of those, not kept: their account needed more than the widest lookback.
    pub unequal: usize,
    /// Wait calls with no timeout over the whole run.
    pub untimed: u64,
    /// Wait calls whose entry or return was not recorded, over the whole run.
    pub unpaired: u64,
    /// For a trace the monitor's flight recorder kept: the cell whose wakes, later than
    /// `over_ns` by the monitor's own clock, chose the waits (`over` counts those waits;
    /// their own lateness past the timer's deadline may be less).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor_cell: Option<String>,
}

/// What is saved: the whole run, or the kept windows.
pub enum Saving<'a> {
    /// Every event of the run.
    Whole(&'a Timeline),
    /// The kept windows of the late waits, and what the run found.
    Kept {
        /// The timeline they were kept from.
        timeline: &'a Timeline,
        /// The windows and their events.
        kept: &'a Kept,
        /// What was asked for.
        keep: Keep,
        /// What the run found (its counts are the whole run's).
        found: &'a Found,
        /// The monitor cell whose late wakes chose the waits (`None`: their own
        /// lateness did).
        monitor_cell: Option<&'a str>,
    },
}

/// Writes the saved trace to `path` (whole or not at all); returns how many events
/// and windows it holds.
pub fn write(
    path: &Path,
    run: &Run,
    irq_names: &BTreeMap<i32, String>,
    machine: &Fingerprint,
    saving: Saving<'_>,
) -> anyhow::Result<(usize, usize)> {
    let (captured, windows, kept) = match saving {
        Saving::Whole(tl) => (tl.captured(run.lost_events), Vec::new(), None),
        Saving::Kept {
            timeline,
            kept,
            keep,
            found,
            monitor_cell,
        } => (
            Captured {
                events: kept.events.clone(),
                recorded: timeline.recorded(),
                lost: run.lost_events,
                interrupts: timeline.interrupts_recorded(),
                stacks: Vec::new(),
                unpaired_stacks: 0,
                late_threads: 0,
            },
            kept.windows.clone(),
            Some(KeptRun {
                over_ns: keep.over_ns,
                max_windows: keep.max_windows,
                max_bytes: keep.max_bytes,
                waits: found.waits.len(),
                over: kept.over,
                dropped: kept.dropped,
                unequal: kept.unequal,
                untimed: found.untimed,
                unpaired: found.unpaired,
                monitor_cell: monitor_cell.map(str::to_string),
            }),
        ),
    };
    let meta = SavedRun {
        format: FORMAT.into(),
        version: VERSION,
        run: run.clone(),
        irq_names: irq_names.clone(),
        fingerprint: machine.clone(),
        kept,
    };
    let counts = (captured.events.len(), windows.len());
    let trace = SavedTrace {
        meta: serde_json::to_string(&meta).context("encoding the run's description")?,
        windows,
        captured,
    };
    atomic_write(path, &trace.encode()).with_context(|| format!("writing {}", path.display()))?;
    Ok(counts)
}

/// Reads the saved trace at `path`: its description and its events and windows. A file
/// that cannot be read, or is not a saved trace this build reads: a usage error naming
/// the file.
pub fn read(path: &Path) -> Result<(SavedRun, Captured, Vec<SavedWindow>), UsageError> {
    let name = path.display();
    let bytes = std::fs::read(path).map_err(|e| UsageError::new(format!("{name}: {e}")))?;
    let trace = SavedTrace::decode(&bytes).map_err(|e| UsageError::new(format!("{name}: {e}")))?;
    let meta: SavedRun = serde_json::from_str(&trace.meta)
        .map_err(|e| UsageError::new(format!("{name}: corrupt: the run's description: {e}")))?;
    if meta.format != FORMAT || meta.version != VERSION {
        return Err(UsageError::new(format!(
            "{name}: a description of format {:?} version {}; this build reads {FORMAT:?} version {VERSION}",
            meta.format, meta.version
        )));
    }
    Ok((meta, trace.captured, trace.windows))
}
