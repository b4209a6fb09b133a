//! Why waits were late, from the kernel's account (`sleeplab explain`, or `--trace` on
//! another experiment): per mechanism, the typical wake's biggest components and what
//! held up the tail.

use super::{Finding, Results};
use crate::experiments::ResultData;
use crate::experiments::explain::ExplainData;
use crate::trace::Machine;

/// The `why-late` findings of the first explain result: its cells' sentences
/// ([`crate::trace::why::why_late`]).
pub fn why_late(r: &Results<'_>) -> Vec<Finding> {
    let Some((e, data)) = r.first::<ExplainData>() else {
        return Vec::new();
    };
    let Some(traced) = data.traced() else {
        return Vec::new();
    };
    // Named in the words of the result's own machine, wherever it is read back.
    crate::trace::why::why_late(&traced.cells, Machine::of(&e.result.fingerprint))
        .into_iter()
        .map(|s| Finding::new("why-late", s))
        .collect()
}
