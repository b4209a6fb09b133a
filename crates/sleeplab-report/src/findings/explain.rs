//! Why waits were late, from the kernel's account (`sleeplab explain`, or `--trace` on
//! another experiment): per mechanism, the typical wake's biggest components and what
//! held up the tail.

use super::{Finding, Results};
use sleeplab_account::Machine;

/// The `why-late` findings of the first traced result with a traced cell (an `explain`
/// result where there is one, else the first run with `--trace` that traced a cell: one
/// that recorded nothing would hide the next one's account): its cells' sentences
/// ([`sleeplab_account::why_late`]), read through `ResultData::traced` as every reader
/// of traced cells reads them.
pub fn why_late(r: &Results<'_>) -> Vec<Finding> {
    let traced: Vec<_> = r
        .entries
        .iter()
        .filter_map(|e| Some((e, e.result.data.as_data().traced()?)))
        .filter(|(_, t)| !t.cells.is_empty())
        .collect();
    let Some((e, t)) = traced
        .iter()
        .find(|(_, t)| !t.on_request)
        .or_else(|| traced.first())
    else {
        return Vec::new();
    };
    // Named in the words of the result's own machine, wherever it is read back.
    sleeplab_account::why_late(&t.cells, Machine::of(&e.result.fingerprint))
        .into_iter()
        .map(|s| Finding::new("why-late", s))
        .collect()
}
