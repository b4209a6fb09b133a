//! `sleeplab monitor`: a long-running Prometheus exporter of wake-up latency.
//!
//! One measuring thread per cell ([`cells`]) runs a short burst of waits every
//! interval ([`measure`]) into bounded records ([`record`]); `/metrics` encodes them
//! with `prometheus-client` ([`metrics`]) at most every [`metrics::REFRESH`], served
//! from that shared encoding by one `hyper` thread ([`server`]). With `--keep-over`, a
//! flight recorder ([`keep`]) saves the kernel's trace of each late wake on a thread of
//! its own. The stop flag (Ctrl-C, SIGTERM) ends both sides within about 250 ms plus
//! one wait.

pub(crate) mod cells;
pub(crate) mod keep;
pub(crate) mod measure;
pub(crate) mod metrics;
pub(crate) mod record;
pub(crate) mod server;

use crate::experiments::Stop;
use crate::settings::ThreadSettings;
use anyhow::Context as _;
use cells::Cell;
use keep::{KeepConfig, Keeper};
use measure::Pacing;
use metrics::Metrics;
use record::CellRecord;
use sleeplab::system::Fingerprint;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What the monitor runs: its cells, their pacing and the measuring threads' settings.
#[derive(Debug, Clone)]
pub struct MonitorConfig {
    /// What it measures.
    pub cells: Vec<Cell>,
    /// How often and how much.
    pub pacing: Pacing,
    /// Applied in every measuring thread.
    pub threads: ThreadSettings,
    /// The flight recorder (`None`: off).
    pub keep: Option<KeepConfig>,
}

/// How often the main thread checks the stop flag and the measuring threads (the one
/// wake the monitor spends on watching; a stop then unparks the measuring threads).
const WATCH: std::time::Duration = std::time::Duration::from_millis(250);

/// Serves the metrics of `config` on `listener` until `stop`; then stops the measuring
/// threads and the HTTP thread and returns. A measuring thread that fails ends the
/// monitor with its error.
pub fn serve(
    config: &MonitorConfig,
    listener: std::net::TcpListener,
    stop: &Stop,
) -> anyhow::Result<()> {
    let records: Vec<Arc<Mutex<CellRecord>>> =
        config.cells.iter().map(|_| Arc::default()).collect();
    let keeper = match &config.keep {
        Some(k) => Some(Keeper::start(
            k.clone(),
            config.cells.iter().map(|c| c.name.clone()).collect(),
        )?),
        None => None,
    };
    let keep_logs = keeper.as_ref().map(|k| k.logs.clone());
    let metrics = Arc::new(Metrics::new(
        &config.cells,
        &records,
        keep_logs.as_deref(),
        &Fingerprint::collect(),
    ));
    let senders = (0..config.cells.len())
        .map(|i| {
            let over = config.keep.as_ref()?.over_ns;
            keeper.as_ref()?.sender(i, over)
        })
        .collect();
    // One flag for both sides: the caller's stop, or a measuring thread that ended.
    let ended = Arc::new(AtomicBool::new(false));
    let both = {
        let (stop, ended) = (stop.clone(), Arc::clone(&ended));
        Stop::when(move || ended.load(Ordering::Relaxed) || stop.requested())
    };
    let serving = server::spawn(listener, metrics).context("cannot start the HTTP thread")?;
    let measuring = measure::spawn(
        &config.cells,
        &records,
        config.pacing,
        config.threads,
        senders,
        &both,
    );
    // A measuring thread ends only when stopped or failed: either way, all stop.
    while let Ok(threads) = &measuring {
        if both.requested() || threads.iter().any(|h| h.is_finished()) {
            break;
        }
        std::thread::sleep(WATCH);
    }
    ended.store(true, Ordering::Relaxed);
    if let Ok(threads) = &measuring {
        measure::wake(threads);
    }
    let mut first_error = measuring.as_ref().err().map(|e| anyhow::anyhow!("{e:#}"));
    for handle in measuring.into_iter().flatten() {
        let result = handle
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("a measuring thread panicked")));
        if let Err(e) = result {
            first_error.get_or_insert(e);
        }
    }
    // The measuring threads are gone: the keeper writes what it holds, then ends.
    if let Some(k) = keeper {
        k.stop();
    }
    if let Err(e) = serving.stop() {
        first_error.get_or_insert(anyhow::anyhow!(e).context("the HTTP thread failed"));
    }
    first_error.map_or(Ok(()), Err)
}
