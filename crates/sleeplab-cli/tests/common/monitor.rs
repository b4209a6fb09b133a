//! A running `sleeplab monitor` for the monitor's tests: started on a port the kernel
//! picks, its address read from its first line, stopped by a signal; a plain HTTP GET;
//! and the checks every OpenMetrics exposition it serves must pass.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStderr, ExitStatus};
use std::time::{Duration, Instant};

/// A monitor process, killed on drop if a test failed before stopping it.
pub struct Monitor {
    child: Child,
    /// Where it serves.
    pub addr: SocketAddr,
    stderr: BufReader<ChildStderr>,
}

impl Monitor {
    /// Starts `sleeplab monitor --listen 127.0.0.1:0` with `args`.
    pub fn start(args: &[&str]) -> Self {
        let mut child =
            super::spawn_piping_stderr(["monitor", "--listen", "127.0.0.1:0"].iter().chain(args));
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no address in the monitor's first line: {line:?}"));
        Self {
            child,
            addr,
            stderr,
        }
    }

    /// `GET path`: the status and the body.
    pub fn get(&self, path: &str) -> (u16, String) {
        get(self.addr, path)
    }

    /// Sends `sig` and waits (at most `limit`) for the exit; the status and how long.
    pub fn stop(&mut self, sig: libc::c_int, limit: Duration) -> (ExitStatus, Duration) {
        // SAFETY: kill on our own child.
        unsafe { libc::kill(self.child.id() as i32, sig) };
        let t0 = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status, t0.elapsed());
            }
            assert!(
                t0.elapsed() < limit,
                "the monitor did not stop within {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Monitor {
    /// What it wrote to stderr after its first line, up to its exit (call after
    /// [`stop`](Self::stop)).
    pub fn rest_of_stderr(&mut self) -> String {
        let mut rest = String::new();
        self.stderr.read_to_string(&mut rest).unwrap();
        rest
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plain HTTP/1.0 GET on `addr`: the status and the body.
pub fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let (status, _, body) = request(addr, "GET", path);
    (status, body)
}

/// A plain HTTP/1.0 `method` on `addr`: the status, the head and the body.
pub fn request(addr: SocketAddr, method: &str, path: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "{method} {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).expect("a whole response");
    let (head, body) = text.split_once("\r\n\r\n").expect("a header and a body");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status code");
    (status, head.to_string(), body.to_string())
}

/// One series of a histogram: its `le` bounds with cumulative counts, `_sum`, `_count`.
#[derive(Debug, Default)]
pub struct Series {
    pub buckets: Vec<(f64, f64)>,
    pub sum: f64,
    pub count: f64,
}

/// The labels of a sample line without `le`, e.g. `mechanism="x",requested="0.001"`.
fn labels_without_le(labels: &str) -> String {
    labels
        .split(',')
        .filter(|l| !l.starts_with("le="))
        .collect::<Vec<_>>()
        .join(",")
}

/// Parses the samples `name{labels} value` of an exposition (comments skipped).
pub fn samples(text: &str) -> Vec<(String, String, f64)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            // An exemplar follows the value: ` # {labels} value timestamp`.
            let l = l.split_once(" # ").map_or(l, |(sample, _)| sample);
            let (series, value) = l
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("bad line {l:?}"));
            let (name, labels) = match series.split_once('{') {
                Some((n, rest)) => (n, rest.trim_end_matches('}')),
                None => (series, ""),
            };
            let v: f64 = value
                .parse()
                .unwrap_or_else(|_| panic!("bad value in {l:?}"));
            (name.to_string(), labels.to_string(), v)
        })
        .collect()
}

/// A monitor of one cell, nanosleep at 100 µs in bursts of 5 every `interval`, whose
/// flight recorder keeps every wake later than 1 µs (all of them) in `dir`, at most
/// `keep_max` saved traces, then counts them unkept.
pub fn keeping_every_wake(interval: &str, keep_max: u32, dir: &std::path::Path) -> Monitor {
    let keep_max = keep_max.to_string();
    Monitor::start(&[
        "--interval",
        interval,
        "--burst",
        "5",
        "--mechanisms",
        "nanosleep@100us",
        "--keep-over",
        "1us",
        "--keep-max",
        &keep_max,
        "--keep-dir",
        dir.to_str().unwrap(),
    ])
}

/// The exemplars on the bucket lines of histogram `name`: the bucket's labels (with
/// `le`), the exemplar's labels, its value and its timestamp.
pub fn exemplars(text: &str, name: &str) -> Vec<(String, String, f64, f64)> {
    let prefix = format!("{name}_bucket{{");
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(&prefix)?;
            let (sample, exemplar) = rest.split_once(" # {")?;
            let (labels, _) = sample.split_once("} ")?;
            let (ex_labels, tail) = exemplar.split_once("} ")?;
            let mut words = tail.split(' ');
            let value: f64 = words.next()?.parse().ok()?;
            let at: f64 = words.next()?.parse().ok()?;
            Some((labels.to_string(), ex_labels.to_string(), value, at))
        })
        .collect()
}

/// The series of histogram `name`, keyed by their labels (without `le`), checked:
/// ends with `# EOF`, `le` ascending to `+Inf`, counts cumulative, `+Inf` = `_count`.
pub fn histogram(text: &str, name: &str) -> BTreeMap<String, Series> {
    assert!(
        text.ends_with("# EOF\n"),
        "an OpenMetrics exposition ends with # EOF"
    );
    let mut out: BTreeMap<String, Series> = BTreeMap::new();
    for (n, labels, v) in samples(text) {
        let key = labels_without_le(&labels);
        if n == format!("{name}_bucket") {
            let le = labels
                .split(',')
                .find_map(|l| l.strip_prefix("le=\""))
                .expect("a bucket has le")
                .trim_end_matches('"');
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().unwrap()
            };
            out.entry(key).or_default().buckets.push((le, v));
        } else if n == format!("{name}_sum") {
            out.entry(key).or_default().sum = v;
        } else if n == format!("{name}_count") {
            out.entry(key).or_default().count = v;
        }
    }
    for (key, s) in &out {
        assert!(
            s.buckets.windows(2).all(|w| w[0].0 < w[1].0),
            "{key}: le ascending"
        );
        assert!(
            s.buckets.windows(2).all(|w| w[0].1 <= w[1].1),
            "{key}: cumulative"
        );
        let last = s.buckets.last().expect("buckets");
        assert_eq!(last.0, f64::INFINITY, "{key}: ends with +Inf");
        assert_eq!(last.1, s.count, "{key}: +Inf holds every observation");
        assert!(s.sum >= 0.0, "{key}: a sum of latencies is not negative");
    }
    out
}

/// The value of counter or gauge sample `name` with exactly `labels`.
pub fn value(text: &str, name: &str, labels: &str) -> Option<f64> {
    samples(text)
        .into_iter()
        .find(|(n, l, _)| n == name && l == labels)
        .map(|s| s.2)
}
