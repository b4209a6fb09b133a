//! `sleeplab monitor` through the real binary on the loopback: the exposition parses,
//! its histograms are cumulative and add up, nothing wakes early, `/healthz` answers,
//! HEAD gets the head alone and other methods 405,
//! 100 concurrent scrapes are answered while the measurements go on, SIGTERM and
//! Ctrl-C stop it with exit 0, and a busy port is exit 2 naming it.

mod common;

use common::monitor::{Monitor, histogram, request, value};
use std::time::{Duration, Instant};

const LATENCY: &str = "sleeplab_wake_latency_seconds";

/// Fast pacing so a test sees several bursts in a second.
const FAST: &[&str] = &["--interval", "50ms", "--burst", "3"];

/// Scrapes until every default cell has at least `n` wakes; the last exposition.
fn until_counted(m: &Monitor, n: f64) -> String {
    let t0 = Instant::now();
    loop {
        let (status, text) = m.get("/metrics");
        assert_eq!(status, 200);
        let h = histogram(&text, LATENCY);
        if h.len() == 4 && h.values().all(|s| s.count >= n) {
            return text;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "cells never reached {n}:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn serves_metrics_that_add_up_and_stops_on_sigterm() {
    let mut m = Monitor::start(FAST);
    assert_eq!(m.get("/healthz"), (200, "ok\n".to_string()));
    assert_eq!(m.get("/nope").0, 404);
    assert_eq!(request(m.addr, "POST", "/metrics").0, 405);
    // HEAD: the GET answer's head (its length, the OpenMetrics type), no body.
    let (status, head, body) = request(m.addr, "HEAD", "/metrics");
    assert_eq!((status, body.as_str()), (200, ""), "{head}");
    let head = head.to_ascii_lowercase();
    assert!(
        head.contains("content-type: application/openmetrics-text"),
        "{head}"
    );
    assert!(!head.contains("content-length: 0\r"), "{head}");
    let text = until_counted(&m, 6.0);
    let h = histogram(&text, LATENCY);
    let names: Vec<&str> = h.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "mechanism=\"nanosleep\",requested=\"0.0001\"",
            "mechanism=\"precise\",requested=\"0.016666667\"",
            "mechanism=\"tick:clock-nanosleep-abs\",requested=\"0.001\"",
            "mechanism=\"timerfd\",requested=\"0.0001\"",
        ]
    );
    for key in h.keys() {
        assert_eq!(
            value(&text, "sleeplab_early_wakes_total", key),
            Some(0.0),
            "{key} woke early"
        );
        assert!(value(&text, "sleeplab_measuring_cpu_seconds_total", key).unwrap() > 0.0);
    }
    assert!(text.contains("sleeplab_build_info{version=\""));
    assert!(text.contains("sleeplab_host_info{kernel=\""));
    assert!(value(&text, "process_open_fds", "").unwrap() > 0.0);
    assert!(value(&text, "process_resident_memory_bytes", "").unwrap() > 0.0);
    let (status, took) = m.stop(libc::SIGTERM, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "SIGTERM is a clean stop ({took:?})");
    // It says what it does: it stops; it has nothing to save.
    let said = m.rest_of_stderr();
    assert!(said.contains("stopping (nothing to save)"), "{said:?}");
    assert!(!said.contains("saving"), "{said:?}");
}

#[test]
fn ctrl_c_stops_it_with_exit_0() {
    let mut m = Monitor::start(FAST);
    until_counted(&m, 1.0);
    let (status, took) = m.stop(libc::SIGINT, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "Ctrl-C is a clean stop ({took:?})");
}

#[test]
fn a_hundred_concurrent_scrapes_are_answered_while_measuring() {
    let mut m = Monitor::start(FAST);
    let before = until_counted(&m, 1.0);
    let addr = m.addr;
    let scrapers: Vec<_> = (0..100)
        .map(|_| std::thread::spawn(move || common::monitor::get(addr, "/metrics")))
        .collect();
    for s in scrapers {
        let (status, text) = s.join().unwrap();
        assert_eq!(status, 200);
        histogram(&text, LATENCY);
    }
    let after = until_counted(&m, 1.0);
    let total = |t: &str| -> f64 { histogram(t, LATENCY).values().map(|s| s.count).sum() };
    // The measurements went on: more wakes after than before (fresh bursts every 50 ms).
    let t0 = Instant::now();
    let mut later = after;
    while total(&later) <= total(&before) {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no wake after the scrapes"
        );
        std::thread::sleep(Duration::from_millis(50));
        later = m.get("/metrics").1;
    }
    assert!(value(&later, "sleeplab_monitor_scrapes_total", "").unwrap() >= 102.0);
    assert_eq!(
        m.stop(libc::SIGTERM, Duration::from_secs(10)).0.code(),
        Some(0)
    );
}

#[test]
fn a_busy_port_is_exit_2_naming_it() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_sleeplab"))
        .args(["monitor", "--listen", &addr])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let wrong = common::exit2::exit_2_problems(&o, &addr);
    assert!(
        wrong.is_empty(),
        "{wrong:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// With `--trace` (as root): each one-shot wake is split into components whose sums add
/// up to the latency's, one observation per wake in every component.
#[test]
fn traced_wakes_are_split_into_components_that_add_up() {
    if !common::tracing::traceable() {
        return;
    }
    let mut m = Monitor::start(&[
        "--interval",
        "50ms",
        "--burst",
        "5",
        "--trace",
        "--mechanisms",
        "nanosleep@100us,tick:timerfd-interval@1ms",
    ]);
    let t0 = Instant::now();
    let text = loop {
        let (_, text) = m.get("/metrics");
        let h = histogram(&text, LATENCY);
        if h.values().all(|s| s.count >= 20.0) && h.len() == 2 {
            break text;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "never counted:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let latency = histogram(&text, LATENCY);
    let parts = histogram(&text, "sleeplab_wake_component_seconds");
    let cell = "mechanism=\"nanosleep\",requested=\"0.0001\"";
    let of_cell: Vec<_> = parts.iter().filter(|(k, _)| k.starts_with(cell)).collect();
    assert_eq!(
        of_cell.len(),
        sleeplab_account::Component::COUNT,
        "{parts:?}"
    );
    let total: f64 = of_cell.iter().map(|(_, s)| s.sum).sum();
    let want = latency[cell].sum;
    assert!(
        (total - want).abs() <= 1e-9 * latency[cell].count + 1e-12,
        "{total} vs {want}"
    );
    for (k, s) in &of_cell {
        assert_eq!(s.count, latency[cell].count, "{k}");
    }
    // The periodic cell is split per wake: as many observations per component as wakes.
    let tick = "mechanism=\"tick:timerfd-interval\",requested=\"0.001\"";
    assert!(parts.keys().any(|k| k.starts_with(tick)));
    assert!(value(&text, "sleeplab_untraced_wakes_total", cell).is_some());
    m.stop(libc::SIGTERM, Duration::from_secs(10));
}

/// The flight recorder (as root): each wake later than the threshold is counted kept or
/// unkept; no more saved traces than the bound, each one on disk and counted; every
/// exemplar names one of them and lies in its bucket; and a saved trace reads back
/// (`explain --from`) to the waits of the cell's thread.
#[test]
fn the_flight_recorder_keeps_slow_wakes_and_names_them_on_their_buckets() {
    if !common::tracing::traceable() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("kept");
    let cell = "mechanism=\"nanosleep\",requested=\"0.0001\"";
    let mut m = common::monitor::keeping_every_wake("50ms", 3, &kept);
    let t0 = Instant::now();
    let text = loop {
        let (_, text) = m.get("/metrics");
        let unkept = value(&text, "sleeplab_unkept_wakes_total", cell).unwrap_or(0.0);
        if value(&text, "sleeplab_kept_traces_total", cell) == Some(3.0) && unkept >= 10.0 {
            break text;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "never kept three:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let files: Vec<String> = std::fs::read_dir(&kept)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files.len(), 3, "the bound: {files:?}");
    let latency = histogram(&text, LATENCY);
    let over = latency[cell].count
        - latency[cell]
            .buckets
            .iter()
            .find(|b| b.0 == 1e-6)
            .map_or(0.0, |b| b.1);
    let (k, u) = (
        value(&text, "sleeplab_kept_wakes_total", cell).unwrap(),
        value(&text, "sleeplab_unkept_wakes_total", cell).unwrap(),
    );
    assert!(k >= 1.0, "{text}");
    // The keeper runs behind the measuring thread by at most its queue's bursts.
    assert!(
        k + u <= over && k + u >= over - 5.0 * 6.0,
        "{k} + {u} vs {over}"
    );
    let marks = common::monitor::exemplars(&text, LATENCY);
    assert!(!marks.is_empty(), "{text}");
    let bounds: Vec<f64> = latency[cell].buckets.iter().map(|b| b.0).collect();
    for (labels, ex, v, at) in &marks {
        let name = ex
            .strip_prefix("trace=\"")
            .and_then(|n| n.strip_suffix('"'))
            .unwrap_or_else(|| panic!("{ex}"));
        assert!(files.iter().any(|f| f == name), "{name} not in {files:?}");
        let le: f64 = labels
            .strip_prefix("le=\"")
            .and_then(|l| l.split('"').next())
            .map(|l| {
                if l == "+Inf" {
                    f64::INFINITY
                } else {
                    l.parse().unwrap()
                }
            })
            .unwrap();
        let i = bounds.iter().position(|&b| b == le).unwrap();
        let below = if i == 0 { 0.0 } else { bounds[i - 1] };
        assert!(*v > below && *v <= le, "{v} not in ({below}, {le}]");
        assert!(*v > 1e-6, "over the threshold: {v}");
        assert!(*at > 1.6e9, "a Unix time: {at}");
    }
    m.stop(libc::SIGTERM, Duration::from_secs(10));
    let json = dir.path().join("back.json");
    let out = common::sleeplab()
        .args(["explain", "--from"])
        .arg(kept.join(&files[0]))
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("the monitor's cell nanosleep"), "{said}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let waits = doc["waits"].as_array().unwrap();
    assert!(!waits.is_empty() && waits.len() <= 5, "{doc}");
    for w in waits {
        // glibc's nanosleep makes the clock_nanosleep system call.
        assert!(
            w["call"] == "nanosleep" || w["call"] == "clock_nanosleep",
            "{w}"
        );
    }
}
