//! The HTTP side: `tiny_http` accepts connections and reads requests on its own
//! threads; [`WORKERS`] workers answer `/metrics` (the shared encoding, written from
//! its bytes without a copy), `/healthz` and `/` until the stop flag is set. They share
//! nothing with the measuring threads but the records' locks, held for a copy of a few
//! hundred bytes once per [`REFRESH`](super::metrics::REFRESH).

use super::metrics::{CONTENT_TYPE, Metrics};
use crate::experiments::Stop;
use std::io::Cursor;
use std::sync::Arc;
use std::thread::JoinHandle;
use tiny_http::{Header, Method, Request, Response, Server, StatusCode};

/// Threads that answer requests (connections are accepted on tiny_http's own threads).
/// An answer is a write of bytes already encoded, so a few serve a hundred scrapers.
pub const WORKERS: usize = 4;

/// Starts the workers answering on `server` until `stop`.
pub fn spawn(
    server: Arc<Server>,
    metrics: Arc<Metrics>,
    stop: &Stop,
) -> std::io::Result<Vec<JoinHandle<()>>> {
    (0..WORKERS)
        .map(|i| {
            let (server, metrics, stop) = (Arc::clone(&server), Arc::clone(&metrics), stop.clone());
            std::thread::Builder::new()
                .name(format!("monitor-http-{i}"))
                .spawn(move || {
                    while !stop.requested() {
                        // An error: unblocked after a stop, or a failed accept (go on).
                        if let Ok(request) = server.recv() {
                            answer(request, &metrics);
                        }
                    }
                })
        })
        .collect()
}

/// Wakes every worker blocked in `recv` (call after setting the stop flag).
pub fn unblock(server: &Server) {
    for _ in 0..WORKERS {
        server.unblock();
    }
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid static header")
}

/// Answers one request; a client that went away is not an error of the monitor.
fn answer(request: Request, metrics: &Metrics) {
    let path = request.url().split('?').next().unwrap_or("");
    let (status, content_type, body): (u16, &str, Arc<[u8]>) = match (request.method(), path) {
        (Method::Get | Method::Head, "/metrics") => match metrics.scrape() {
            Ok(text) => (200, CONTENT_TYPE, text),
            Err(_) => (
                500,
                "text/plain",
                "cannot encode the metrics\n".as_bytes().into(),
            ),
        },
        (Method::Get | Method::Head, "/healthz") => (200, "text/plain", "ok\n".as_bytes().into()),
        (Method::Get | Method::Head, "/") => (
            200,
            "text/html; charset=utf-8",
            "<html><body><h1>sleeplab monitor</h1><p><a href=\"/metrics\">/metrics</a> \
             <a href=\"/healthz\">/healthz</a></p></body></html>\n"
                .as_bytes()
                .into(),
        ),
        (Method::Get | Method::Head, _) => (404, "text/plain", "not found\n".as_bytes().into()),
        _ => (405, "text/plain", "only GET and HEAD\n".as_bytes().into()),
    };
    let len = body.len();
    let response = Response::new(
        StatusCode(status),
        vec![header("Content-Type", content_type)],
        Cursor::new(body),
        Some(len),
        None,
    );
    let _ = request.respond(response);
}
