//! What one cell has measured since the monitor started, in bounded memory: an HDR
//! histogram of wake-up latency and the counters beside it ([`CellRecord`]), and its
//! Prometheus buckets ([`CellRecord::buckets`]).

use hdrhistogram::Histogram;

/// The upper bounds of the exported latency buckets, seconds (`+Inf` follows): 1 µs to
/// 100 ms in 1-2-5 steps, which covers a busy-wait's sub-microsecond lateness and a
/// host stall alike.
pub const BUCKETS_S: &[f64] = &[
    1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 1e-1,
];

/// One cell's measurements. The measuring thread fills a fresh one per burst and merges
/// it into the shared one ([`merge`](Self::merge)), so a scrape never holds up a wait.
#[derive(Debug, Clone)]
pub struct CellRecord {
    /// Wake-up latency, ns (an early wake is recorded as 0 and counted in `early`);
    /// 3 significant digits, so its memory is bounded by the range, not the count.
    hist: Histogram<u64>,
    /// Exact sum of the recorded latencies, ns.
    pub sum_ns: u64,
    /// Wakes that came before their deadline (never, for an honest mechanism).
    pub early: u64,
    /// Periodic deadlines that passed without a wake of their own (overruns).
    pub missed: u64,
    /// Wakes at least the stall threshold late.
    pub stalls: u64,
    /// CPU time of the cell's measuring thread, ns (a total, not a sum of bursts).
    pub cpu_ns: u64,
    /// The precise sleeper's margin after the last burst, ns (precise cells only).
    pub margin_ns: Option<u64>,
    /// Time the precise sleeper spent spinning, ns (precise cells only).
    pub spin_ns: u64,
}

impl Default for CellRecord {
    fn default() -> Self {
        let mut hist = Histogram::new(3).expect("3 significant digits is a valid precision");
        hist.auto(true);
        Self {
            hist,
            sum_ns: 0,
            early: 0,
            missed: 0,
            stalls: 0,
            cpu_ns: 0,
            margin_ns: None,
            spin_ns: 0,
        }
    }
}

impl CellRecord {
    /// Records one wake `lateness_ns` after its deadline (negative: early), counting a
    /// stall when it is at least `stall_ns` late.
    #[inline]
    pub fn record(&mut self, lateness_ns: i64, stall_ns: u64) {
        let late = u64::try_from(lateness_ns).unwrap_or(0);
        self.early += u64::from(lateness_ns < 0);
        self.stalls += u64::from(late >= stall_ns);
        // Auto-resizing: recording a u64 cannot fail.
        let _ = self.hist.record(late);
        self.sum_ns = self.sum_ns.saturating_add(late);
    }

    /// Wakes recorded.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// Adds a burst's record; the totals that are not sums (CPU, margin) are taken
    /// from `burst` when it has them.
    pub fn merge(&mut self, burst: &CellRecord) {
        // Both auto-resize: adding cannot fail.
        let _ = self.hist.add(&burst.hist);
        self.sum_ns = self.sum_ns.saturating_add(burst.sum_ns);
        self.early += burst.early;
        self.missed += burst.missed;
        self.stalls += burst.stalls;
        self.cpu_ns = self.cpu_ns.max(burst.cpu_ns);
        self.margin_ns = burst.margin_ns.or(self.margin_ns);
        self.spin_ns = self.spin_ns.saturating_add(burst.spin_ns);
    }

    /// The count in each bucket of `bounds_s` (seconds, ascending) and last in `+Inf`,
    /// not cumulative (the encoder accumulates); they add up to [`count`](Self::count).
    ///
    /// A histogram bin goes to the first bucket that holds its lowest equivalent value,
    /// so no wake is counted in a bucket below its latency; one within 0.1 % above a
    /// bound may be counted at that bound.
    pub fn buckets(&self, bounds_s: &[f64]) -> Vec<(f64, u64)> {
        let mut out: Vec<(f64, u64)> = bounds_s
            .iter()
            .map(|&b| (b, 0))
            .chain([(f64::INFINITY, 0)])
            .collect();
        for v in self.hist.iter_recorded() {
            let low_s = self.hist.lowest_equivalent(v.value_iterated_to()) as f64 / 1e9;
            let i = bounds_s
                .iter()
                .position(|&b| low_s <= b)
                .unwrap_or(bounds_s.len());
            out[i].1 += v.count_at_value();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_add_up_and_hold_each_value_at_or_above_it() {
        let mut r = CellRecord::default();
        let values = [0, 999, 1_000, 1_001, 4_000, 60_000, 2_000_000, 900_000_000];
        for v in values {
            r.record(v, 1_000_000);
        }
        let b = r.buckets(BUCKETS_S);
        assert_eq!(b.len(), BUCKETS_S.len() + 1);
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
        assert_eq!(r.sum_ns, values.iter().sum::<i64>() as u64);
        assert_eq!(r.stalls, 2, "2 ms and 0.9 s are at least 1 ms late");
    }

    #[test]
    fn early_wakes_count_and_record_zero() {
        let mut r = CellRecord::default();
        r.record(-5, 1_000);
        r.record(5, 1_000);
        assert_eq!((r.early, r.count(), r.sum_ns), (1, 2, 5));
        assert_eq!(r.buckets(BUCKETS_S)[0].1, 2);
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
        assert_eq!(shared.sum_ns, 420);
        assert_eq!((shared.missed, shared.stalls), (6, 2));
        assert_eq!(
            (shared.cpu_ns, shared.margin_ns, shared.spin_ns),
            (50, Some(7), 22)
        );
        assert!(BUCKETS_S.windows(2).all(|w| w[0] < w[1]));
    }
}
