//! Scrape load for `scripts/bench-monitor.sh`: CLIENTS threads, started together, each
//! scraping `http://ADDR/metrics` SCRAPES times (one connection per scrape, as a
//! Prometheus server without keep-alive would); prints how many were answered whole and
//! the p50/p99 of the scrape time (connect to the last byte). Threads, not an
//! interpreter's event loop, so the client adds as little as it can to what it measures.
//!
//!     cargo run --release -p sleeplab-cli --example scrape_load -- 127.0.0.1:9477 100 20

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// One scrape: its time, or why it failed.
fn scrape(addr: SocketAddr) -> Result<Duration, String> {
    let t0 = Instant::now();
    let mut s =
        TcpStream::connect_timeout(&addr, Duration::from_secs(10)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut body = Vec::with_capacity(16 * 1024);
    s.read_to_end(&mut body).map_err(|e| e.to_string())?;
    let took = t0.elapsed();
    let text = String::from_utf8_lossy(&body);
    if !text.starts_with("HTTP/1.1 200") || !text.ends_with("# EOF\n") {
        return Err(format!("not a whole exposition: {:?}", text.lines().next()));
    }
    Ok(took)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: scrape_load ADDR:PORT [CLIENTS] [SCRAPES]";
    let Some(addr) = args.get(1).and_then(|a| a.parse::<SocketAddr>().ok()) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let count = |i: usize, default: usize| -> usize {
        args.get(i)
            .map_or(Some(default), |a| a.parse().ok())
            .unwrap_or_else(|| {
                eprintln!("{usage}");
                std::process::exit(2)
            })
    };
    let (clients, scrapes) = (count(2, 100), count(3, 20));
    let start = Arc::new(Barrier::new(clients));
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                start.wait();
                (0..scrapes).map(|_| scrape(addr)).collect::<Vec<_>>()
            })
        })
        .collect();
    let mut times = Vec::new();
    let mut failures = Vec::new();
    for t in threads {
        for r in t.join().expect("a scraper thread") {
            match r {
                Ok(d) => times.push(d),
                Err(e) => failures.push(e),
            }
        }
    }
    times.sort();
    let n = times.len();
    // Nearest rank; a p99 needs n ≥ 100 (the project's quantile rule).
    let q = |p: f64| -> String {
        if n == 0 || (n as f64) * (1.0 - p) < 1.0 {
            return "–".into();
        }
        let i = ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
        format!("{:.2} ms", times[i].as_secs_f64() * 1e3)
    };
    println!(
        "scrape latency, {clients} concurrent scrapers x {scrapes}: answered {n} of {}, p50 {}, p99 {} (target p99 <= 5 ms)",
        clients * scrapes,
        q(0.5),
        q(0.99)
    );
    if let Some(e) = failures.first() {
        eprintln!("{} scrapes failed, the first: {e}", failures.len());
        std::process::exit(1);
    }
}
