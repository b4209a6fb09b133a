//! Page assembly: a self-contained HTML document (inline CSS, inline SVG, no scripts,
//! no fonts or images to fetch) from a [`Page`] of sections. Every text given here is
//! plain text and escaped on the way out; charts and tables arrive already rendered.

use super::charts::Chart;
use super::escape::{self, html as esc};
use sleeplab_stats::Table;
use std::fmt::Write;

/// The stylesheet, inlined into every page.
pub const CSS: &str = include_str!("style.css");

/// The id of the element that closes every page (the browser test looks for it to know
/// the whole document was parsed).
pub const END_ID: &str = "sleeplab-end";

/// A badge next to the title.
#[derive(Debug, Clone, PartialEq)]
pub struct Badge {
    /// Its text.
    pub text: String,
    /// Good news (green), bad news (red) or neutral.
    pub tone: Tone,
}

/// A badge's colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Neutral grey.
    Neutral,
    /// Green.
    Good,
    /// Red.
    Bad,
}

/// A chart in its figure: the chart (or why it could not be drawn) and its caption.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The chart, or the drawing error.
    pub chart: Result<Chart, String>,
    /// One sentence on what it shows on this machine, with numbers (plain text).
    pub caption: String,
    /// A legend shown above the chart (name, CSS colour), for charts too busy to hold
    /// their own; empty for none.
    pub legend: Vec<(String, String)>,
}

/// A building block of a section.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A paragraph of plain text.
    Text(String),
    /// One chart with its caption, centred.
    Figure(Figure),
    /// Several charts in a grid (small multiples or a pair), with a shared legend
    /// (name, CSS colour; a colour of `dash` draws a dashed grey swatch) and a caption.
    Grid {
        /// The charts (their own captions are ignored; titles are in the charts).
        charts: Vec<Result<Chart, String>>,
        /// The shared legend.
        legend: Vec<(String, String)>,
        /// Two wide columns instead of many narrow ones.
        wide: bool,
        /// The caption under the grid.
        caption: String,
    },
    /// A table of numbers.
    Table(Table),
    /// A small heading inside a section.
    Heading(String),
    /// A bulleted list of plain-text items.
    List(Vec<String>),
    /// Code to copy, under the line that says what it is.
    Code {
        /// The line above the code ("in Rust").
        label: String,
        /// The code, kept as written.
        code: String,
    },
    /// A list folded behind its summary line (`<details>`): the evidence a click away.
    Folded {
        /// The line shown while folded.
        summary: String,
        /// The items.
        items: Vec<String>,
    },
}

/// A section of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// Anchor id (made safe).
    pub id: String,
    /// Title.
    pub title: String,
    /// Its blocks, in order.
    pub blocks: Vec<Block>,
}

impl Section {
    /// The section `id` titled `title`, of `blocks` in order.
    pub fn new(id: impl Into<String>, title: impl Into<String>, blocks: Vec<Block>) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            blocks,
        }
    }
}

/// A whole page.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Page {
    /// The `<title>` and the heading.
    pub title: String,
    /// The line under the heading.
    pub subtitle: String,
    /// Badges after the subtitle.
    pub badges: Vec<Badge>,
    /// Facts about the machine and the run: (label, value).
    pub facts: Vec<(String, String)>,
    /// The answer first (label, sentence): a card above everything else.
    pub answer: Vec<(String, String)>,
    /// The one picture of the machine the answer card shows under its lines.
    pub answer_figure: Option<Figure>,
    /// The findings, in order (folded under the answer).
    pub findings: Vec<String>,
    /// The sections.
    pub sections: Vec<Section>,
    /// Lines of the footer.
    pub footer: Vec<String>,
}

impl Page {
    /// The page as a complete HTML document.
    pub fn render(&self) -> String {
        let mut s = String::with_capacity(256 * 1024);
        s.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        s.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        s.push_str("<meta name=\"generator\" content=\"sleeplab\">\n");
        let _ = writeln!(s, "<title>{}</title>", esc(&self.title));
        let _ = writeln!(s, "<style>\n{CSS}</style>\n</head>\n<body>\n<main>");

        // Header: title, subtitle, badges, facts.
        s.push_str("<header class=\"card\">\n");
        let _ = writeln!(s, "<h1>{}</h1>", esc(&self.title));
        let _ = write!(s, "<p class=\"sub\">{}", esc(&self.subtitle));
        for b in &self.badges {
            let class = match b.tone {
                Tone::Neutral => "badge",
                Tone::Good => "badge ok",
                Tone::Bad => "badge bad",
            };
            let _ = write!(s, " <span class=\"{class}\">{}</span>", esc(&b.text));
        }
        s.push_str("</p>\n");
        if !self.facts.is_empty() {
            s.push_str("<dl class=\"facts\">\n");
            for (k, v) in &self.facts {
                let _ = writeln!(s, "<div><dt>{}</dt><dd>{}</dd></div>", esc(k), esc(v));
            }
            s.push_str("</dl>\n");
        }
        s.push_str("</header>\n");

        if !self.answer.is_empty() {
            s.push_str(
                "<section class=\"card answer\" id=\"answer\">\n<h2>The answer</h2>\n<dl>\n",
            );
            for (label, text) in &self.answer {
                let _ = writeln!(s, "<dt>{}</dt><dd>{}</dd>", esc(label), esc(text));
            }
            s.push_str("</dl>\n");
            if let Some(f) = &self.answer_figure {
                render_block(&mut s, &Block::Figure(f.clone()));
            }
            s.push_str("</section>\n");
        }
        if !self.findings.is_empty() {
            // Folded where an answer opens the page: the answer first, the evidence a
            // click away.
            let open = if self.answer.is_empty() { " open" } else { "" };
            let _ = write!(
                s,
                "<section class=\"card findings\" id=\"findings\">\n<details{open}><summary>\
                 <h2>What this machine says ({} findings)</h2></summary>\n<ol>\n",
                self.findings.len()
            );
            for f in &self.findings {
                let _ = writeln!(s, "<li>{}</li>", esc(f));
            }
            s.push_str("</ol>\n</details>\n</section>\n");
        }

        if self.sections.len() > 1 {
            s.push_str("<nav class=\"toc\">");
            for sec in &self.sections {
                let _ = write!(
                    s,
                    "<a href=\"#{}\">{}</a>",
                    escape::ident(&sec.id),
                    esc(&sec.title)
                );
            }
            s.push_str("</nav>\n");
        }

        for sec in &self.sections {
            let _ = writeln!(
                s,
                "<section class=\"card\" id=\"{}\">\n<h2>{}</h2>",
                escape::ident(&sec.id),
                esc(&sec.title)
            );
            for b in &sec.blocks {
                render_block(&mut s, b);
            }
            s.push_str("</section>\n");
        }

        let _ = writeln!(s, "<footer id=\"{END_ID}\">");
        for line in &self.footer {
            let _ = writeln!(s, "<p>{}</p>", esc(line));
        }
        s.push_str("</footer>\n</main>\n</body>\n</html>\n");
        s
    }
}

fn chart_html(s: &mut String, chart: &Result<Chart, String>) {
    match chart {
        Ok(c) => s.push_str(&c.svg),
        Err(e) => {
            let _ = write!(
                s,
                "<p class=\"error\">This chart could not be drawn: {}</p>",
                esc(e)
            );
        }
    }
}

fn legend_html(s: &mut String, legend: &[(String, String)]) {
    if legend.is_empty() {
        return;
    }
    s.push_str("<div class=\"legend\">");
    for (name, color) in legend {
        if color == "dash" {
            let _ = write!(s, "<span><i class=\"dash\"></i>{}</span>", esc(name));
        } else {
            let _ = write!(
                s,
                "<span><i style=\"background:{}\"></i>{}</span>",
                esc(color),
                esc(name)
            );
        }
    }
    s.push_str("</div>\n");
}

fn render_block(s: &mut String, b: &Block) {
    match b {
        Block::Text(t) => {
            let _ = writeln!(s, "<p>{}</p>", esc(t));
        }
        Block::Heading(t) => {
            let _ = writeln!(s, "<h3>{}</h3>", esc(t));
        }
        Block::Code { label, code } => {
            let _ = writeln!(
                s,
                "<p>{}:</p>\n<pre class=\"code\"><code>{}</code></pre>",
                esc(label),
                esc(code)
            );
        }
        Block::List(items) => {
            s.push_str("<ul class=\"notes\">\n");
            for i in items {
                let _ = writeln!(s, "<li>{}</li>", esc(i));
            }
            s.push_str("</ul>\n");
        }
        Block::Folded { summary, items } => {
            if items.is_empty() {
                return;
            }
            let _ = writeln!(
                s,
                "<details class=\"folded\"><summary>{}</summary>\n<ul class=\"notes\">",
                esc(summary)
            );
            for i in items {
                let _ = writeln!(s, "<li>{}</li>", esc(i));
            }
            s.push_str("</ul>\n</details>\n");
        }
        Block::Figure(f) => {
            legend_html(s, &f.legend);
            s.push_str("<figure class=\"center\">\n");
            chart_html(s, &f.chart);
            let _ = writeln!(s, "<figcaption>{}</figcaption>\n</figure>", esc(&f.caption));
        }
        Block::Grid {
            charts,
            legend,
            wide,
            caption,
        } => {
            legend_html(s, legend);
            let _ = writeln!(s, "<div class=\"grid{}\">", if *wide { " two" } else { "" });
            for c in charts {
                s.push_str("<figure>");
                chart_html(s, c);
                s.push_str("</figure>\n");
            }
            s.push_str("</div>\n");
            if !caption.is_empty() {
                let _ = writeln!(s, "<p class=\"caption\">{}</p>", esc(caption));
            }
        }
        Block::Table(t) => s.push_str(&t.html()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_given_as_text_is_escaped() {
        let evil = "<script>alert(1)</script>\"'&";
        let page = Page {
            title: evil.into(),
            subtitle: evil.into(),
            badges: vec![Badge {
                text: evil.into(),
                tone: Tone::Bad,
            }],
            facts: vec![(evil.into(), evil.into())],
            answer: vec![(evil.into(), evil.into())],
            answer_figure: None,
            findings: vec![evil.into()],
            sections: vec![
                Section::new(
                    evil,
                    evil,
                    vec![
                        Block::Text(evil.into()),
                        Block::Heading(evil.into()),
                        Block::Code {
                            label: evil.into(),
                            code: evil.into(),
                        },
                        Block::List(vec![evil.into()]),
                        Block::Figure(Figure {
                            chart: Err(evil.into()),
                            caption: evil.into(),
                            legend: vec![(evil.into(), evil.into())],
                        }),
                        Block::Grid {
                            charts: vec![Err(evil.into())],
                            legend: vec![(evil.into(), evil.into())],
                            wide: false,
                            caption: evil.into(),
                        },
                    ],
                ),
                Section::new("b", "b", vec![]),
            ],
            footer: vec![evil.into()],
        };
        let h = page.render();
        assert!(!h.contains("<script"), "{h}");
        assert!(h.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;"));
        assert!(h.contains(&format!("<footer id=\"{END_ID}\">")));
    }
}
