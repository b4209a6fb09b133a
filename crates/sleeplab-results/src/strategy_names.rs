//! The precise-sleep strategies a sweep may measure, by name: the library's registry,
//! with the `spin_sleep` crate's contender before `precise`.

use sleeplab::lab::strategies;
use sleeplab::wait;

/// The `spin_sleep` crate's name here.
pub const SPIN_SLEEP: &str = "spin-sleep";

/// Every strategy's name, in listing order (the library's, `spin-sleep` before
/// `precise`).
pub fn strategy_names_all() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = strategies().iter().map(|s| s.name).collect();
    let precise = v.pop();
    v.push(SPIN_SLEEP);
    v.extend(precise);
    v
}

/// The strategies that are not also an OS mechanism of the same name (a sweep's
/// contenders of origin "strategy"), in listing order.
pub fn strategy_names() -> Vec<&'static str> {
    strategy_names_all()
        .into_iter()
        .filter(|n| wait::find(n).is_none())
        .collect()
}
