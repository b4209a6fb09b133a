//! The monitor's Prometheus metrics, encoded by `prometheus-client` in the OpenMetrics
//! text format: the cells' latency histograms and counters (a [`Collector`] that copies
//! the shared records, a few hundred bytes each, at encoding time), the build and host
//! info, and the monitor's own cost (the standard `process_*` metrics and a scrape
//! counter).
//!
//! With the flight recorder on, each latency bucket with a kept wake carries an
//! OpenMetrics exemplar naming the saved trace of its latest one
//! (`…_bucket{…} 3 # {trace="precise-1764…sltrace"} 0.0021 1764….123`). The exemplars
//! are written onto the encoded bucket lines ([`add_exemplars`]): `prometheus-client`
//! makes an exemplar only inside its own histogram types, which keep their own counts,
//! while the monitor counts into buckets of its own.
//!
//! A scrape is served from one shared encoding, re-encoded at most every [`REFRESH`]:
//! a hundred concurrent scrapers cost one encoding, not a hundred, and the measuring
//! threads' locks are taken once per refresh, not once per scrape.

use super::cells::Cell;
use super::keep::KeepLog;
use super::record::CellRecord;
use bytes::Bytes;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};
use sleeplab::system::Fingerprint;
use sleeplab_account::Component;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The content type of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The longest one encoding is served before a scrape encodes a fresh one: far below
/// any scrape interval and the cells' one burst a second, so no scrape sees data staler
/// than a burst would make it anyway.
pub const REFRESH: Duration = Duration::from_millis(100);

/// Every metric the monitor serves.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    scrapes: Counter,
    /// Each cell's family labels as encoded, and its flight recorder's log.
    kept: Vec<(String, Arc<Mutex<KeepLog>>)>,
    /// The last encoding and when it was made (taken by scrapes only, never by a
    /// measuring thread).
    cache: Mutex<Option<(Instant, Bytes)>>,
}

impl Metrics {
    /// The metrics of `cells` (reading `records` at each scrape, and the flight
    /// recorder's `kept` logs where it runs) and of this machine.
    pub fn new(
        cells: &[Cell],
        records: &[Arc<Mutex<CellRecord>>],
        kept: Option<&[Arc<Mutex<KeepLog>>]>,
        host: &Fingerprint,
    ) -> Self {
        let mut registry = Registry::default();
        registry.register(
            "sleeplab_build",
            "The sleeplab version that measures",
            Info::new(vec![("version", env!("CARGO_PKG_VERSION").to_string())]),
        );
        registry.register(
            "sleeplab_host",
            "What decides wake-up latency on this host (kernel, clocksource, timer slack, virtualization, CPU)",
            Info::new(host_labels(host)),
        );
        let scrapes = Counter::default();
        registry.register(
            "sleeplab_monitor_scrapes",
            "Scrapes of /metrics answered",
            scrapes.clone(),
        );
        registry.register_collector(Box::new(Cells(
            cells
                .iter()
                .zip(records)
                .map(|(c, r)| (labels(c), Arc::clone(r)))
                .collect(),
        )));
        let kept: Vec<(String, Arc<Mutex<KeepLog>>)> = kept
            .map(|logs| {
                cells
                    .iter()
                    .zip(logs)
                    .map(|(c, l)| (family_key(c), Arc::clone(l)))
                    .collect()
            })
            .unwrap_or_default();
        if !kept.is_empty() {
            registry.register_collector(Box::new(Kept(
                cells
                    .iter()
                    .zip(&kept)
                    .map(|(c, (_, l))| (labels(c), Arc::clone(l)))
                    .collect(),
            )));
        }
        registry.register_collector(Box::new(SelfCost));
        Self {
            registry,
            scrapes,
            kept,
            cache: Mutex::default(),
        }
    }

    /// The exposition for one scrape (counted): the shared encoding while it is younger
    /// than [`REFRESH`], else a fresh one (made by this scrape while the others that
    /// arrive meanwhile wait for it).
    pub fn scrape(&self) -> Result<Bytes, std::fmt::Error> {
        self.scrape_at(Instant::now())
    }

    /// [`scrape`](Self::scrape) at `now` (injected in tests).
    fn scrape_at(&self, now: Instant) -> Result<Bytes, std::fmt::Error> {
        self.scrapes.inc();
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, text)) = cache.as_ref()
            && now.saturating_duration_since(*at) < REFRESH
        {
            return Ok(text.clone());
        }
        let text = Bytes::from(self.encode()?.into_bytes());
        *cache = Some((now, text.clone()));
        Ok(text)
    }

    /// A fresh exposition text (not counted as a scrape).
    pub fn encode(&self) -> Result<String, std::fmt::Error> {
        let mut text = String::with_capacity(16 * 1024);
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        if self.kept.is_empty() {
            return Ok(text);
        }
        let marks: Vec<(String, KeepLog)> = self
            .kept
            .iter()
            .map(|(k, l)| {
                (
                    k.clone(),
                    l.lock().unwrap_or_else(PoisonError::into_inner).clone(),
                )
            })
            .collect();
        Ok(add_exemplars(&text, &marks))
    }
}

/// The name of the latency histogram's bucket series.
const LATENCY_BUCKET: &str = "sleeplab_wake_latency_seconds_bucket";

/// A cell's family labels as the encoder writes them (after `le`).
fn family_key(cell: &Cell) -> String {
    labels(cell)
        .iter()
        .map(|(k, v)| format!("{k}=\"{v}\""))
        .collect::<Vec<_>>()
        .join(",")
}

/// `text` with each latency bucket line of a cell in `marks` (by its family labels)
/// carrying the exemplar of that bucket, where the cell's log has one: the bucket lines
/// of a family come in bucket order, `+Inf` last.
pub fn add_exemplars(text: &str, marks: &[(String, KeepLog)]) -> String {
    let mut out = String::with_capacity(text.len() + 128 * marks.len());
    let mut seen: Vec<usize> = vec![0; marks.len()];
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let family = body
            .strip_prefix(LATENCY_BUCKET)
            .and_then(|rest| rest.strip_prefix("{le=\""))
            .and_then(|rest| rest.split_once("\","))
            .and_then(|(_, rest)| rest.split_once("} "))
            .map(|(labels, _)| labels);
        let cell = family.and_then(|f| marks.iter().position(|(k, _)| k == f));
        let Some(i) = cell else {
            out.push_str(line);
            continue;
        };
        let bucket = seen[i];
        seen[i] += 1;
        out.push_str(body);
        if let Some(Some(e)) = marks[i].1.exemplars.get(bucket) {
            let at =
                e.at.duration_since(std::time::SystemTime::UNIX_EPOCH)
                    .unwrap_or_default();
            out.push_str(&format!(
                " # {{trace=\"{}\"}} {} {}.{:03}",
                e.trace,
                e.lateness_ns as f64 / 1e9,
                at.as_secs(),
                at.subsec_millis()
            ));
        }
        out.push('\n');
    }
    out
}

/// A counter of the flight recorder: its name, help and value.
type KeptCounter = (&'static str, &'static str, fn(&KeepLog) -> u64);

/// The flight recorder's counters of every cell.
#[derive(Debug)]
struct Kept(Vec<(Labels, Arc<Mutex<KeepLog>>)>);

impl Collector for Kept {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let snapshot: Vec<(&Labels, KeepLog)> = self
            .0
            .iter()
            .map(|(l, r)| (l, r.lock().unwrap_or_else(PoisonError::into_inner).clone()))
            .collect();
        let counters: [KeptCounter; 3] = [
            (
                "sleeplab_kept_traces",
                "Saved traces the flight recorder wrote (--keep-over), each named by the exemplar of its wakes' latency buckets",
                |l| l.traces,
            ),
            (
                "sleeplab_kept_wakes",
                "Wakes later than the flight recorder's threshold whose wait's trace window was saved",
                |l| l.kept,
            ),
            (
                "sleeplab_unkept_wakes",
                "Wakes later than the flight recorder's threshold not saved: no blocking wait returned for them (a spin), their account needed more than the widest lookback, the file bound was reached, the recorder was busy, or the file could not be written",
                |l| l.unkept,
            ),
        ];
        for (name, help, value) in counters {
            let mut m = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
            for (l, r) in &snapshot {
                ConstCounter::new(value(r)).encode(m.encode_family(*l)?)?;
            }
        }
        Ok(())
    }
}

/// The labels of the host info metric.
fn host_labels(host: &Fingerprint) -> Vec<(String, String)> {
    let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    vec![
        ("kernel".into(), host.kernel_release.clone()),
        ("clocksource".into(), or_unknown(&host.clocksource)),
        (
            "timer_slack_seconds".into(),
            super::cells::seconds_label(host.timer_slack_ns),
        ),
        ("virtualization".into(), or_unknown(&host.virtualization)),
        ("preemption".into(), or_unknown(&host.preemption)),
        ("cpu_model".into(), host.cpu_model.clone()),
        ("cpus".into(), host.cpu_count.to_string()),
    ]
}

type Labels = Vec<(&'static str, String)>;

/// A counter of every cell: its name, help and value.
type Counted = (&'static str, &'static str, fn(&CellRecord) -> u64);

fn labels(cell: &Cell) -> Labels {
    vec![
        ("mechanism", cell.name.clone()),
        ("requested", cell.requested_label()),
    ]
}

/// The cells' metrics, read from the shared records at each scrape.
#[derive(Debug)]
struct Cells(Vec<(Labels, Arc<Mutex<CellRecord>>)>);

impl Collector for Cells {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        // Copy each record out (the lock is held for a copy, not for the encoding).
        let snapshot: Vec<(&Labels, CellRecord)> = self
            .0
            .iter()
            .map(|(l, r)| (l, *r.lock().unwrap_or_else(PoisonError::into_inner)))
            .collect();
        let secs = |ns: u64| ns as f64 / 1e9;

        let mut m = encoder.encode_descriptor(
            "sleeplab_wake_latency",
            "How late each wake came: wake - deadline, for a periodic timer and the precise sleeper per scheduled tick (a tick a late wake swallowed counts with its own lateness); one-shot waits: elapsed - requested; early wakes count as 0",
            Some(&Unit::Seconds),
            MetricType::Histogram,
        )?;
        for (l, r) in &snapshot {
            m.encode_family(*l)?.encode_histogram::<NoLabelSet>(
                secs(r.latency.sum_ns),
                r.count(),
                &r.buckets(),
                None,
            )?;
        }
        let counters: [Counted; 3] = [
            (
                "sleeplab_early_wakes",
                "Wakes before their deadline (a correct mechanism has none)",
                |r| r.early,
            ),
            (
                "sleeplab_missed_ticks",
                "Periodic deadlines that passed without a wake of their own",
                |r| r.missed,
            ),
            (
                "sleeplab_stalls",
                "Waits, or scheduled ticks of a periodic timer or the precise sleeper, at least the stall threshold (--stall) late",
                |r| r.stalls,
            ),
        ];
        for (name, help, value) in counters {
            let mut m = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
            for (l, r) in &snapshot {
                ConstCounter::new(value(r)).encode(m.encode_family(*l)?)?;
            }
        }
        let mut m = encoder.encode_descriptor(
            "sleeplab_measuring_cpu",
            "CPU time of each cell's measuring thread",
            Some(&Unit::Seconds),
            MetricType::Counter,
        )?;
        for (l, r) in &snapshot {
            ConstCounter::new(secs(r.cpu_ns)).encode(m.encode_family(*l)?)?;
        }
        let traced: Vec<_> = snapshot
            .iter()
            .filter(|(_, r)| r.traced + r.untraced > 0)
            .collect();
        if !traced.is_empty() {
            let help = format!(
                "Each wake's lateness split by the kernel's tracepoints (--trace): its time in \
                 one component ({}); per wake, the components add up to its lateness",
                Component::ALL.map(Component::name).join(", ")
            );
            let mut m = encoder.encode_descriptor(
                "sleeplab_wake_component",
                &help,
                Some(&Unit::Seconds),
                MetricType::Histogram,
            )?;
            for (l, r) in &traced {
                for c in Component::ALL {
                    let b = &r.components[c.index()];
                    let mut labels = (*l).clone();
                    labels.push(("component", c.name().to_string()));
                    m.encode_family(&labels)?.encode_histogram::<NoLabelSet>(
                        secs(b.sum_ns),
                        b.count(),
                        &b.buckets(),
                        None,
                    )?;
                }
            }
            let mut m = encoder.encode_descriptor(
                "sleeplab_untraced_wakes",
                "Wakes whose split missed an event of their way (that part counts as unexplained)",
                None,
                MetricType::Counter,
            )?;
            for (l, r) in &traced {
                ConstCounter::new(r.untraced).encode(m.encode_family(*l)?)?;
            }
        }
        let precise: Vec<_> = snapshot
            .iter()
            .filter(|(_, r)| r.margin_ns.is_some())
            .collect();
        if !precise.is_empty() {
            let mut m = encoder.encode_descriptor(
                "sleeplab_precise_margin",
                "The precise sleeper's learned margin: how long before a deadline it stops sleeping and spins",
                Some(&Unit::Seconds),
                MetricType::Gauge,
            )?;
            for (l, r) in &precise {
                ConstGauge::new(secs(r.margin_ns.unwrap_or(0))).encode(m.encode_family(*l)?)?;
            }
            let mut m = encoder.encode_descriptor(
                "sleeplab_precise_spin",
                "Time the precise sleeper spent spinning (its CPU cost beyond sleeping)",
                Some(&Unit::Seconds),
                MetricType::Counter,
            )?;
            for (l, r) in &precise {
                ConstCounter::new(secs(r.spin_ns)).encode(m.encode_family(*l)?)?;
            }
        }
        Ok(())
    }
}

/// The monitor's own cost, as every Prometheus exporter names it.
#[derive(Debug)]
struct SelfCost;

impl Collector for SelfCost {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let cpu = sleeplab::clock::process_cpu_ns() as f64 / 1e9;
        let m = encoder.encode_descriptor(
            "process_cpu",
            "CPU time of the monitor (all threads)",
            Some(&Unit::Seconds),
            MetricType::Counter,
        )?;
        ConstCounter::new(cpu).encode(m)?;
        if let Some(rss) = resident_bytes() {
            let m = encoder.encode_descriptor(
                "process_resident_memory",
                "Resident memory of the monitor",
                Some(&Unit::Bytes),
                MetricType::Gauge,
            )?;
            ConstGauge::new(rss as i64).encode(m)?;
        }
        if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
            let m = encoder.encode_descriptor(
                "process_open_fds",
                "Open file descriptors of the monitor",
                None,
                MetricType::Gauge,
            )?;
            ConstGauge::new(fds.count() as i64).encode(m)?;
        }
        Ok(())
    }
}

/// Resident memory from /proc/self/statm (pages × page size).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::cells::parse_cells;

    #[test]
    fn the_exposition_has_cumulative_buckets_sum_count_and_info() {
        let cells = parse_cells(&["nanosleep@100us".into(), "precise@1ms".into()], &[]).unwrap();
        let records: Vec<Arc<Mutex<CellRecord>>> = cells.iter().map(|_| Arc::default()).collect();
        for v in [500, 1_500, 70_000, 3_000_000] {
            records[0].lock().unwrap().record(v, 1_000_000);
        }
        records[1].lock().unwrap().margin_ns = Some(50_000);
        let host = Fingerprint {
            kernel_release: "6.1.0-test".into(),
            ..Fingerprint::default()
        };
        let metrics = Metrics::new(&cells, &records, None, &host);
        let text = String::from_utf8(metrics.scrape().unwrap().to_vec()).unwrap();
        let line = |prefix: &str| -> f64 {
            text.lines()
                .find(|l| l.starts_with(prefix))
                .unwrap_or_else(|| panic!("no {prefix} in\n{text}"))
                .rsplit(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        let nano = "{mechanism=\"nanosleep\",requested=\"0.0001\"";
        assert_eq!(
            line(&format!("sleeplab_wake_latency_seconds_count{nano}")),
            4.0
        );
        assert_eq!(
            line(&format!("sleeplab_wake_latency_seconds_sum{nano}")),
            3.072e-3
        );
        let buckets: Vec<f64> = text
            .lines()
            .filter(|l| {
                l.starts_with("sleeplab_wake_latency_seconds_bucket{le=")
                    && l.contains(&format!(",{}}}", &nano[1..]))
            })
            .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(buckets.len(), crate::monitor::record::BUCKETS_S.len() + 1);
        assert!(
            buckets.windows(2).all(|w| w[0] <= w[1]),
            "cumulative: {buckets:?}"
        );
        assert_eq!(*buckets.last().unwrap(), 4.0, "+Inf holds every wake");
        assert_eq!(line(&format!("sleeplab_stalls_total{nano}")), 1.0);
        assert_eq!(
            line("sleeplab_precise_margin_seconds{mechanism=\"precise\",requested=\"0.001\"}"),
            5e-5
        );
        assert!(text.contains("sleeplab_host_info{kernel=\"6.1.0-test\""));
        assert!(text.contains("sleeplab_build_info{version=\""));
        assert!(line("process_cpu_seconds_total") > 0.0);
        assert_eq!(line("sleeplab_monitor_scrapes_total"), 1.0);
        assert!(text.ends_with("# EOF\n"));
    }

    /// An exemplar goes on its own cell's bucket line, the one its index names, and
    /// nowhere else; every other line is unchanged.
    #[test]
    fn exemplars_go_on_their_cells_bucket_lines() {
        use crate::monitor::keep::{Exemplar, KeepLog};
        use crate::monitor::record::Buckets;
        let cells = parse_cells(&["nanosleep@100us".into(), "timerfd@100us".into()], &[]).unwrap();
        let records: Vec<Arc<Mutex<CellRecord>>> = cells.iter().map(|_| Arc::default()).collect();
        let logs: Vec<Arc<Mutex<KeepLog>>> = cells.iter().map(|_| Arc::default()).collect();
        for r in &records {
            r.lock().unwrap().record(70_000, u64::MAX);
        }
        let at = std::time::SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_250);
        {
            let mut l = logs[1].lock().unwrap();
            l.traces = 1;
            l.kept = 1;
            l.exemplars[Buckets::index_of(70_000)] = Some(Exemplar {
                trace: "timerfd-1.sltrace".into(),
                lateness_ns: 70_000,
                at,
            });
        }
        let plain = Metrics::new(&cells, &records, None, &Fingerprint::default())
            .encode()
            .unwrap();
        let text = Metrics::new(&cells, &records, Some(&logs), &Fingerprint::default())
            .encode()
            .unwrap();
        let marked: Vec<&str> = text.lines().filter(|l| l.contains(" # {")).collect();
        assert_eq!(
            marked,
            [
                "sleeplab_wake_latency_seconds_bucket{le=\"0.0001\",mechanism=\"timerfd\",requested=\"0.0001\"} 1 # {trace=\"timerfd-1.sltrace\"} 0.00007 1700000000.250"
            ]
        );
        // Without the exemplar and the recorder's counters, the same exposition
        // (but the monitor's own CPU and memory, which move between the two encodings).
        let stripped: Vec<&str> = text
            .lines()
            .map(|l| l.split_once(" # {").map_or(l, |(s, _)| s))
            .filter(|l| !l.contains("kept") && !l.starts_with("process_"))
            .collect();
        let plain: Vec<&str> = plain
            .lines()
            .filter(|l| !l.starts_with("process_"))
            .collect();
        assert_eq!(stripped, plain);
        assert!(text.contains(
            "sleeplab_kept_traces_total{mechanism=\"timerfd\",requested=\"0.0001\"} 1\n"
        ));
    }

    #[test]
    fn scrapes_share_one_encoding_until_it_is_older_than_refresh() {
        let cells = parse_cells(&["nanosleep@100us".into()], &[]).unwrap();
        let records: Vec<Arc<Mutex<CellRecord>>> = cells.iter().map(|_| Arc::default()).collect();
        let metrics = Metrics::new(&cells, &records, None, &Fingerprint::default());
        let count = |text: &[u8]| -> f64 {
            let text = std::str::from_utf8(text).unwrap();
            text.lines()
                .find(|l| l.starts_with("sleeplab_wake_latency_seconds_count{"))
                .and_then(|l| l.rsplit(' ').next())
                .unwrap()
                .parse()
                .unwrap()
        };
        let t0 = Instant::now();
        let first = metrics.scrape_at(t0).unwrap();
        records[0].lock().unwrap().record(5_000, u64::MAX);
        // Within REFRESH: the same bytes (the new wake is not in them yet).
        let second = metrics.scrape_at(t0 + REFRESH / 2).unwrap();
        assert_eq!(first.as_ptr(), second.as_ptr());
        assert_eq!(count(&second), 0.0);
        // At REFRESH: a fresh encoding with the wake, and every scrape counted.
        let third = metrics.scrape_at(t0 + REFRESH).unwrap();
        assert_ne!(first.as_ptr(), third.as_ptr());
        assert_eq!(count(&third), 1.0);
        let text = std::str::from_utf8(&third).unwrap();
        assert!(
            text.contains("sleeplab_monitor_scrapes_total 3\n"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"));
    }
}
