//! Every published number is reproducible (issue 25): README.md and docs/BENCHMARKS.md
//! quote a measured figure (a number with a unit: ns, µs, ms, s, %, ×) only inside a
//! section a script writes (`<!-- NAME:begin -->` … `<!-- NAME:end -->`, written by
//! scripts/bench_doc.py; `scripts/bench-all.sh --list` names them all). Code (fenced
//! blocks and inline spans: commands, settings, API calls) is not prose; the few design
//! constants prose states (a default, a threshold the tool applies) are allowed one by
//! one in [`ALLOWED`], each with its reason.

mod common;

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
    // The bound crates/sleeplab/tests/estimator_traces.rs asserts.
    ("README.md", "within 1.5× of the"),
    // The intervals every benchmark section states.
    ("docs/BENCHMARKS.md", "95 % interval"),
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
    assert!(figures("60 Hz, issue 14, 1200 frames, p99, 5ms2, x1.5 µs").is_empty());
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

#[test]
fn readme_and_benchmarks_quote_figures_only_in_generated_sections() {
    let root = common::repo_root();
    let mut stray = Vec::new();
    for file in ["README.md", "docs/BENCHMARKS.md"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        for (figure, line) in stray_figures(file, &text) {
            stray.push(format!("{file}: {figure} in: {line}"));
        }
    }
    assert!(
        stray.is_empty(),
        "figures outside a generated section (write them from a script between \
         `<!-- NAME:begin -->` markers, or remove the sentence; a design constant goes \
         into ALLOWED with its reason):\n{}",
        stray.join("\n")
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
    for file in ["README.md", "docs/BENCHMARKS.md"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
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
