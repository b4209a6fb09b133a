//! The result model, kept in the crate `sleeplab-results` (one versioned JSON document
//! per run, read back by `report` and `compare`; `docs/RESULTS.md` explains it): its
//! names as the CLI's modules use them.

pub use sleeplab_results::RunSettings;
pub use sleeplab_results::model::*;
