//! The HTTP side: one serving thread runs `hyper` on a `tokio` current-thread runtime,
//! accepting connections and answering `/metrics` (the shared encoding, its bytes
//! handed over by reference count, not copied), `/healthz` and `/`. No thread per
//! connection and no handoff between threads: the whole scrape (accept, read, answer,
//! write) is one thread's epoll loop, which sleeps in the kernel while no one scrapes.
//! It shares nothing with the measuring threads but the records' locks, held for a
//! copy of a few hundred bytes once per [`REFRESH`](super::metrics::REFRESH).

use super::metrics::{CONTENT_TYPE, Metrics};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::CONTENT_TYPE as CONTENT_TYPE_HEADER;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::net::TcpListener;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::sync::oneshot;

/// How long a connection may wait for its next request's headers before it is closed:
/// a client that connects and says nothing holds its socket this long at most. hyper
/// counts an idle keep-alive connection's wait between requests too (checked: closed
/// after 12 s idle with 10 s), so this is longer than any usual scrape interval
/// (15 s – 1 min) and Prometheus keeps its connection from scrape to scrape.
const HEADER_TIMEOUT: Duration = Duration::from_secs(300);

/// After a failed accept (e.g. out of file descriptors), the pause before the next,
/// so the loop does not spin on an error that persists.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// The serving thread; [`stop`](Self::stop) ends it.
#[derive(Debug)]
pub struct Serving {
    stop: oneshot::Sender<()>,
    thread: JoinHandle<std::io::Result<()>>,
}

impl Serving {
    /// Stops accepting, closes the open connections and joins the thread.
    pub fn stop(self) -> std::io::Result<()> {
        // An error: the thread has already ended (its result says why).
        let _ = self.stop.send(());
        self.thread
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the HTTP thread panicked")))
    }
}

/// Starts the serving thread answering on `listener` until [`Serving::stop`].
pub fn spawn(listener: TcpListener, metrics: Arc<Metrics>) -> std::io::Result<Serving> {
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    let (stop, stopped) = oneshot::channel();
    let thread = std::thread::Builder::new()
        .name("monitor-http".into())
        .spawn(move || runtime.block_on(accept_until(listener, metrics, stopped)))?;
    Ok(Serving { stop, thread })
}

/// Accepts and serves connections (each a task on this thread) until `stopped`;
/// dropping the runtime afterwards closes the connections still open.
async fn accept_until(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    mut stopped: oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT);
    loop {
        let stream = tokio::select! {
            _ = &mut stopped => return Ok(()),
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
        };
        // The answer is written whole at once; no need to wait for an ACK first.
        let _ = stream.set_nodelay(true);
        let metrics = Arc::clone(&metrics);
        let service = service_fn(move |request: Request<Incoming>| {
            std::future::ready(Ok::<_, Infallible>(answer(&request, &metrics)))
        });
        let connection = http.serve_connection(TokioIo::new(stream), service);
        // A client that went away or sent garbage is not an error of the monitor.
        tokio::spawn(async move {
            let _ = connection.await;
        });
    }
}

/// The answer to one request (hyper leaves the body out for HEAD and writes the
/// Content-Length of the GET answer).
fn answer<B>(request: &Request<B>, metrics: &Metrics) -> Response<Full<Bytes>> {
    let (status, content_type, body) = route(request.method(), request.uri().path(), metrics);
    Response::builder()
        .status(status)
        .header(CONTENT_TYPE_HEADER, content_type)
        .body(Full::new(body))
        .expect("a valid static status and header")
}

/// The status, content type and body for `method` on `path`.
fn route(method: &Method, path: &str, metrics: &Metrics) -> (StatusCode, &'static str, Bytes) {
    const TEXT: &str = "text/plain; charset=utf-8";
    if method != Method::GET && method != Method::HEAD {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            TEXT,
            Bytes::from_static(b"only GET and HEAD\n"),
        );
    }
    match path {
        "/metrics" => match metrics.scrape() {
            Ok(text) => (StatusCode::OK, CONTENT_TYPE, text),
            Err(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                TEXT,
                Bytes::from_static(b"cannot encode the metrics\n"),
            ),
        },
        "/healthz" => (StatusCode::OK, TEXT, Bytes::from_static(b"ok\n")),
        "/" => (
            StatusCode::OK,
            "text/html; charset=utf-8",
            Bytes::from_static(
                b"<html><body><h1>sleeplab monitor</h1><p><a href=\"/metrics\">/metrics</a> \
                  <a href=\"/healthz\">/healthz</a></p></body></html>\n",
            ),
        ),
        _ => (
            StatusCode::NOT_FOUND,
            TEXT,
            Bytes::from_static(b"not found\n"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::cells::parse_cells;
    use sleeplab::system::Fingerprint;

    fn metrics() -> Metrics {
        let cells = parse_cells(&["nanosleep@100us".into()], &[]).unwrap();
        Metrics::new(&cells, &[Arc::default()], None, &Fingerprint::default())
    }

    #[test]
    fn each_path_and_method_gets_its_status_and_type() {
        let m = metrics();
        for method in [Method::GET, Method::HEAD] {
            let (status, kind, body) = route(&method, "/metrics", &m);
            assert_eq!((status, kind), (StatusCode::OK, CONTENT_TYPE));
            assert!(body.ends_with(b"# EOF\n"));
            assert_eq!(route(&method, "/healthz", &m).0, StatusCode::OK);
            assert_eq!(route(&method, "/", &m).0, StatusCode::OK);
            assert_eq!(route(&method, "/nope", &m).0, StatusCode::NOT_FOUND);
        }
        for method in [Method::POST, Method::PUT, Method::DELETE] {
            assert_eq!(
                route(&method, "/metrics", &m).0,
                StatusCode::METHOD_NOT_ALLOWED
            );
        }
    }

    #[test]
    fn get_and_head_of_metrics_are_counted_as_scrapes() {
        let m = metrics();
        route(&Method::GET, "/metrics", &m);
        route(&Method::HEAD, "/metrics", &m);
        route(&Method::GET, "/healthz", &m);
        let text = m.encode().unwrap();
        assert!(
            text.contains("sleeplab_monitor_scrapes_total 2\n"),
            "{text}"
        );
    }
}
