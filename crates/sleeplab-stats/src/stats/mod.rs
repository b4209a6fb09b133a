//! Statistics shared by every experiment, numbers only: a bounded-memory recorder of
//! samples, the summary it produces, confidence intervals (of a mean; of a quantile,
//! from order statistics: [`quantile_ci`]), quantiles under the quantile rule, the named
//! statistics ([`Stat`]) and the re-check of quantiles read from files. What a sentence
//! may say about these numbers lives beside the report (`claim`).

mod ci;
pub mod quantile;
pub mod quantile_ci;
mod recheck;
mod recorder;
mod stat;
mod summary;
pub mod units;

pub use ci::{mean_ci, t_quantile};
pub use quantile::{
    min_samples, quantile_sorted, rank_from_top, resolves, tail_quantile, tail_quantile_i64,
};
pub use quantile_ci::{CI_LEVEL, Ci, ci_below};
pub use recheck::recheck_quantiles;
pub use recorder::{Recorder, RecorderConfig};
pub use stat::Stat;
pub use summary::{Summary, summarize};
pub use units::{MIN_RUNS, MIN_UNITS, Unit, UnitIntervals, ratio_ci};

/// `N` values in 1-2-5 steps from `first`: `first`, 2·`first`, 5·`first`, 10·`first`, …
/// (the grids of requested intervals and of histogram buckets).
pub const fn one_two_five<const N: usize>(first: u64) -> [u64; N] {
    let mut out = [0; N];
    let mut i = 0;
    while i < N {
        let decade = 10u64.pow((i / 3) as u32);
        out[i] = first * decade * [1, 2, 5][i % 3];
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_two_five_steps_through_the_decades() {
        assert_eq!(
            super::one_two_five::<7>(1_000),
            [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000]
        );
        assert_eq!(super::one_two_five::<0>(1), [0u64; 0]);
    }
}
