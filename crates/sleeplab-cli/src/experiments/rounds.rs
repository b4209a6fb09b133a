//! The interleaving `sweep` and `explain` share: rounds over every cell, grouped by
//! load level and timer slack, so a slow drift of the machine spreads over all cells.

use super::Context;
use crate::load::LoadThreads;
use crate::settings::set_slack;
use sleeplab::system::timer_slack_ns;

/// Where a cell sits in the interleaving: its load level (competing busy threads) and
/// its timer slack level (`None`: the thread's own).
pub trait Placed {
    /// `(load, slack)`.
    fn place(&self) -> (usize, Option<u64>);
}

/// What the rounds run over: how many rounds, and the load and timer slack levels.
#[derive(Debug, Clone, Copy)]
pub struct Grid<'a> {
    /// Rounds over every cell.
    pub rounds: u64,
    /// The load levels (competing busy threads).
    pub loads: &'a [usize],
    /// The timer slack levels (`None`: the thread's own).
    pub slacks: &'a [Option<u64>],
}

impl<'a> Grid<'a> {
    /// `rounds` rounds over `loads` × `slacks`.
    pub fn new(rounds: u64, loads: &'a [usize], slacks: &'a [Option<u64>]) -> Self {
        Self {
            rounds,
            loads,
            slacks,
        }
    }
}

/// One visit of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visit {
    /// The round, from 0.
    pub round: u64,
    /// The timer slack in force, ns.
    pub slack_in_force: u64,
}

/// Visits every cell once per round of `grid`: load levels outermost (their busy
/// threads started once per level and round), then timer slack levels (set once per
/// level), then the cells of that load and slack in their order. Checks `ctx`'s stop
/// flag before each cell; returns whether every visit was made.
pub fn interleave<C: Placed>(
    ctx: &Context,
    grid: Grid<'_>,
    cells: &mut [C],
    mut visit: impl FnMut(&mut C, Visit) -> anyhow::Result<()>,
) -> anyhow::Result<bool> {
    for round in 0..grid.rounds {
        for &load in grid.loads {
            let _load = LoadThreads::start(load);
            for &slack in grid.slacks {
                let _guard = set_slack(slack)?;
                let slack_in_force = timer_slack_ns();
                for cell in cells.iter_mut().filter(|c| c.place() == (load, slack)) {
                    if ctx.stopped() {
                        return Ok(false);
                    }
                    visit(
                        cell,
                        Visit {
                            round,
                            slack_in_force,
                        },
                    )?;
                }
            }
        }
    }
    Ok(true)
}

/// Splits `total` into `rounds` near-equal shares; the share of round `r`.
pub fn share(total: u64, rounds: u64, r: u64) -> u64 {
    total / rounds + u64::from(r < total % rounds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::Stop;

    #[test]
    fn shares_add_up() {
        for total in [0u64, 1, 7, 100, 101] {
            for rounds in [1u64, 3, 5] {
                let sum: u64 = (0..rounds).map(|r| share(total, rounds, r)).sum();
                assert_eq!(sum, total);
            }
        }
    }

    struct C(usize, Option<u64>, Vec<u64>);
    impl Placed for C {
        fn place(&self) -> (usize, Option<u64>) {
            (self.0, self.1)
        }
    }

    #[test]
    fn every_cell_once_per_round_and_a_stop_ends_it() {
        let mut cells = vec![C(0, None, vec![]), C(1, None, vec![]), C(0, None, vec![])];
        let ctx = Context::hidden();
        let grid = |loads| Grid::new(2, loads, &[None]);
        let done = interleave(&ctx, grid(&[0, 1]), &mut cells, |c, v| {
            c.2.push(v.round);
            Ok(())
        })
        .unwrap();
        assert!(done);
        assert!(cells.iter().all(|c| c.2 == vec![0, 1]));
        let ctx = Context::hidden().with_stop(Stop::when(|| true));
        let done = interleave(&ctx, grid(&[0]), &mut cells, |_, _| Ok(())).unwrap();
        assert!(!done);
    }
}
