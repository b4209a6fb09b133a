//! Every published number is reproducible: README.md and every file under docs/ quote a
//! measured figure (a number with a unit: ns, µs, ms, s, %, ×) only inside a section a
//! script writes (`<!-- NAME:begin … -->` … `<!-- NAME:end -->`, written by
//! scripts/bench_doc.py, which stamps it; `scripts/bench-all.sh --list` names them all).
//! Code (fenced blocks and inline spans: commands, settings, API calls) is not prose; the
//! few design constants prose states (a default, a threshold the tool applies) are
//! allowed one by one in [`ALLOWED`], each with its reason.
//!
//! The files of docs/ other than BENCHMARKS.md were read by this test only later: the
//! hand figures they quoted then are listed in `tests/fixtures/unsourced_figures.txt`
//! (file, figure, how many times), a list that only shrinks. A figure beyond it fails;
//! one listed but gone fails too, until its line is lowered or removed
//! (`SLEEPLAB_BLESS=1` rewrites the list, only ever downwards).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

/// Figures allowed in prose outside generated sections: (file, the phrase that holds the
/// figure). Each is a design constant or a definition, not a measurement.
const ALLOWED: &[(&str, &str)] = &[
    // What the tool measures and how (its range, its confidence levels).
    ("README.md", "from 0 to 1 s"),
    ("README.md", "95 % interval"),
    ("README.md", "99.9 % confidence intervals"),
    ("README.md", "with 99.9 % CI"),
    // The survey plan's own estimate of its run time (`RUN_TIME`, `QUICK_RUN_TIME`, which
    // `--help` prints; report_cli.rs checks they agree); the measured times are in the
    // survey-time section of docs/BENCHMARKS.md.
    ("README.md", "in about 70 s"),
    ("README.md", "for a glance, about 15 s"),
    // The commands' own ranges and defaults, as their --help states them.
    ("README.md", "(1–25 ms)"),
    ("README.md", "(1–10 ms ticks"),
    ("README.md", "at 100 ms…1 ms"),
    ("README.md", "a median more than ×2 the fleet median"),
    ("README.md", "default 1 s"),
    ("README.md", "a 1 ms absolute"),
    ("README.md", "timerfd at 100 µs"),
    // The alert rule's threshold and its guard (deploy/prometheus/sleeplab.rules.yml).
    ("README.md", "the 1 ms wake's p99 stays"),
    ("README.md", "above 500 µs for 5 minutes"),
    ("README.md", "its 1 ms wake's p99 agrees"),
    // The sleeper's design: its CPU budget and scheduler slice.
    ("README.md", "at most 5 % of the"),
    ("README.md", "(at least 500 µs)"),
    ("README.md", "shortest slice (100 µs"),
    // The async reactor timers' default CPU budget (`DEFAULT_CPU_BUDGET_PERCENT`).
    ("README.md", "at most 1 % of each wait by default"),
    // The Python binding's Ctrl-C bound (its 50 ms native slices).
    ("README.md", "within about 50 ms"),
    // The timer slack every sleeper sets on its thread (SlackPolicy::SetMinimal).
    ("README.md", "timer slack to 1 ns"),
    // The bound crates/sleeplab/tests/estimator_traces.rs asserts.
    ("README.md", "within 1.5× of the"),
    // The intervals every benchmark section states.
    ("docs/BENCHMARKS.md", "95 % interval"),
    // The ground truth's rule for explain's account (examples/explain_groundtruth:
    // judge.rs's SHARE_OF_INJECTED, MOST_OF_INJECTED, INJECTED_FLOOR_NS,
    // BASELINE_FLOOR_NS, SHARE_OF_WAKES and scenarios.rs's BLOCK_WAKES; companion.rs's
    // IDLE_ZERO_NS).
    ("docs/RESULTS.md", "within 90–110 % of the injected size"),
    ("docs/RESULTS.md", "widened by 2 µs for small sizes"),
    ("docs/RESULTS.md", "its uninjected p99 plus 10 µs"),
    ("docs/RESULTS.md", "at least 95 % of its wakes pass"),
    ("docs/RESULTS.md", "the share's 95 % interval over blocks"),
    ("docs/RESULTS.md", "(its 95 % interval at or under 1 µs"),
    // asleep's design: the timer's CPU budget (`AsyncTimer::DEFAULT_CPU_BUDGET_PERCENT`,
    // the reactor timer's and the reactor interval's too) against the sleeper's default
    // (5 %, at least 500 µs), the timer thread's slack, and a worked example of the budget.
    ("docs/ASYNC.md", "by default 1 % of each wait"),
    ("docs/ASYNC.md", "default of 5 % (at least 500 µs)"),
    ("docs/ASYNC.md", "(1 ns timer slack"),
    (
        "docs/ASYNC.md",
        "at 1 %, a deadline armed 2 ms ahead may spin",
    ),
    ("docs/ASYNC.md", "20 µs), and their wakes"),
    ("docs/ASYNC.md", "bounded by 1 % of"),
    ("docs/ASYNC.md", "(and at least 1 µs)"),
    ("docs/ASYNC.md", "(1 % of each wait)"),
    ("docs/ASYNC.md", "the margin bounded by 1 % of the wait"),
    ("docs/ASYNC.md", "(the margin by hand: 1 % of the period)"),
];

/// The units a figure ends with.
const UNITS: [&str; 6] = ["ns", "µs", "us", "ms", "s", "%"];

/// `text` without its generated sections, fenced code blocks, inline code spans and HTML
/// comments (each replaced by a space, so words on either side stay apart); panics on an
/// unbalanced section.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    // Generated sections.
    while let Some(i) = rest.find("<!-- ") {
        let after = &rest[i + 5..];
        let Some(name) = after
            .split_whitespace()
            .next()
            .and_then(|w| w.strip_suffix(":begin"))
        else {
            out.push_str(&rest[..i + 5]);
            rest = after;
            continue;
        };
        let end = format!("<!-- {name}:end -->");
        let j = after
            .find(&end)
            .unwrap_or_else(|| panic!("section {name} has no end marker"));
        out.push_str(&rest[..i]);
        out.push(' ');
        rest = &after[j + end.len()..];
    }
    out.push_str(rest);
    // Fenced blocks.
    let mut no_fences = String::new();
    let mut fenced = false;
    for line in out.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            no_fences.push_str(line);
            no_fences.push('\n');
        }
    }
    // Inline code and comments.
    let mut clean = String::new();
    let mut parts = no_fences.split('`');
    if let Some(first) = parts.next() {
        clean.push_str(first);
    }
    for (k, part) in parts.enumerate() {
        clean.push(' ');
        if k % 2 == 1 {
            clean.push_str(part);
        }
    }
    while let (Some(i), Some(j)) = (clean.find("<!--"), clean.find("-->")) {
        if j < i {
            break;
        }
        clean.replace_range(i..j + 3, " ");
    }
    clean
}

/// Every figure in `line`: a number (digits, with `.`, `,`, thin spaces or `–` ranges)
/// followed by a unit, or `×` followed by a number; each as it stands in the line.
fn figures(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let starts_number = c.is_ascii_digit()
            && (i == 0
                || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '.' || chars[i - 1] == '_'));
        if c == '×'
            && chars
                .get(i + 1)
                .is_some_and(|d| d.is_ascii_digit() || *d == ' ')
        {
            let mut j = i + 1;
            while j < chars.len()
                && (chars[j].is_ascii_digit() || chars[j] == '.' || chars[j] == ' ')
            {
                j += 1;
            }
            let f: String = chars[i..j].iter().collect();
            if f.trim().len() > 1 && f.chars().any(|d| d.is_ascii_digit()) {
                out.push(f.trim().to_string());
            }
            i = j.max(i + 1);
            continue;
        }
        if !starts_number {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && (chars[j].is_ascii_digit() || ".,\u{202f}–".contains(chars[j])) {
            j += 1;
        }
        let number_end = j;
        while j < chars.len() && chars[j] == ' ' {
            j += 1;
        }
        let tail: String = chars[j..].iter().take(3).collect();
        let unit = UNITS.iter().find(|u| {
            tail.starts_with(*u)
                && !chars
                    .get(j + u.chars().count())
                    .is_some_and(|c| c.is_alphanumeric())
        });
        let times = chars.get(j) == Some(&'×');
        if unit.is_some() || times {
            let len = unit.map_or(1, |u| u.chars().count());
            out.push(chars[i..j + len].iter().collect());
        }
        i = number_end.max(i + 1);
    }
    out
}

/// The figures of `file`'s prose, each with the line it stands in, that [`ALLOWED`] does
/// not allow.
fn stray_figures(file: &str, text: &str) -> Vec<(String, String)> {
    let allowed: Vec<&str> = ALLOWED
        .iter()
        .filter(|(f, _)| *f == file)
        .map(|(_, p)| *p)
        .collect();
    let mut out = Vec::new();
    for line in prose(text).lines() {
        let mut rest = line.to_string();
        for phrase in &allowed {
            rest = rest.replace(phrase, " ");
        }
        for f in figures(&rest) {
            out.push((f, line.trim().to_string()));
        }
    }
    out
}

#[test]
fn the_scanner_finds_figures_and_leaves_code_and_sections_alone() {
    assert_eq!(
        figures("p99 12.11 µs at 0.54 % of a core, 3.319 ms, ×2 the median, 2.6–3.5 ms, 10 ×"),
        ["12.11 µs", "0.54 %", "3.319 ms", "×2", "2.6–3.5 ms", "10 ×"]
    );
    assert!(figures("60 Hz, step 14, 1200 frames, p99, 5ms2, x1.5 µs").is_empty());
    let doc = "a 5 ms wait\n<!-- t:begin -->\n7 ms\n<!-- t:end -->\n`--period 1ms` and\n```sh\nsleep 1s\n```\nend 3 s";
    let p = prose(doc);
    assert_eq!(
        p.lines().flat_map(figures).collect::<Vec<_>>(),
        ["5 ms", "3 s"],
        "{p}"
    );
    let inline = "about <!-- x:begin -->70 s<!-- x:end --> and 15 s";
    assert_eq!(
        prose(inline).lines().flat_map(figures).collect::<Vec<_>>(),
        ["15 s"]
    );
}

#[test]
#[should_panic(expected = "section t has no end marker")]
fn an_unbalanced_section_fails() {
    prose("<!-- t:begin -->\n5 ms");
}

/// The documents this test reads, relative to the repository root: README.md and every
/// text file under docs/ (the screenshot is no text), sorted.
fn documents(root: &Path) -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if std::fs::read_to_string(&path).is_ok() {
                let rel = path.strip_prefix(root).unwrap();
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = vec!["README.md".to_string()];
    walk(&root.join("docs"), root, &mut out);
    out[1..].sort();
    out
}

/// The list of hand figures quoted before this test read all of docs/.
const UNSOURCED: &str = "crates/sleeplab-cli/tests/fixtures/unsourced_figures.txt";

/// The unsourced list: (file, figure) → how many times; lines `FILE<TAB>COUNT<TAB>FIGURE`,
/// `#` comments.
fn unsourced(text: &str) -> BTreeMap<(String, String), usize> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.splitn(3, '\t');
            let (file, count, figure) = (parts.next(), parts.next(), parts.next());
            let count = count.and_then(|c| c.parse().ok());
            match (file, count, figure) {
                (Some(f), Some(n), Some(g)) => ((f.to_string(), g.to_string()), n),
                _ => panic!("{UNSOURCED}: a line is not FILE<TAB>COUNT<TAB>FIGURE: {l:?}"),
            }
        })
        .collect()
}

/// What `found` has beyond `listed` (a new hand figure: each with a line it stands in),
/// and what `listed` has beyond `found` (gone from the prose: the list must shrink).
fn against_list(
    found: &BTreeMap<(String, String), (usize, String)>,
    listed: &BTreeMap<(String, String), usize>,
) -> (Vec<String>, Vec<String>) {
    let mut new = Vec::new();
    let mut gone = Vec::new();
    for ((file, figure), (n, line)) in found {
        let allowed = listed
            .get(&(file.clone(), figure.clone()))
            .copied()
            .unwrap_or(0);
        if *n > allowed {
            new.push(format!(
                "{file}: {figure} ({n}, {allowed} listed) in: {line}"
            ));
        }
    }
    for ((file, figure), n) in listed {
        let now = found
            .get(&(file.clone(), figure.clone()))
            .map_or(0, |f| f.0);
        if now < *n {
            gone.push(format!("{file}\t{n}\t{figure} (now {now})"));
        }
    }
    (new, gone)
}

#[test]
fn the_unsourced_list_only_lets_the_listed_figures_through() {
    let key = |f: &str, g: &str| (f.to_string(), g.to_string());
    let listed = unsourced("# c\ndocs/A.md\t2\t5 ms\n");
    assert_eq!(listed, BTreeMap::from([(key("docs/A.md", "5 ms"), 2)]));
    let found = |n: usize, other: bool| {
        let mut m = BTreeMap::from([(key("docs/A.md", "5 ms"), (n, "a 5 ms wait".to_string()))]);
        if other {
            m.insert(key("docs/A.md", "7 s"), (1, "7 s".into()));
        }
        m
    };
    assert_eq!(against_list(&found(2, false), &listed), (vec![], vec![]));
    let (new, gone) = against_list(&found(2, true), &listed);
    assert!(
        new.len() == 1 && new[0].starts_with("docs/A.md: 7 s (1, 0 listed)") && gone.is_empty()
    );
    let (new, gone) = against_list(&found(3, false), &listed);
    assert!(new.len() == 1 && gone.is_empty(), "{new:?}");
    let (new, gone) = against_list(&found(1, false), &listed);
    assert!(
        new.is_empty() && gone == ["docs/A.md\t2\t5 ms (now 1)"],
        "{gone:?}"
    );
}

#[test]
fn the_docs_quote_figures_only_in_generated_sections() {
    let root = common::repo_root();
    let mut found: BTreeMap<(String, String), (usize, String)> = BTreeMap::new();
    for file in documents(&root) {
        let text = std::fs::read_to_string(root.join(&file)).unwrap();
        for (figure, line) in stray_figures(&file, &text) {
            let e = found.entry((file.clone(), figure)).or_insert((0, line));
            e.0 += 1;
        }
    }
    let list_path = root.join(UNSOURCED);
    let listed = unsourced(&std::fs::read_to_string(&list_path).unwrap());
    let (new, gone) = against_list(&found, &listed);
    if new.is_empty() && !gone.is_empty() && std::env::var_os("SLEEPLAB_BLESS").is_some() {
        // Downwards only: every count here is at most its listed one.
        let head: String = std::fs::read_to_string(&list_path)
            .unwrap()
            .lines()
            .take_while(|l| l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        let body: String = found
            .iter()
            .filter(|(k, _)| listed.contains_key(*k))
            .map(|((f, g), (n, _))| format!("{f}\t{n}\t{g}\n"))
            .collect();
        let tmp = list_path.with_extension("tmp");
        std::fs::write(&tmp, head + &body).unwrap();
        std::fs::rename(&tmp, &list_path).unwrap();
        return;
    }
    assert!(
        new.is_empty(),
        "figures outside a generated section (write them from a script between \
         `<!-- NAME:begin -->` markers, point to the section that has them, or remove the \
         sentence; a design constant goes into ALLOWED with its reason):\n{}",
        new.join("\n")
    );
    assert!(
        gone.is_empty(),
        "{UNSOURCED} lists hand figures the docs no longer quote: lower or remove these \
         lines (SLEEPLAB_BLESS=1 does it), the list only shrinks:\n{}",
        gone.join("\n")
    );
}

#[test]
fn every_allowed_phrase_is_still_there() {
    let root = common::repo_root();
    for (file, phrase) in ALLOWED {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(
            prose(&text).contains(phrase),
            "{file}: the allowed phrase {phrase:?} is gone from its prose: drop it from ALLOWED"
        );
    }
}

#[test]
fn every_section_is_written_by_a_script_bench_all_runs() {
    let root = common::repo_root();
    let listed = std::process::Command::new(root.join("scripts/bench-all.sh"))
        .arg("--list")
        .output()
        .expect("scripts/bench-all.sh --list runs");
    assert!(listed.status.success());
    let listed = String::from_utf8(listed.stdout).unwrap();
    // "scripts/bench-frontier.sh: frontier; README: readme-frontier" → frontier, readme-frontier
    let names: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.split_once(": ").map(|(_, s)| s))
        .flat_map(|s| s.split([',', ';']))
        .map(|n| n.trim().trim_start_matches("README: "))
        .collect();
    for file in documents(&root) {
        let text = std::fs::read_to_string(root.join(&file)).unwrap();
        for chunk in text.split("<!-- ").skip(1) {
            let Some(name) = chunk
                .split_whitespace()
                .next()
                .and_then(|w| w.strip_suffix(":begin"))
            else {
                continue;
            };
            assert!(
                names.contains(&name),
                "{file}: section {name} is written by no script of scripts/bench-all.sh: {names:?}"
            );
        }
    }
}
