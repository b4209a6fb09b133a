//! The one renderer of a comparison: a view (the pair or the fleet) says what it shows,
//! as a [`Rendered`]; the terminal text and the page are drawn from it the same way for
//! both, with the same family of sections: a view's own figure (the pair's scatter), the
//! runs compared (their facts side by side, those that differ marked), and the view's
//! table.

use crate::html::{Badge, Block, Page, Section};
use sleeplab_results::model::ResultFile;
use sleeplab_stats::{Cell, Table};

/// One compared result as the page describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// How it is called (its path).
    pub name: String,
    /// Its machine and settings ([`facts`](crate::facts)): a fact that differs
    /// between the runs is marked.
    pub facts: Vec<(String, String)>,
    /// What it is: the experiment, when it started, its file (never marked: they
    /// differ by nature).
    pub about: Vec<(String, String)>,
}

impl Run {
    /// The run of `result`, called `name`.
    pub fn of(name: &str, result: &ResultFile) -> Self {
        Self {
            name: name.to_string(),
            facts: crate::facts(result),
            about: vec![
                ("result".into(), result.data.name().to_string()),
                ("started".into(), result.started_at.clone()),
                ("file".into(), name.to_string()),
            ],
        }
    }
}

/// A view of the matched table (the pair, the fleet): it says what it shows, and the
/// terminal text and the page are drawn from that alike.
pub trait View {
    /// What the view shows, for both renderers.
    fn rendered(&self) -> Rendered;

    /// The view as terminal text.
    #[cfg(test)]
    fn terminal(&self) -> String {
        self.rendered().terminal()
    }

    /// The view as an HTML page.
    #[cfg(test)]
    fn page(&self) -> Page {
        self.rendered().page()
    }
}

/// What a view of the matched table shows, for both renderers.
#[derive(Debug, Clone, Default)]
pub struct Rendered {
    /// The page's title.
    pub title: String,
    /// The page's subtitle.
    pub subtitle: String,
    /// The page's badges.
    pub badges: Vec<Badge>,
    /// Terminal lines above the table.
    pub head: Vec<String>,
    /// The view's table (terminal and page).
    pub table: Table,
    /// The table's section on the page: its id and title.
    pub table_section: (String, String),
    /// A terminal line below the table (what its marks mean).
    pub note: Option<String>,
    /// The view's sentences (terminal, and the page's findings).
    pub sentences: Vec<String>,
    /// The view's own figure, first on the page.
    pub figure: Option<Section>,
    /// The runs compared.
    pub runs: Vec<Run>,
    /// How the runs' column headers call them (`a`, `b`; or their files).
    pub run_labels: Vec<String>,
    /// The page's footer.
    pub footer: String,
}

impl Rendered {
    /// The terminal text: the head, the table, its note, the sentences.
    pub fn terminal(&self) -> String {
        let mut out = String::new();
        for line in self
            .head
            .iter()
            .chain(std::iter::once(&self.table.terminal()))
            .chain(&self.note)
            .chain(&self.sentences)
        {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// The page: the figure, the runs, the table.
    pub fn page(&self) -> Page {
        let mut sections: Vec<Section> = self.figure.iter().cloned().collect();
        sections.push(self.runs_section());
        let (id, title) = self.table_section.clone();
        sections.push(Section {
            id,
            title,
            blocks: vec![Block::Table(self.table.clone())],
        });
        Page {
            title: self.title.clone(),
            subtitle: self.subtitle.clone(),
            badges: self.badges.clone(),
            facts: vec![],
            answer: vec![],
            answer_figure: None,
            findings: self.sentences.clone(),
            sections,
            footer: vec![self.footer.clone()],
        }
    }

    /// The runs side by side, one column each: a fact that is not the same in all of
    /// them is marked in every column.
    fn runs_section(&self) -> Section {
        let mut t = Table::new(std::iter::once(String::new()).chain(self.run_labels.clone()));
        let (facts, about) = self
            .runs
            .first()
            .map_or((&[][..], &[][..]), |r| (&r.facts[..], &r.about[..]));
        for (i, (k, v)) in facts.iter().enumerate() {
            let values: Vec<&str> = self
                .runs
                .iter()
                .map(|r| r.facts.get(i).map_or("", |(_, v)| v.as_str()))
                .collect();
            let differs = values.iter().any(|x| x != v);
            let mut row = vec![Cell::Text(k.clone())];
            row.extend(values.into_iter().map(|x| {
                if differs {
                    Cell::Warn(x.to_string())
                } else {
                    Cell::Text(x.to_string())
                }
            }));
            t.row(row);
        }
        for (i, (k, _)) in about.iter().enumerate() {
            let mut row = vec![Cell::Text(k.clone())];
            row.extend(
                self.runs
                    .iter()
                    .map(|r| Cell::Text(r.about.get(i).map_or(String::new(), |(_, v)| v.clone()))),
            );
            t.row(row);
        }
        Section::new(
            "runs",
            if self.runs.len() == 2 {
                "The two runs".into()
            } else {
                format!("The {} runs", self.runs.len())
            },
            vec![Block::Table(t)],
        )
    }
}
