//! The tune section: what each machine setting did to the p99 of the same waits, its
//! change against as is (paired over rounds where the rounds resolve it) as a bar with
//! its interval, and what it cost the whole machine in CPUs.

use super::figure;
use crate::charts::axis::Unit;
use crate::charts::bars::{Bar, Bars};
use crate::charts::color;
use crate::charts::xy::Axis;
use crate::escape;
use crate::html::{Block, Section};
use crate::units::{ns, signed_ns};
use crate::view::Results;
use sleeplab_results::tune::{Arm, ArmCell, TuneData, change_est, sentence};
use sleeplab_stats::{Cell, Table, fmt_ns, interval_text};

/// The tune data of the results (a `tune` run, or a survey's tune stage).
pub fn data<'a>(r: &Results<'a>) -> Option<&'a TuneData> {
    r.first::<TuneData>().map(|(_, d)| d)
}

/// A setting's bar label: its name and its machine-CPU change (`timer-slack (+0.02 CPUs)`).
pub fn label(arm: &Arm) -> String {
    match arm.cpus_change {
        Some(c) => format!("{} ({c:+.2} CPUs)", arm.setting.name),
        None => arm.setting.name.clone(),
    }
}

/// The bars of one wait: per setting, the p99's change against as is with its interval.
fn bars(d: &TuneData, bc: &ArmCell) -> Option<Bars> {
    let bars: Vec<Bar> = d
        .arms
        .iter()
        .filter(|a| !a.is_as_is())
        .enumerate()
        .filter_map(|(i, a)| {
            let c = a.cell_like(bc)?;
            let (e, _) = change_est(c, bc, true)?;
            Some(Bar {
                name: label(a),
                value: e.value,
                whisker: e.ci.and_then(|ci| ci.0.zip(ci.1)),
                color: color(i),
            })
        })
        .collect();
    (!bars.is_empty()).then(|| Bars {
        bars,
        x: Axis::linear(
            format!(
                "change in the p99 lateness of {} {} against as is (bar), its 95 % interval (whisker)",
                bc.mechanism,
                fmt_ns(bc.requested_ns)
            ),
            Unit::Ns,
        ),
        legend: Some(("p99 change".into(), "95 % interval".into())),
    })
}

/// The section, when the results hold a tune run.
pub fn section(r: &Results<'_>) -> Option<Section> {
    let d = data(r)?;
    let base = d.as_is()?;
    let mut blocks = vec![Block::Text(format!(
        "Each machine setting that applies here was put in force in turn, beside \"as is\" (nothing changed), over {} interleaved rounds, and undone after each. A bar is the change of a wait's p99 lateness against as is: the mean of the rounds' paired differences where every round resolves the p99, else the difference of the two settings' p99s; the whisker its 95 % interval. Left of zero is better. Beside each name, the CPUs the whole machine burnt beyond as is's while the setting was in force: busy time, and the time idle CPUs spent polling (an idle state that executes instructions, which /proc/stat counts as idle).",
        d.rounds
    ))];
    for bc in &base.cells {
        let Some(chart) = bars(d, bc) else {
            continue;
        };
        let captions: Vec<String> = d
            .arms
            .iter()
            .filter(|a| !a.is_as_is())
            .filter_map(|a| sentence::arm_sentence(a, a.cell_like(bc)?, bc))
            .map(|s| s.text)
            .collect();
        let id = format!("tune-{}-{}", escape::ident(&bc.mechanism), bc.requested_ns);
        let size = (760, chart.height());
        blocks.push(Block::Figure(figure(
            &id,
            &format!(
                "p99 change of {} {} per setting",
                bc.mechanism,
                fmt_ns(bc.requested_ns)
            ),
            size,
            captions.join(" "),
            |a| chart.draw(a),
        )));
    }
    blocks.push(Block::Table(table(d)));
    Some(Section::new("tune", "Machine settings (tune)", blocks))
}

/// Per setting and wait: p99, its change with interval (and whether paired), the
/// verdict, the machine's CPUs and their change.
fn table(d: &TuneData) -> Table {
    let mut t = Table::new([
        "setting",
        "wait",
        "p99",
        "p99 change",
        "paired",
        "verdict",
        "CPUs",
        "CPU change",
    ]);
    let base = d.as_is();
    for a in &d.arms {
        if let Some(e) = &a.error {
            t.row(vec![
                Cell::Text(a.setting.name.clone()),
                Cell::Warn(format!("not applied: {e}")),
                Cell::Empty,
                Cell::Empty,
                Cell::Empty,
                Cell::Empty,
                Cell::Empty,
                Cell::Empty,
            ]);
            continue;
        }
        for c in &a.cells {
            let change = base
                .and_then(|b| b.cell_like(c))
                .and_then(|bc| change_est(c, bc, true));
            t.row(vec![
                Cell::Text(a.setting.name.clone()),
                Cell::Text(format!("{} {}", c.mechanism, fmt_ns(c.requested_ns))),
                Cell::Num(c.p99_ns.map_or(format!("– (n = {})", c.waits), ns)),
                Cell::Num(change.map_or(String::new(), |(e, _)| {
                    format!("{} {}", signed_ns(e.value), interval_text(e.ci, signed_ns))
                })),
                Cell::Text(match c.p99_change_paired_rounds {
                    Some(k) => format!("{k} rounds"),
                    None if change.is_some() => "no".into(),
                    None => String::new(),
                }),
                Cell::Text(c.verdict.map_or(String::new(), |v| v.word().into())),
                Cell::Num(a.cpus.map_or("–".into(), |v| format!("{v:.2}"))),
                Cell::Num(a.cpus_change.map_or(String::new(), |v| {
                    format!(
                        "{v:+.2} {}",
                        interval_text(a.cpus_change_ci, |x| format!("{x:.2}"))
                    )
                })),
            ]);
        }
    }
    t
}
