//! Why waits were late, from the kernel's account (`sleeplab explain`, or `--trace` on
//! another experiment): per mechanism, the typical wake's biggest components and what
//! held up the tail.

use super::{Finding, Results};
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

/// The `why-late` findings of the [`first_traced`] result: its cells' sentences
/// ([`sleeplab_account::why_late`]), named in the words of the result's own machine,
/// wherever it is read back.
pub fn why_late(r: &Results<'_>) -> Vec<Finding> {
    let Some((t, machine)) = first_traced(r) else {
        return Vec::new();
    };
    sleeplab_account::why_late(&t.cells, machine)
        .into_iter()
        .map(|s| Finding::new("why-late", s))
        .collect()
}
