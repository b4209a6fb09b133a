//! What `tune` found: the setting that lowered a wait's p99 the most (and hurt none),
//! with what it cost the machine, or that no setting lowered any. The sentences are
//! `tune`'s own (`experiments::tune::sentence`), which advise prints too.

use super::Finding;
use crate::view::Results;
use sleeplab_results::tune::sentence::{best_sentence, none_sentence};

/// Finding `tune-best`: the setting that lowered a wait's p99 (the interval of the
/// change below zero) and raised none, with its machine-CPU change.
pub fn tune_best(r: &Results<'_>) -> Option<Finding> {
    let (_, d) = r.first::<sleeplab_results::tune::TuneData>()?;
    Some(Finding::new("tune-best", best_sentence(d)?))
}

/// Finding `tune-none`: where settings were judged and none lowered a p99 without
/// raising another, how the changes fell.
pub fn tune_none(r: &Results<'_>) -> Option<Finding> {
    let (_, d) = r.first::<sleeplab_results::tune::TuneData>()?;
    Some(Finding::new("tune-none", none_sentence(d)?))
}
