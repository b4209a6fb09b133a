//! Scrape load for `scripts/bench-monitor.sh`: CLIENTS scrapers (threads, started
//! together), each scraping `http://ADDR/metrics` SCRAPES times in a row, either with a
//! new connection per scrape (as a Prometheus server without keep-alive would, the
//! default) or over one keep-alive connection per scraper (`--keep-alive`, as
//! Prometheus does by default). Prints how many were answered whole, the p50/p99 of the
//! scrape time (connect to the last byte) and of its phases (connect, first byte), the
//! throughput, and the client's own CPU per scrape.
//!
//! By default the scrapers never pause, so the server and the client always have
//! CLIENTS scrapes in flight on the machine's CPUs: by Little's law the mean scrape time
//! is CLIENTS / throughput, so on a small machine it is set by the CPU one scrape costs
//! both sides (printed, so the two can be compared), not by any wait of its own. With
//! `--every` each scraper starts one scrape per period (a stated offered load, as
//! Prometheus servers on a scrape interval would), timed from when it was due.
//!
//!     cargo run --release -p sleeplab-cli --example scrape_load -- 127.0.0.1:9477 100 20
//!     cargo run --release -p sleeplab-cli --example scrape_load -- 127.0.0.1:9477 100 20 --keep-alive
//!     cargo run --release -p sleeplab-cli --example scrape_load -- 127.0.0.1:9477 100 20 --every 100ms

use clap::Parser;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

#[derive(Parser)]
struct Args {
    /// The monitor's address.
    addr: SocketAddr,
    /// Concurrent scrapers.
    #[arg(default_value_t = 100)]
    clients: usize,
    /// Scrapes each, one after the other.
    #[arg(default_value_t = 20)]
    scrapes: usize,
    /// One keep-alive connection per scraper instead of a new one per scrape.
    #[arg(long)]
    keep_alive: bool,
    /// Each scraper starts a scrape every DURATION (e.g. 100ms; the scrapers staggered
    /// over it) instead of at once after the last: a stated offered load instead of
    /// the most the machine can take. A scrape's time then counts from when it was due,
    /// so one that had to wait for the previous is charged for it.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    every: Option<Duration>,
}

/// One scrape's times from its start (the connect, or the request on a kept connection).
#[derive(Clone, Copy)]
struct Phases {
    connected: Duration,
    first_byte: Duration,
    last_byte: Duration,
}

/// A scraper: its request, written in one piece, its connection when kept, and
/// buffers reused from scrape to scrape (zeroing 64 KB per scrape showed in a profile).
struct Scraper {
    addr: SocketAddr,
    request: Vec<u8>,
    kept: Option<TcpStream>,
    keep_alive: bool,
    buf: Vec<u8>,
    chunk: Box<[u8]>,
}

impl Scraper {
    fn new(addr: SocketAddr, keep_alive: bool) -> Self {
        let connection = if keep_alive { "keep-alive" } else { "close" };
        Self {
            addr,
            request: format!(
                "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: {connection}\r\n\r\n"
            )
            .into_bytes(),
            kept: None,
            keep_alive,
            buf: Vec::with_capacity(64 * 1024),
            chunk: vec![0; 64 * 1024].into_boxed_slice(),
        }
    }

    fn connect(&self) -> std::io::Result<TcpStream> {
        let s = TcpStream::connect(self.addr)?;
        s.set_read_timeout(Some(Duration::from_secs(30)))?;
        s.set_nodelay(true)?;
        Ok(s)
    }

    /// One scrape: its phases, or why it failed.
    fn scrape(&mut self) -> Result<Phases, String> {
        let t0 = Instant::now();
        let mut stream = match self.kept.take() {
            Some(s) => s,
            None => self.connect().map_err(|e| format!("connect: {e}"))?,
        };
        let connected = t0.elapsed();
        stream
            .write_all(&self.request)
            .map_err(|e| format!("write: {e}"))?;
        self.buf.clear();
        let mut first_byte = None;
        let body_end = loop {
            let n = stream
                .read(&mut self.chunk)
                .map_err(|e| format!("read: {e}"))?;
            first_byte.get_or_insert_with(|| t0.elapsed());
            self.buf.extend_from_slice(&self.chunk[..n]);
            match whole_response(&self.buf)? {
                Some(end) => break end,
                None if n == 0 => return Err("the connection closed mid-answer".into()),
                None => {}
            }
        };
        let last_byte = t0.elapsed();
        if !self.buf[..body_end].ends_with(b"# EOF\n") {
            return Err("not a whole exposition".into());
        }
        if self.keep_alive {
            self.kept = Some(stream);
        }
        Ok(Phases {
            connected,
            first_byte: first_byte.unwrap_or(last_byte),
            last_byte,
        })
    }
}

/// Where a 200 answer in `buf` ends, once its head and Content-Length bytes are in;
/// `None` while more is needed; an error for any other status.
fn whole_response(buf: &[u8]) -> Result<Option<usize>, String> {
    let mut headers = [httparse::EMPTY_HEADER; 16];
    let mut response = httparse::Response::new(&mut headers);
    let head = match response.parse(buf).map_err(|e| e.to_string())? {
        httparse::Status::Complete(n) => n,
        httparse::Status::Partial => return Ok(None),
    };
    if response.code != Some(200) {
        return Err(format!("status {:?}", response.code));
    }
    let length: usize = response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| std::str::from_utf8(h.value).ok()?.parse().ok())
        .ok_or("no Content-Length")?;
    Ok((buf.len() >= head + length).then_some(head + length))
}

/// Nearest rank; a p99 needs n ≥ 100 (the project's quantile rule).
/// The `p` quantile of `sorted` as sleeplab reports every quantile (linear
/// interpolation, only where `n·(1 − p) ≥ 1`), in ms; "–" otherwise.
fn quantile(sorted: &[Duration], p: f64) -> String {
    let ns: Vec<u64> = sorted.iter().map(|d| d.as_nanos() as u64).collect();
    sleeplab_stats::tail_quantile(&ns, p).map_or("–".into(), |v| format!("{:.2} ms", v / 1e6))
}

/// This process's user + system CPU time so far.
fn cpu_time() -> Duration {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

fn main() {
    let args = Args::try_parse().unwrap_or_else(|e| {
        let _ = e.print();
        std::process::exit(2)
    });
    let (clients, scrapes) = (args.clients, args.scrapes);
    // The scrapers and this thread: the clock and CPU start when all are ready.
    let start = Arc::new(Barrier::new(clients + 1));
    let every = args.every;
    let threads: Vec<_> = (0..clients)
        .map(|i| {
            let start = Arc::clone(&start);
            let mut scraper = Scraper::new(args.addr, args.keep_alive);
            std::thread::spawn(move || {
                start.wait();
                let t0 = Instant::now();
                (0..scrapes)
                    .map(|k| match every {
                        None => scraper.scrape(),
                        Some(every) => {
                            let due = t0 + every * k as u32 + every * i as u32 / clients as u32;
                            std::thread::sleep(due.saturating_duration_since(Instant::now()));
                            // Past due when the previous scrape overran (or the sleep woke late).
                            let late = due.elapsed();
                            scraper.scrape().map(|p| Phases {
                                last_byte: late + p.last_byte,
                                ..p
                            })
                        }
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    start.wait();
    let (t0, cpu0) = (Instant::now(), cpu_time());
    let results: Vec<_> = threads
        .into_iter()
        .flat_map(|t| t.join().expect("a scraper thread"))
        .collect();
    let (wall, cpu) = (t0.elapsed(), cpu_time() - cpu0);
    let (ok, failures): (Vec<_>, Vec<_>) = results.into_iter().partition(Result::is_ok);
    let phases: Vec<Phases> = ok.into_iter().flatten().collect();
    let sorted = |f: fn(&Phases) -> Duration| {
        let mut v: Vec<Duration> = phases.iter().map(f).collect();
        v.sort();
        v
    };
    let (total, connect, first) = (
        sorted(|p| p.last_byte),
        sorted(|p| p.connected),
        sorted(|p| p.first_byte),
    );
    let n = total.len();
    let mut how = if args.keep_alive {
        "one keep-alive connection per scraper".to_string()
    } else {
        "a new connection per scrape".to_string()
    };
    if let Some(every) = every {
        how += &format!(
            ", each scraper every {every:?} ({:.0} scrapes/s offered; times from when each was due)",
            clients as f64 / every.as_secs_f64()
        );
    }
    println!(
        "scrape latency, {clients} concurrent scrapers x {scrapes}, {how}: answered {n} of {}, p50 {}, p99 {}",
        clients * scrapes,
        quantile(&total, 0.5),
        quantile(&total, 0.99)
    );
    let per_scrape_us = |d: Duration| d.as_secs_f64() * 1e6 / n.max(1) as f64;
    // Without pauses every scraper always has a scrape in flight: Little's law.
    let little = match every {
        None => format!(
            " (Little's law: mean scrape time = {clients} / throughput = {:.2} ms)",
            clients as f64 * wall.as_secs_f64() * 1e3 / n.max(1) as f64
        ),
        Some(_) => String::new(),
    };
    println!(
        "  phases p50/p99 from the connect or request: connected {}/{}, first byte {}/{}; \
         {:.0} scrapes/s over {:.2} s{little}; the client's CPU {:.0} us per scrape",
        quantile(&connect, 0.5),
        quantile(&connect, 0.99),
        quantile(&first, 0.5),
        quantile(&first, 0.99),
        n as f64 / wall.as_secs_f64(),
        wall.as_secs_f64(),
        per_scrape_us(cpu),
    );
    if let Some(Err(e)) = failures.first() {
        eprintln!("{} scrapes failed, the first: {e}", failures.len());
        std::process::exit(1);
    }
}
