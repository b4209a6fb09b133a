//! Which traced result the answer reads the kernel's account from (`sleeplab explain`,
//! or `--trace` on another experiment); each traced cell's sentence is its section's.

use super::Results;
use sleeplab_account::{Machine, TracedCells};

/// The traced result the findings and the answer read: the first `explain` result with a
/// traced cell, else the first run with `--trace` that traced one (one that recorded
/// nothing would hide the next one's account), with its traced cells read through
/// `ResultData::traced` as every reader of traced cells reads them, and the words of
/// its own machine.
pub(crate) fn first_traced<'a>(r: &Results<'a>) -> Option<(TracedCells<'a>, Machine)> {
    let traced: Vec<_> = r
        .entries
        .iter()
        .filter_map(|e| Some((e, e.result.data.as_data().traced()?)))
        .filter(|(_, t)| !t.cells.is_empty())
        .collect();
    let i = traced.iter().position(|(_, t)| !t.on_request).unwrap_or(0);
    let (e, t) = traced.into_iter().nth(i)?;
    Some((t, Machine::of(&e.result.fingerprint)))
}
