//! The statistics a table, chart or sentence can quote, by name, with the sample size
//! each needs (the quantile rule, see [`super::quantile`]).

use super::quantile::min_samples;

/// A statistic of a set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stat {
    /// The smallest sample.
    Min,
    /// The middle sample (even n: the mean of the two middle ones).
    Median,
    /// The arithmetic mean.
    Mean,
    /// The 90th percentile.
    P90,
    /// The 99th percentile.
    P99,
    /// The 99.9th percentile.
    P999,
    /// The largest sample.
    Max,
    /// CPU time over wall time, % of one core (of a run, a block or a round): not a
    /// statistic of the samples a summary holds.
    Cpu,
}

impl Stat {
    /// Its name as tables and sentences write it (`median`, `p99`, `p99.9`).
    pub fn name(self) -> &'static str {
        match self {
            Stat::Min => "min",
            Stat::Median => "median",
            Stat::Mean => "mean",
            Stat::P90 => "p90",
            Stat::P99 => "p99",
            Stat::P999 => "p99.9",
            Stat::Max => "max",
            Stat::Cpu => "CPU",
        }
    }

    /// The quantile it is, for the tail quantiles (p90, p99, p99.9).
    pub fn tail_level(self) -> Option<f64> {
        match self {
            Stat::P90 => Some(0.9),
            Stat::P99 => Some(0.99),
            Stat::P999 => Some(0.999),
            _ => None,
        }
    }

    /// Whether it is a quantile of the sample (median, p90, p99, p99.9): a value with a
    /// 95 % interval from order statistics.
    pub fn is_quantile(self) -> bool {
        matches!(self, Stat::Median | Stat::P90 | Stat::P99 | Stat::P999)
    }

    /// The fewest samples that resolve it: 10, 100, 1000 for the tail quantiles, 1
    /// for the rest.
    pub fn min_samples(self) -> u64 {
        self.tail_level().map_or(1, min_samples)
    }

    /// Whether `n` samples resolve it.
    pub fn resolved_by(self, n: u64) -> bool {
        n >= self.min_samples()
    }

    /// Its interval among a sample's `[median, p90, p99, p99.9, mean]` intervals (`None`
    /// for the statistics that have none there: min, max, CPU).
    pub fn ci_among<T: Copy>(self, cis: [Option<T>; 5]) -> Option<T> {
        let i = match self {
            Stat::Median => 0,
            Stat::P90 => 1,
            Stat::P99 => 2,
            Stat::P999 => 3,
            Stat::Mean => 4,
            Stat::Min | Stat::Max | Stat::Cpu => return None,
        };
        cis[i]
    }
}

impl std::fmt::Display for Stat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_statistic_takes_its_own_interval() {
        let cis = [Some(0), Some(1), Some(2), Some(3), Some(4)];
        let picked =
            [Stat::Median, Stat::P90, Stat::P99, Stat::P999, Stat::Mean].map(|s| s.ci_among(cis));
        assert_eq!(picked, [Some(0), Some(1), Some(2), Some(3), Some(4)]);
        for s in [Stat::Min, Stat::Max, Stat::Cpu] {
            assert_eq!(s.ci_among(cis), None);
        }
    }

    #[test]
    fn names_and_sizes() {
        assert_eq!(Stat::P999.name(), "p99.9");
        assert_eq!(
            [Stat::Median, Stat::P90, Stat::P99, Stat::P999].map(Stat::min_samples),
            [1, 10, 100, 1000]
        );
        assert!(!Stat::P99.resolved_by(99) && Stat::P99.resolved_by(100));
        assert!(Stat::Max.resolved_by(1) && !Stat::Mean.resolved_by(0));
        assert!(Stat::Median.is_quantile() && Stat::P999.is_quantile());
        assert!(!Stat::Mean.is_quantile() && !Stat::Max.is_quantile());
    }
}
