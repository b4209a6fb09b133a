//! The flight recorder's choice: which late waits of a program keep their trace window
//! (those later than a threshold, the latest first, up to a count and a size), and the
//! events each window needs so that its wait's account, computed again from the kept
//! events alone, is the one computed live: checked here, window by window, before a
//! window is kept.

use crate::analysis::account::{WakeAccount, account};
use crate::analysis::timeline::Timeline;
use crate::capture::{Event, SavedTrace, SavedWindow};

use super::{Found, ProgramWait, find_waits};

/// How far before its wait began a kept window starts at first, ns; a window whose
/// account needs more is widened (doubling, up to [`KEEP_LOOKBACK_MAX_NS`]).
pub const KEEP_LOOKBACK_NS: u64 = 2_000_000;

/// The widest lookback tried, ns.
pub const KEEP_LOOKBACK_MAX_NS: u64 = 1_000_000_000;

/// What to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    /// A wait later than this past its deadline keeps its window, ns.
    pub over_ns: u64,
    /// At most this many windows.
    pub max_windows: usize,
    /// At most this many bytes of events.
    pub max_bytes: u64,
}

/// The windows kept, and their events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Kept {
    /// One per kept wait, ending at its return, in time order.
    pub windows: Vec<SavedWindow>,
    /// The events of every window (overlapping windows share theirs), in time order.
    pub events: Vec<Event>,
    /// Waits later than the threshold.
    pub over: usize,
    /// Of those, not kept: over the count or size bound (the least late ones), or left
    /// untried once as many waits as windows allowed could not be given back.
    pub dropped: usize,
    /// Of those, not kept because no lookback up to [`KEEP_LOOKBACK_MAX_NS`] gave the
    /// same account from the kept events alone.
    pub unequal: usize,
}

/// The kept windows of the waits of `found` (found on `tl`, each with its account in
/// `split` by index) that were later than `keep.over_ns`: the latest first until a bound
/// is reached, each window widened until its wait and that wait's account come out the
/// same from its events alone.
pub fn keep(tl: &Timeline, found: &Found, split: &[Option<WakeAccount>], keep: &Keep) -> Kept {
    let mut late: Vec<(u64, usize)> = found
        .waits
        .iter()
        .enumerate()
        .filter_map(|(i, w)| Some((w.lateness_ns()?, i)))
        .filter(|&(ns, _)| ns > keep.over_ns)
        .collect();
    // The latest first; equal lateness in the order they returned.
    late.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let chosen: Vec<usize> = late.into_iter().map(|(_, i)| i).collect();
    keep_chosen(tl, found, split, &chosen, keep)
}

/// The kept windows of the waits of `found` at the indices `chosen` (each once, the
/// first the most wanted), as [`keep`] keeps them: within `keep`'s count and size bounds
/// (`keep.over_ns` is not read: the caller chose), each window checked to give the same
/// account from its events alone. `over` counts the waits chosen.
pub fn keep_chosen(
    tl: &Timeline,
    found: &Found,
    split: &[Option<WakeAccount>],
    chosen: &[usize],
    keep: &Keep,
) -> Kept {
    let mut out = Kept {
        over: chosen.len(),
        ..Kept::default()
    };
    let mut bytes = 0u64;
    for &i in chosen {
        // Each try may rebuild a second of events ten times: after as many failed tries
        // as windows allowed, the rest are not tried.
        if out.windows.len() >= keep.max_windows || out.unequal >= keep.max_windows {
            out.dropped += 1;
            continue;
        }
        let Some(wait) = found.waits.get(i) else {
            out.dropped += 1;
            continue;
        };
        let Some(from_ns) = same_account(tl, wait, split.get(i).cloned().flatten()) else {
            out.unequal += 1;
            continue;
        };
        let added: u64 = tl
            .range(from_ns, wait.exit_ns)
            .iter()
            .map(|e| SavedTrace::event_len(e) as u64)
            .sum();
        if bytes + added > keep.max_bytes {
            out.dropped += 1;
            continue;
        }
        bytes += added;
        out.windows.push(SavedWindow {
            tid: wait.tid,
            from_ns,
            to_ns: wait.exit_ns,
        });
    }
    out.windows.sort_by_key(|w| (w.to_ns, w.tid));
    // Read back, the windows share one timeline: a window that another one's events
    // would change is not kept (none has been seen to; the check makes it so).
    loop {
        out.events = events_of(tl, out.windows.iter().map(|w| (w.from_ns, w.to_ns)));
        let together = Timeline::new(out.events.clone()).recorded_as(tl);
        let again = find_waits(&together, None);
        let before = out.windows.len();
        out.windows.retain(|k| {
            let live = found
                .waits
                .iter()
                .position(|w| w.tid == k.tid && w.exit_ns == k.to_ns);
            let read = again
                .waits
                .iter()
                .find(|w| w.tid == k.tid && w.exit_ns == k.to_ns);
            match (live, read) {
                (Some(i), Some(read)) => {
                    *read == found.waits[i]
                        && read.window().map(|w| account(&together, &w))
                            == split.get(i).cloned().flatten()
                }
                _ => false,
            }
        });
        out.unequal += before - out.windows.len();
        if out.windows.len() == before {
            return out;
        }
    }
}

/// The waits of `found` that kept windows were kept for: the one of each window's
/// thread that returned at its end.
pub fn kept_waits(found: &Found, windows: &[SavedWindow]) -> Found {
    Found {
        waits: found
            .waits
            .iter()
            .filter(|w| {
                windows
                    .iter()
                    .any(|k| k.tid == w.tid && k.to_ns == w.exit_ns)
            })
            .cloned()
            .collect(),
        untimed: found.untimed,
        unpaired: found.unpaired,
    }
}

/// Where `wait`'s window must start for its wait and account (`live`) to come out the
/// same from the window's events alone; `None` when no lookback up to the widest does.
fn same_account(tl: &Timeline, wait: &ProgramWait, live: Option<WakeAccount>) -> Option<u64> {
    let mut lookback = KEEP_LOOKBACK_NS;
    loop {
        let from_ns = wait.enter_ns.saturating_sub(lookback);
        let alone = Timeline::new(tl.range(from_ns, wait.exit_ns).to_vec()).recorded_as(tl);
        let again = find_waits(&alone, None)
            .waits
            .into_iter()
            .find(|w| w.tid == wait.tid && w.exit_ns == wait.exit_ns);
        if let Some(again) = again
            && again == *wait
            && again.window().map(|w| account(&alone, &w)) == live
        {
            return Some(from_ns);
        }
        if lookback >= KEEP_LOOKBACK_MAX_NS || from_ns == 0 {
            return None;
        }
        lookback *= 2;
    }
}

/// The events of `tl` inside any of `spans` (inclusive), each once, in time order.
fn events_of(tl: &Timeline, spans: impl Iterator<Item = (u64, u64)>) -> Vec<Event> {
    let mut spans: Vec<(u64, u64)> = spans.collect();
    spans.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (from, to) in spans {
        match merged.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => merged.push((from, to)),
        }
    }
    merged
        .into_iter()
        .flat_map(|(from, to)| tl.range(from, to).iter().copied())
        .collect()
}
