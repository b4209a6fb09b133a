//! A real Prometheus (the Debian `prometheus` package, installed by
//! scripts/install-deps.sh) scrapes `sleeplab monitor` on the loopback, and its HTTP API
//! answers `histogram_quantile(0.99, rate(…_bucket[…]))` with a number: the exposition
//! is one Prometheus parses and the histogram one PromQL can use. The deploy files are
//! valid (`promtool check`), every quantile they compute is guarded by the window's
//! count (the quantile rule: ≥ 100 wakes for a p99), and the rules' unit tests pass
//! (`promtool test rules`: no p99 and no alert from a window of 50 wakes). Without
//! Prometheus or promtool the tests fail under CI (`CI` set) and say so elsewhere.

mod common;

use common::monitor::{Monitor, get};
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Kills Prometheus when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn prometheus_binary() -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| std::path::Path::new(d).join("prometheus"))
        .find(|p| p.is_file())
}

/// Percent-encodes a query parameter.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The values of an instant-vector answer of the query API (empty: no series yet).
fn query(api: SocketAddr, promql: &str) -> Vec<f64> {
    let (status, body) = get(api, &format!("/api/v1/query?query={}", encode(promql)));
    assert_eq!(status, 200, "{promql}: {body}");
    let v: serde_json::Value = serde_json::from_str(&body).expect("JSON from the API");
    assert_eq!(v["status"], "success", "{body}");
    v["data"]["result"]
        .as_array()
        .expect("a vector")
        .iter()
        .map(|r| r["value"][1].as_str().unwrap().parse().expect("a number"))
        .collect()
}

/// Starts Prometheus scraping `target` every second, its files in `dir`, with `extra`
/// flags; its API's address (not yet ready: poll `/-/ready`).
fn start_prometheus(
    bin: &std::path::Path,
    dir: &std::path::Path,
    target: SocketAddr,
    extra: &[&str],
) -> (Server, SocketAddr) {
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: sleeplab\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    // A free port for the API (released just before Prometheus takes it).
    let api = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let server = Server(
        Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={api}"))
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus starts"),
    );
    (server, api)
}

/// Whether the API at `api` is up (it answers 503 until its storage is).
fn ready(api: SocketAddr) -> bool {
    std::net::TcpStream::connect(api).is_ok() && get(api, "/-/ready").0 == 200
}

#[test]
fn prometheus_scrapes_the_monitor_and_computes_a_p99() {
    let Some(bin) = prometheus_binary() else {
        common::missing_dependency("`prometheus` on PATH");
        return;
    };
    let mut monitor = Monitor::start(&["--interval", "100ms", "--burst", "5"]);
    let dir = tempfile::tempdir().unwrap();
    let (_prometheus, api) = start_prometheus(&bin, dir.path(), monitor.addr, &[]);
    let p99 = "histogram_quantile(0.99, \
               rate(sleeplab_wake_latency_seconds_bucket{mechanism=\"tick:clock-nanosleep-abs\"}[10s]))";
    let t0 = Instant::now();
    let values = loop {
        if ready(api) {
            let v = query(api, p99);
            if v.iter().any(|x| x.is_finite()) {
                break v;
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "Prometheus never answered {p99} with a number"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(values.len(), 1, "one series: {values:?}");
    assert!(
        values[0] >= 0.0,
        "a latency quantile is not negative: {values:?}"
    );
    assert_eq!(
        query(api, "up{job=\"sleeplab\"}"),
        [1.0],
        "the target is up"
    );
    // Prometheus read the info metric and every cell's histogram.
    assert_eq!(query(api, "sleeplab_build_info").len(), 1);
    assert_eq!(query(api, "sleeplab_wake_latency_seconds_count").len(), 4);
    let (status, _) = monitor.stop(libc::SIGTERM, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0));
}

/// With the flight recorder on (as root), Prometheus stores the exemplars of the latency
/// buckets (`--enable-feature=exemplar-storage`) and its exemplar API answers with the
/// saved traces' names: each one a file the monitor wrote.
#[test]
fn prometheus_stores_the_exemplars_that_name_saved_traces() {
    let Some(bin) = prometheus_binary() else {
        common::missing_dependency("`prometheus` on PATH");
        return;
    };
    if !common::tracing::traceable() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("kept");
    let mut monitor = common::monitor::keeping_every_wake("100ms", 5, &kept);
    let (_prometheus, api) = start_prometheus(
        &bin,
        dir.path(),
        monitor.addr,
        &["--enable-feature=exemplar-storage"],
    );
    let path = format!(
        "/api/v1/query_exemplars?query={}&start=0&end=4102444800",
        encode("sleeplab_wake_latency_seconds_bucket")
    );
    let t0 = Instant::now();
    let traces = loop {
        if ready(api) {
            let (status, body) = get(api, &path);
            assert_eq!(status, 200, "{body}");
            let v: serde_json::Value = serde_json::from_str(&body).unwrap();
            let traces: Vec<String> = v["data"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|series| series["exemplars"].as_array().cloned().unwrap_or_default())
                .filter_map(|e| e["labels"]["trace"].as_str().map(str::to_string))
                .collect();
            if !traces.is_empty() {
                break traces;
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "Prometheus never stored an exemplar"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    for t in &traces {
        assert!(kept.join(t).is_file(), "{t} names no saved trace");
    }
    let (status, _) = monitor.stop(libc::SIGTERM, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0));
}

/// The `sleeplab_*` metric names in `text` (recording rules, with a colon, excluded).
fn metric_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter(|w| w.starts_with("sleeplab_") && !w.contains(':'))
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_deploy_files_are_valid_and_name_only_served_metrics() {
    let deploy = common::repo_root().join("deploy");
    let rules = deploy.join("prometheus/sleeplab.rules.yml");
    let dashboard =
        std::fs::read_to_string(deploy.join("grafana/sleeplab-dashboard.json")).unwrap();
    let _: serde_json::Value = serde_json::from_str(&dashboard).expect("the dashboard is JSON");
    let mut m = Monitor::start(&["--interval", "50ms", "--burst", "2"]);
    let served = loop {
        let text = m.get("/metrics").1;
        if text.contains("sleeplab_precise_margin_seconds") {
            break text;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let rules_text = std::fs::read_to_string(&rules).unwrap();
    for name in metric_names(&dashboard)
        .into_iter()
        .chain(metric_names(&rules_text))
    {
        assert!(
            served.contains(&name),
            "{name} is named in deploy/ but not served"
        );
    }
    assert_eq!(
        m.stop(libc::SIGTERM, Duration::from_secs(10)).0.code(),
        Some(0)
    );
    // Every quantile computed from the histogram is guarded by the window's count.
    for (name, text) in [("rules", &rules_text), ("dashboard", &dashboard)] {
        let quantiles = text.matches("histogram_quantile(").count();
        assert!(quantiles > 0, "{name}: no p99 to guard");
        let guards = text.matches(">= 100").count();
        assert_eq!(
            guards, quantiles,
            "{name}: every histogram_quantile needs its `… >= 100` count guard"
        );
    }
    let Ok(promtool) = Command::new("promtool").arg("--version").output() else {
        common::missing_dependency("`promtool` (the prometheus package has it)");
        return;
    };
    assert!(promtool.status.success());
    for (what, file) in [
        ("rules", &rules),
        ("config", &deploy.join("prometheus/scrape.yml")),
    ] {
        let o = Command::new("promtool")
            .args(["check", what])
            .arg(file)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "promtool check {what}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
    // The rules' unit tests: the guard keeps a 50-wake window's "p99" and its alert out.
    let o = Command::new("promtool")
        .args(["test", "rules"])
        .arg(deploy.join("prometheus/sleeplab.rules.test.yml"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "promtool test rules: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
