//! The report in a real browser: the stored survey (`tests/fixtures/survey.json`), with
//! a synthetic `explain` stage added (`common::explain`: the stacked charts), is rendered
//! with `sleeplab report`, then loaded from disk by headless Chromium.
//!
//! How "it loads, with no console errors, and every chart is there" is checked:
//!
//! 1. Statically, the page must be self-contained: no `<script>`, `<link>`, `<img>`,
//!    `src=`, `@import` or `url(`, and no `http(s)://` other than the SVG namespace.
//!    With nothing to run or fetch, there is nothing that could fail to load.
//! 2. `chromium --headless --dump-dom` prints the DOM *after* the browser parsed and
//!    laid out the page. Every chart id in the source (`<svg data-chart="ID"`) must be an
//!    `<svg>` element in that DOM, as many of them as in the source, and the footer that
//!    closes the page must be there: a malformed SVG or an unclosed tag would make the
//!    parser drop or re-nest elements and fail this count.
//! 3. The same run logs the console to stderr (`--enable-logging=stderr --v=0`); any
//!    `CONSOLE` line fails the test (the page has no scripts, so any console message is
//!    the browser complaining about the page).
//! 4. A screenshot (`--screenshot --window-size=1280,2400`) is saved next to the test
//!    binaries (`target/tmp/report-browser/report.png`) and must be a non-trivial PNG.
//!
//! Without Chromium the test fails under CI (`CI` set) and is skipped with a message
//! otherwise.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SLEEPLAB_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Runs Chromium headless on `page` with `extra` arguments; returns (stdout, stderr).
fn run_chromium(bin: &Path, page: &Path, extra: &[String]) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    // Read both pipes on threads so a chatty browser cannot block on a full pipe.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut so, &mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut se, &mut s);
        s
    });
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (out.join().unwrap(), err.join().unwrap())
}

/// The `data-chart` ids of the `<svg>` elements of `html`.
fn svg_chart_ids(html: &str) -> Vec<String> {
    html.match_indices("<svg data-chart=\"")
        .map(|(i, m)| {
            let rest = &html[i + m.len()..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect()
}

#[test]
fn the_report_loads_in_chromium_with_every_chart() {
    let Some(bin) = chromium() else {
        common::missing_dependency("chromium (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/survey.json");
    let survey = sleeplab_cli::model::load_result(&fixture).expect("the fixture loads");
    let json = dir.path().join("survey.json");
    let text = serde_json::to_string(&common::explain::with_explain(survey)).unwrap();
    std::fs::write(&json, text).unwrap();
    common::page(
        &[std::ffi::OsStr::new("report"), json.as_os_str()],
        dir.path(),
    );
    let page = dir.path().join("index.html");
    let html = std::fs::read_to_string(&page).unwrap();

    // 1. Self-contained.
    let lower = html.to_ascii_lowercase();
    for bad in [
        "<script", "<link", "<img", "<iframe", " src=", "@import", "url(",
    ] {
        assert!(!lower.contains(bad), "the page contains {bad:?}");
    }
    let external = ["http://", "https://"]
        .iter()
        .flat_map(|scheme| lower.match_indices(scheme))
        .filter(|(i, _)| !lower[*i..].starts_with("http://www.w3.org/2000/svg"))
        .count();
    assert_eq!(external, 0, "the page refers to the network");

    let expected = svg_chart_ids(&html);
    assert!(
        expected.len() >= 10,
        "too few charts in the source: {expected:?}"
    );
    assert!(
        expected.iter().any(|id| id == "explain-cells-tail"),
        "the explain stage's charts: {expected:?}"
    );

    // 2 and 3. Parsed DOM and console.
    let (dom, log) = run_chromium(
        &bin,
        &page,
        &[
            "--enable-logging=stderr".into(),
            "--v=0".into(),
            "--dump-dom".into(),
        ],
    );
    let found = svg_chart_ids(&dom);
    for id in &expected {
        assert!(found.contains(id), "chart {id} is not in the browser's DOM");
    }
    assert_eq!(
        found.len(),
        expected.len(),
        "the DOM has a different number of charts"
    );
    assert!(
        dom.contains("id=\"sleeplab-end\""),
        "the page's closing footer is not in the DOM: the document did not parse to the end"
    );
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");

    // 4. Screenshot.
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    std::fs::create_dir_all(&shots).unwrap();
    let png = shots.join("report.png");
    let _ = std::fs::remove_file(&png);
    run_chromium(
        &bin,
        &page,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1280,2400".into(),
        ],
    );
    let bytes =
        std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot at {}: {e}", png.display()));
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(
        bytes.len() > 20_000,
        "a suspiciously small screenshot ({} bytes)",
        bytes.len()
    );
    eprintln!("screenshot: {}", png.display());
}

/// The `top,bottom` pairs a probe page wrote for the report's answer card, the chart in
/// it and the findings, laid out by Chromium in a 1366×768 frame.
fn first_screen_boxes(bin: &Path, dir: &Path) -> String {
    // A probe page beside the report: the report has no script of its own, so the probe
    // frames it and reads its layout (file pages may read each other with
    // --allow-file-access-from-files), then writes the boxes into its own DOM.
    let probe = dir.join("probe.html");
    std::fs::write(
        &probe,
        r#"<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" src="index.html" style="width:1366px;height:768px;border:0"></iframe>
<pre id="out">pending</pre>
<script>
document.getElementById('f').onload = function () {
  var d = this.contentDocument;
  function box(sel) {
    var e = d.querySelector(sel);
    if (!e) return 'none';
    var r = e.getBoundingClientRect();
    return Math.round(r.top) + ',' + Math.round(r.bottom);
  }
  document.getElementById('out').textContent = 'answer=' + box('#answer') +
    ';chart=' + box('#answer svg[data-chart]') + ';findings=' + box('#findings') + ';';
};
</script></body></html>"#,
    )
    .unwrap();
    let (dom, _) = run_chromium(
        bin,
        &probe,
        &[
            "--allow-file-access-from-files".into(),
            "--virtual-time-budget=10000".into(),
            "--window-size=1366,768".into(),
            "--dump-dom".into(),
        ],
    );
    let at = dom
        .find("<pre id=\"out\">")
        .expect("the probe's output in the DOM");
    let rest = &dom[at + "<pre id=\"out\">".len()..];
    rest[..rest.find("</pre>").unwrap()].to_string()
}

/// `(top, bottom)` of `name` in the probe's output.
fn span(boxes: &str, name: &str) -> Option<(i64, i64)> {
    let v = boxes
        .split(';')
        .find_map(|p| p.strip_prefix(&format!("{name}=")))?;
    let (t, b) = v.split_once(',')?;
    Some((t.parse().ok()?, b.parse().ok()?))
}

/// The report's first screen, as a person opens it on a 1366×768 laptop: the answer card
/// starts in its upper half, the chart of the machine beside the answer's lines is on
/// it, and the findings come after the card.
#[test]
fn the_reports_first_screen_is_the_answer_and_a_chart() {
    let Some(bin) = chromium() else {
        common::missing_dependency("chromium (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/survey.json");
    common::page(
        &[std::ffi::OsStr::new("report"), fixture.as_os_str()],
        dir.path(),
    );
    let boxes = first_screen_boxes(&bin, dir.path());
    let answer = span(&boxes, "answer").unwrap_or_else(|| panic!("no answer card: {boxes}"));
    let chart = span(&boxes, "chart").unwrap_or_else(|| panic!("no chart in it: {boxes}"));
    let findings = span(&boxes, "findings").unwrap_or_else(|| panic!("no findings: {boxes}"));
    assert!(
        (0..384).contains(&answer.0),
        "the answer starts below the first half: {boxes}"
    );
    // The chart's upper half at least on the first screen (its whole height where the
    // header is as short as here; fonts differ from machine to machine).
    assert!(
        chart.1 > chart.0 && chart.0 + (chart.1 - chart.0) / 2 <= 768,
        "the chart is not on the first screen: {boxes}"
    );
    assert!(
        findings.0 >= answer.1,
        "the findings come before the answer: {boxes}"
    );
    eprintln!("first screen (top,bottom px): {boxes}");
}
