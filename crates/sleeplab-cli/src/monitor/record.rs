//! What one cell has measured since the monitor started, in a fixed couple of kilobytes:
//! the wake-up latency counted straight into the exported Prometheus buckets, and the
//! counters beside it ([`CellRecord`]). Recording is a binary search over 16 bounds;
//! copying a record (a burst's merge, a scrape's snapshot) is a memcpy.

use sleeplab_account::{Component, WakeAccount};
use sleeplab_results::Account;

/// The upper bounds of the exported latency buckets, ns (`+Inf` follows): 1 µs to
/// 100 ms in 1-2-5 steps, which covers a busy-wait's sub-microsecond lateness and a
/// host stall alike.
pub const BUCKETS_NS: [u64; 16] = sleeplab_stats::one_two_five(1_000);

/// [`BUCKETS_NS`] in seconds, as the exposition writes them (each the correctly
/// rounded quotient, so `1e-6` exactly).
pub const BUCKETS_S: [f64; BUCKETS_NS.len()] = {
    let mut out = [0.0; BUCKETS_NS.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = BUCKETS_NS[i] as f64 / 1e9;
        i += 1;
    }
    out
};

/// Latencies counted into the exported buckets: a count per bucket of [`BUCKETS_NS`]
/// (latency ≤ the bound and above the previous one; the last for `+Inf`; not
/// cumulative), and their exact sum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Buckets {
    counts: [u64; BUCKETS_NS.len() + 1],
    /// Exact sum of the counted latencies, ns.
    pub sum_ns: u64,
}

impl Buckets {
    /// The bucket a latency of `ns` is counted in: the first whose bound is ≥ `ns`
    /// (Prometheus buckets are `le`); past the last bound, `+Inf` (`BUCKETS_NS.len()`).
    #[inline]
    pub fn index_of(ns: u64) -> usize {
        BUCKETS_NS.partition_point(|&b| b < ns)
    }

    /// Counts one latency of `ns` into its bucket and the sum.
    #[inline]
    pub fn place(&mut self, ns: u64) {
        self.counts[Self::index_of(ns)] += 1;
        self.sum_ns = self.sum_ns.saturating_add(ns);
    }

    /// Latencies counted.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Adds another's counts and sum.
    pub fn add(&mut self, other: &Buckets) {
        for (c, o) in self.counts.iter_mut().zip(other.counts) {
            *c += o;
        }
        self.sum_ns = self.sum_ns.saturating_add(other.sum_ns);
    }

    /// The count in each bucket (upper bound in seconds; `+Inf` last), not cumulative
    /// (the encoder accumulates); they add up to [`count`](Self::count).
    pub fn buckets(&self) -> [(f64, u64); BUCKETS_NS.len() + 1] {
        let mut out = [(f64::INFINITY, 0); BUCKETS_NS.len() + 1];
        for (i, o) in out.iter_mut().enumerate() {
            *o = (
                BUCKETS_S.get(i).copied().unwrap_or(f64::INFINITY),
                self.counts[i],
            );
        }
        out
    }
}

/// One cell's measurements. The measuring thread fills a burst's record and merges it
/// into the shared one ([`merge`](Self::merge)) under a lock held for a copy of this
/// small value, so a scrape never holds up a wait for longer than that.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CellRecord {
    /// Wake latencies (waits or scheduled ticks); an early wake counts as 0.
    pub latency: Buckets,
    /// Wakes that came before their deadline (never, for an honest mechanism).
    pub early: u64,
    /// Periodic deadlines that passed without a wake of their own (overruns).
    pub missed: u64,
    /// Waits or scheduled ticks at least the stall threshold late.
    pub stalls: u64,
    /// CPU time of the cell's measuring thread, ns (a total, not a sum of bursts).
    pub cpu_ns: u64,
    /// The precise sleeper's margin after the last burst, ns (precise cells only).
    pub margin_ns: Option<u64>,
    /// Time the precise sleeper spent spinning, ns (precise cells only).
    pub spin_ns: u64,
    /// With `--trace`: each wake's time per component of its lateness
    /// ([`Component::ALL`] order), one latency per wake and component.
    pub components: [Buckets; Component::COUNT],
    /// With `--trace`: wakes split with every event of their way found.
    pub traced: u64,
    /// With `--trace`: wakes split with an event missing (part of them unexplained).
    pub untraced: u64,
}

impl CellRecord {
    /// Records one wait that woke `lateness_ns` after its deadline (negative: early),
    /// counting a stall when it is at least `stall_ns` late.
    #[inline]
    pub fn record(&mut self, lateness_ns: i64, stall_ns: u64) {
        self.early += u64::from(lateness_ns < 0);
        self.place(lateness_ns, stall_ns);
    }

    /// Records an accounted periodic run: every scheduled tick a wake delivered, each
    /// with its own lateness (a stall counts in every tick it delayed), and the run's
    /// early wakes and missed ticks.
    pub fn record_ticks(&mut self, account: &Account, stall_ns: u64) {
        for tick in &account.ticks {
            self.place(tick.lateness_ns, stall_ns);
        }
        self.early += account.early;
        self.missed += account.missed;
    }

    /// Records the kernel's account of one wake: its time in each component.
    pub fn record_components(&mut self, wake: &WakeAccount) {
        for c in Component::ALL {
            self.components[c.index()].place(wake.parts.get(c));
        }
        if wake.traced {
            self.traced += 1;
        } else {
            self.untraced += 1;
        }
    }

    /// Counts one latency (early: 0) into its bucket, the sum and the stalls.
    #[inline]
    fn place(&mut self, lateness_ns: i64, stall_ns: u64) {
        let late = u64::try_from(lateness_ns).unwrap_or(0);
        self.stalls += u64::from(late >= stall_ns);
        self.latency.place(late);
    }

    /// Waits or scheduled ticks recorded.
    pub fn count(&self) -> u64 {
        self.latency.count()
    }

    /// The latency buckets ([`Buckets::buckets`]).
    pub fn buckets(&self) -> [(f64, u64); BUCKETS_NS.len() + 1] {
        self.latency.buckets()
    }

    /// Adds a burst's record; the totals that are not sums (CPU, margin) are taken
    /// from `burst` when it has them.
    pub fn merge(&mut self, burst: &CellRecord) {
        self.latency.add(&burst.latency);
        self.early += burst.early;
        self.missed += burst.missed;
        self.stalls += burst.stalls;
        self.cpu_ns = self.cpu_ns.max(burst.cpu_ns);
        self.margin_ns = burst.margin_ns.or(self.margin_ns);
        self.spin_ns = self.spin_ns.saturating_add(burst.spin_ns);
        for (c, b) in self.components.iter_mut().zip(&burst.components) {
            c.add(b);
        }
        self.traced += burst.traced;
        self.untraced += burst.untraced;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latency_falls_in_the_bucket_it_is_counted_in() {
        let mut b = Buckets::default();
        for ns in [
            0,
            1_000,
            1_001,
            2_000_000,
            100_000_000,
            100_000_001,
            u64::MAX,
        ] {
            let mut one = Buckets::default();
            one.place(ns);
            let i = one.buckets().iter().position(|&(_, c)| c == 1).unwrap();
            assert_eq!(Buckets::index_of(ns), i, "{ns}");
            b.place(ns);
        }
        assert_eq!(b.count(), 7);
        assert_eq!(Buckets::index_of(u64::MAX), BUCKETS_NS.len());
    }

    #[test]
    fn buckets_add_up_and_hold_each_value_at_or_below_their_bound() {
        let mut r = CellRecord::default();
        let values = [0, 999, 1_000, 1_001, 4_000, 60_000, 2_000_000, 900_000_000];
        for v in values {
            r.record(v, 1_000_000);
        }
        let b = r.buckets();
        assert_eq!(b.iter().map(|x| x.1).sum::<u64>(), r.count());
        assert_eq!(r.count(), values.len() as u64);
        // By hand: 0, 999 and 1000 ns are ≤ 1 µs; 1001 ns ≤ 2 µs; 4 µs ≤ 5 µs;
        // 60 µs ≤ 100 µs; 2 ms ≤ 2 ms; 0.9 s only in +Inf.
        let at = |bound: f64| b.iter().find(|x| x.0 == bound).unwrap().1;
        assert_eq!(at(1e-6), 3);
        assert_eq!(at(2e-6), 1);
        assert_eq!(at(5e-6), 1);
        assert_eq!(at(1e-4), 1);
        assert_eq!(at(2e-3), 1);
        assert_eq!(at(f64::INFINITY), 1);
        assert_eq!(r.latency.sum_ns, values.iter().sum::<i64>() as u64);
        assert_eq!(r.stalls, 2, "2 ms and 0.9 s are at least 1 ms late");
    }

    #[test]
    fn the_bounds_in_seconds_are_written_as_prometheus_writes_them() {
        assert!(BUCKETS_NS.windows(2).all(|w| w[0] < w[1]));
        // The `le` labels: 1-2-5 steps from 1e-06 to 0.1, no rounding noise.
        let le: Vec<String> = BUCKETS_S.iter().map(|s| s.to_string()).collect();
        assert_eq!(le[..4], ["0.000001", "0.000002", "0.000005", "0.00001"]);
        assert_eq!(le[9], "0.001");
        assert_eq!(le[15], "0.1");
    }

    #[test]
    fn early_wakes_count_and_record_zero() {
        let mut r = CellRecord::default();
        r.record(-5, 1_000);
        r.record(5, 1_000);
        assert_eq!((r.early, r.count(), r.latency.sum_ns), (1, 2, 5));
        assert_eq!(r.buckets()[0].1, 2);
    }

    /// A wake that swallowed two ticks counts three: its own and the two before, one
    /// and two periods later; only the run's deadlines are counted.
    #[test]
    fn a_late_wake_counts_every_tick_it_delivered() {
        use crate::ticks::{Schedule, Wake, account};
        // Deadlines at 8, 9, 10 ms; one wake at 10.3 ms standing for all three.
        let wake = [Wake {
            wake_ns: 10_300_000,
            expirations: 3,
        }];
        let run = |ticks| Schedule {
            t0_ns: 7_000_000,
            period_ns: 1_000_000,
            ticks,
        };
        let mut all = CellRecord::default();
        all.record_ticks(&account(&run(3), &wake), 1_000_000);
        assert_eq!(all.count(), 3);
        assert_eq!(all.latency.sum_ns, 300_000 + 1_300_000 + 2_300_000);
        assert_eq!(all.stalls, 2, "1.3 ms and 2.3 ms reach the 1 ms threshold");
        assert_eq!((all.missed, all.early), (2, 0));
        let mut rest = CellRecord::default();
        rest.record_ticks(&account(&run(2), &wake), 1_000_000);
        assert_eq!(rest.count(), 2);
        assert_eq!(
            rest.latency.sum_ns,
            1_300_000 + 2_300_000,
            "the earliest two"
        );
        assert_eq!(rest.missed, 1, "a run of two deadlines with one wake");
        // An early wake is one early wake, its tick recorded as 0.
        let early = [Wake {
            wake_ns: 7_999_000,
            expirations: 1,
        }];
        let mut e = CellRecord::default();
        e.record_ticks(&account(&run(1), &early), 1_000_000);
        assert_eq!(
            (e.count(), e.early, e.latency.sum_ns, e.buckets()[0].1),
            (1, 1, 0, 1)
        );
    }

    #[test]
    fn merge_adds_counts_and_keeps_totals() {
        let mut shared = CellRecord::default();
        let mut burst = CellRecord::default();
        burst.record(10, 100);
        burst.record(200, 100);
        burst.missed = 3;
        burst.cpu_ns = 50;
        burst.margin_ns = Some(7);
        burst.spin_ns = 11;
        shared.merge(&burst);
        shared.merge(&burst);
        assert_eq!(shared.count(), 4);
        assert_eq!(shared.buckets()[0].1, 4);
        assert_eq!(shared.latency.sum_ns, 420);
        assert_eq!((shared.missed, shared.stalls), (6, 2));
        assert_eq!(
            (shared.cpu_ns, shared.margin_ns, shared.spin_ns),
            (50, Some(7), 22)
        );
    }
}
