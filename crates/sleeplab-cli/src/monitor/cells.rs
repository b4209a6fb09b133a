//! What the monitor measures: cells of a probe (a way of waiting) and a requested
//! duration, parsed from `--mechanisms` items `NAME[@DURATION]`.

use crate::parse::{Names, ParseError, duration_or_rate_ns};
use sleeplab::wait::{PeriodicMechanism, oneshot, periodic};

/// The prefix that names a periodic mechanism (`tick:clock-nanosleep-abs`): one-shot
/// and periodic registries share names such as `nanosleep`.
pub const TICK_PREFIX: &str = "tick:";

/// The name of the precise sleeper's probe.
pub const PRECISE: &str = "precise";

/// The default `--mechanisms`: a 1 ms absolute periodic wake, nanosleep and a fresh
/// timerfd at 100 µs, and the precise sleeper at 60 Hz.
pub const DEFAULT_MECHANISMS: &str =
    "tick:clock-nanosleep-abs@1ms,nanosleep@100us,timerfd@100us,precise@60hz";

/// A way of waiting the monitor measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// A one-shot wait of the requested duration: latency = elapsed − requested.
    OneShot(&'static oneshot::Mechanism),
    /// A periodic timer with the requested period: latency = wake − programmed expiry.
    Periodic(&'static PeriodicMechanism),
    /// The library's precise sleeper on an absolute 1/period grid: latency = wake −
    /// deadline; its margin and spin time are exported too.
    Precise,
}

/// One measured cell: a probe at a requested duration (or period).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// The probe.
    pub probe: Probe,
    /// The name as given (the `mechanism` label), e.g. `tick:clock-nanosleep-abs`.
    pub name: String,
    /// The requested duration or period, ns.
    pub requested_ns: u64,
}

impl Cell {
    /// The `requested` label: the duration in seconds, as Prometheus writes durations.
    pub fn requested_label(&self) -> String {
        seconds_label(self.requested_ns)
    }
}

/// `ns` as a decimal number of seconds without trailing zeros (`0.0001`, `1`).
pub fn seconds_label(ns: u64) -> String {
    let whole = ns / 1_000_000_000;
    let frac = ns % 1_000_000_000;
    if frac == 0 {
        return whole.to_string();
    }
    let digits = format!("{frac:09}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// Every name `--mechanisms` accepts, for "did you mean" hints.
fn known_names() -> Vec<String> {
    let mut names: Vec<String> = oneshot::mechanisms()
        .iter()
        .filter(|m| m.takes_duration)
        .map(|m| m.name.to_string())
        .collect();
    names.extend(
        periodic::mechanisms()
            .iter()
            .map(|m| format!("{TICK_PREFIX}{}", m.name)),
    );
    names.push(PRECISE.to_string());
    names
}

/// The cells of `items` (`NAME[@DURATION]`): a name without a duration is measured at
/// each of `durations`. Unknown names, bad durations and duplicate cells are errors
/// naming the value.
pub fn parse_cells(items: &[String], durations: &[u64]) -> Result<Vec<Cell>, ParseError> {
    let known = known_names();
    let names = Names::new("mechanism", known.iter().map(String::as_str));
    let mut cells: Vec<Cell> = Vec::new();
    for item in items {
        let (name, at) = match item.split_once('@') {
            Some((n, d)) => (n.trim(), Some(duration_or_rate_ns(d)?)),
            None => (item.trim(), None),
        };
        names.check(name).map_err(|e| ParseError {
            what: "mechanism",
            value: item.clone(),
            reason: e.to_string(),
        })?;
        let probe = probe_of(name).expect("a known name has a probe");
        let requested = at.map_or_else(|| durations.to_vec(), |ns| vec![ns]);
        for ns in requested {
            check_requested(probe, name, ns).map_err(|reason| ParseError {
                what: "mechanism",
                value: item.clone(),
                reason,
            })?;
            let cell = Cell {
                probe,
                name: name.to_string(),
                requested_ns: ns,
            };
            if cells.contains(&cell) {
                return Err(ParseError {
                    what: "mechanism",
                    value: item.clone(),
                    reason: "measured twice at the same duration".into(),
                });
            }
            cells.push(cell);
        }
    }
    Ok(cells)
}

fn probe_of(name: &str) -> Option<Probe> {
    if name == PRECISE {
        return Some(Probe::Precise);
    }
    match name.strip_prefix(TICK_PREFIX) {
        Some(tick) => periodic::find(tick).map(Probe::Periodic),
        None => oneshot::find(name).map(Probe::OneShot),
    }
}

/// Why `probe` cannot run at `ns`, if it cannot.
fn check_requested(probe: Probe, name: &str, ns: u64) -> Result<(), String> {
    match probe {
        Probe::OneShot(m) if !m.accepts(ns) => Err(format!(
            "{name} needs at least {} ns",
            m.min_ns.max(u64::from(!m.takes_duration))
        )),
        Probe::Periodic(m) => m.skip_reason(ns).map_or(Ok(()), Err),
        _ if ns == 0 => Err(format!("{name} needs a period above 0")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(s: &str) -> Vec<String> {
        s.split(',').map(str::to_string).collect()
    }

    #[test]
    fn the_defaults_are_four_cells_at_their_own_durations() {
        let cells = parse_cells(&items(DEFAULT_MECHANISMS), &[1_000_000]).unwrap();
        let got: Vec<(&str, u64)> = cells
            .iter()
            .map(|c| (c.name.as_str(), c.requested_ns))
            .collect();
        assert_eq!(
            got,
            [
                ("tick:clock-nanosleep-abs", 1_000_000),
                ("nanosleep", 100_000),
                ("timerfd", 100_000),
                ("precise", 16_666_667),
            ]
        );
        assert!(matches!(cells[0].probe, Probe::Periodic(m) if m.name == "clock-nanosleep-abs"));
        assert!(matches!(cells[1].probe, Probe::OneShot(m) if m.name == "nanosleep"));
        assert_eq!(cells[3].probe, Probe::Precise);
    }

    #[test]
    fn a_name_without_a_duration_takes_every_duration() {
        let cells = parse_cells(&items("nanosleep,precise@1ms"), &[1_000, 2_000]).unwrap();
        let got: Vec<u64> = cells.iter().map(|c| c.requested_ns).collect();
        assert_eq!(got, [1_000, 2_000, 1_000_000]);
    }

    #[test]
    fn bad_items_name_the_value() {
        let e = parse_cells(&items("nanoslep"), &[1]).unwrap_err();
        assert!(e.to_string().contains("nanoslep") && e.to_string().contains("nanosleep"));
        let e = parse_cells(&items("nanosleep@-1ms"), &[1]).unwrap_err();
        assert!(e.to_string().contains("-1ms"), "{e}");
        let e = parse_cells(&items("nanosleep@1ms,nanosleep@1ms"), &[1]).unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        let e = parse_cells(&items("tick:setitimer@1500ns"), &[1]).unwrap_err();
        assert!(e.to_string().contains("whole microseconds"), "{e}");
        assert!(
            parse_cells(&items("yield"), &[1]).is_err(),
            "yield takes no duration"
        );
    }

    #[test]
    fn labels() {
        assert_eq!(seconds_label(100_000), "0.0001");
        assert_eq!(seconds_label(1_000_000_000), "1");
        assert_eq!(seconds_label(1_500_000_000), "1.5");
        assert_eq!(seconds_label(16_666_667), "0.016666667");
    }
}
