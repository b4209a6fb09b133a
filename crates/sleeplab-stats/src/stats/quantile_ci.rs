//! Distribution-free 95 % confidence intervals of quantiles, from order statistics.
//!
//! For `n` samples of a continuous distribution, the number `B` of samples at or below
//! its true `q` quantile is Binomial(n, q). The order statistics `x₍l₎ ≤ x₍u₎` (1-based
//! ranks) enclose that quantile with probability `P(l ≤ B ≤ u − 1)`. The ranks are chosen
//! with equal tails from the exact binomial distribution (no bootstrap, no normal
//! approximation): `l − 1` is the largest `k` with `P(B ≤ k) ≤ 2.5 %`, `u − 1` the
//! smallest `k` with `P(B ≤ k) ≥ 97.5 %`. Coverage is therefore at least 95 %, whatever
//! the distribution.
//!
//! **Open ends.** A rank can run off the sample: with `n = 100`, `P(B = 100) = 0.99¹⁰⁰ =
//! 37 %`, so no order statistic bounds the p99 from above with 97.5 % confidence; the
//! interval is then open there ("at least `x₍97₎`"). JSON writes the open end as `null`
//! (`[low, null]`); the screen writes `≥ low` (or `≤ high`). An interval that is open at
//! both ends says nothing and is `None` (JSON `null`), as is the interval of a quantile
//! its sample cannot resolve (the quantile rule, [`super::quantile`]). The upper end of a
//! p99 closes from n = 368 on (`0.99ⁿ ≤ 2.5 %`), of a p99.9 from n = 3688.
//!
//! Quantiles read from the HDR histogram (a recorder past its raw cap) take their
//! interval from the histogram's ranks too ([`ci_by_rank`] with its value at a rank).

use super::quantile::resolves;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The confidence of every quantile interval.
pub const CI_LEVEL: f64 = 0.95;

/// A 95 % interval `[low, high]` of a quantile; an end is `None` where it is open (the
/// rank runs off the sample: unbounded on that side). Serialized as a two-element array.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ci(pub Option<f64>, pub Option<f64>);

impl Ci {
    /// A fixed value (a threshold, a tolerance): an interval of one point.
    pub fn exact(v: f64) -> Self {
        Self(Some(v), Some(v))
    }

    /// The lower end (`None`: unbounded below).
    pub fn low(&self) -> Option<f64> {
        self.0
    }

    /// The upper end (`None`: unbounded above).
    pub fn high(&self) -> Option<f64> {
        self.1
    }

    /// Whether this interval lies entirely below `other` (its upper end under the
    /// other's lower end; an open end never separates).
    pub fn below(&self, other: &Ci) -> bool {
        matches!((self.1, other.0), (Some(h), Some(l)) if h < l)
    }

    /// Whether the two intervals are disjoint: one lies entirely below the other.
    pub fn separated(&self, other: &Ci) -> bool {
        self.below(other) || other.below(self)
    }

    /// Both ends mapped by `f` (a monotone increasing map: a scale, a shift).
    pub fn map(self, f: impl Fn(f64) -> f64) -> Self {
        Self(self.0.map(&f), self.1.map(&f))
    }
}

/// Whether `a` lies entirely below `b`, where either may be unknown (`None`: nothing is
/// separated from an unknown interval).
pub fn ci_below(a: Option<Ci>, b: Option<Ci>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a.below(&b))
}

/// The 1-based ranks of the order statistics that bound the `q` quantile of `n` samples
/// at [`CI_LEVEL`]: `(low, high)`, each `None` where it runs off the sample.
pub fn ci_ranks(n: u64, q: f64) -> (Option<u64>, Option<u64>) {
    if n == 0 || !(0.0..1.0).contains(&q) || q <= 0.0 {
        return (None, None);
    }
    let tail = (1.0 - CI_LEVEL) / 2.0;
    let (first, cdf) = binomial_cdf(n, q);
    // l − 1 = the largest k with F(k) ≤ tail; below the window F is ~0, so at least
    // first − 1 (−1 when the window starts at 0: no lower rank).
    let mut below = first as i64 - 1;
    for (i, &f) in cdf.iter().enumerate() {
        if f <= tail {
            below = (first + i as u64) as i64;
        } else {
            break;
        }
    }
    let low = (below >= 0).then(|| below as u64 + 1);
    // u − 1 = the smallest k with F(k) ≥ 1 − tail (F is 1 at the window's top).
    let k = cdf
        .iter()
        .position(|&f| f >= 1.0 - tail)
        .map_or(first + cdf.len() as u64 - 1, |i| first + i as u64);
    let high = (k < n).then_some(k + 1);
    (low, high)
}

/// Binomial(n, q)'s CDF over the window of k that holds all but a negligible share of its
/// mass (every term within a factor 1e-20 of the mode's): `(first k, F(first + i))`.
/// Terms come from the ratio of consecutive terms, normalized by their sum, so no
/// factorial of a large n is ever formed.
fn binomial_cdf(n: u64, q: f64) -> (u64, Vec<f64>) {
    const CUT: f64 = -46.0; // ln(1e-20)
    let odds = (q / (1.0 - q)).ln();
    let mode = (((n + 1) as f64 * q).floor() as u64).min(n);
    // ln of each term relative to the mode's, walking down, then up.
    let mut down = Vec::new();
    let (mut k, mut lw) = (mode, 0.0f64);
    while k > 0 {
        // w(k−1)/w(k) = k / (n − k + 1) · (1 − q)/q
        lw += (k as f64 / (n - k + 1) as f64).ln() - odds;
        k -= 1;
        if lw < CUT {
            k += 1;
            break;
        }
        down.push(lw);
    }
    let first = k;
    let mut logs: Vec<f64> = down.into_iter().rev().collect();
    logs.push(0.0);
    let (mut k, mut lw) = (mode, 0.0f64);
    while k < n {
        // w(k+1)/w(k) = (n − k)/(k + 1) · q/(1 − q)
        lw += ((n - k) as f64 / (k + 1) as f64).ln() + odds;
        k += 1;
        if lw < CUT {
            break;
        }
        logs.push(lw);
    }
    let weights: Vec<f64> = logs.iter().map(|l| l.exp()).collect();
    let total: f64 = weights.iter().sum();
    let mut acc = 0.0;
    let cdf = weights
        .iter()
        .map(|w| {
            acc += w;
            (acc / total).min(1.0)
        })
        .collect();
    (first, cdf)
}

/// The interval of the `q` quantile of `n` samples whose `k`-th smallest (1-based) is
/// `value_at(k)`; `None` where the quantile rule rejects the quantile or both ends are
/// open.
pub fn ci_by_rank(n: u64, q: f64, value_at: impl Fn(u64) -> f64) -> Option<Ci> {
    if !resolves(n, q) {
        return None;
    }
    match ci_ranks(n, q) {
        (None, None) => None,
        (l, u) => Some(Ci(l.map(&value_at), u.map(&value_at))),
    }
}

/// The interval of the `q` quantile of `sorted` (ascending), each value read as `f`
/// gives it.
pub fn ci_sorted<T: Copy>(sorted: &[T], q: f64, f: impl Fn(T) -> f64) -> Option<Ci> {
    ci_by_rank(sorted.len() as u64, q, |k| f(sorted[k as usize - 1]))
}

/// The interval of the `q` quantile of sorted nanoseconds.
pub fn ci_sorted_u64(sorted: &[u64], q: f64) -> Option<Ci> {
    ci_sorted(sorted, q, |v| v as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use statrs::function::factorial::ln_binomial;

    /// P(B ≤ k) for B ~ Binomial(n, q), summed term by term (independent of the window).
    fn naive_cdf(n: u64, q: f64, k: u64) -> f64 {
        (0..=k)
            .map(|j| {
                (ln_binomial(n, j) + j as f64 * q.ln() + (n - j) as f64 * (1.0 - q).ln()).exp()
            })
            .sum()
    }

    fn naive_ranks(n: u64, q: f64) -> (Option<u64>, Option<u64>) {
        let tail = (1.0 - CI_LEVEL) / 2.0;
        let low = (0..=n)
            .take_while(|&k| naive_cdf(n, q, k) <= tail)
            .last()
            .map(|k| k + 1);
        let k = (0..=n)
            .find(|&k| naive_cdf(n, q, k) >= 1.0 - tail)
            .unwrap_or(n);
        (low, (k < n).then_some(k + 1))
    }

    #[test]
    fn hand_computed_ranks() {
        // The median of 100: the 40th and 61st smallest (P(B ≤ 39) = 1.76 %, P(B ≤ 40) =
        // 2.84 %; P(B ≤ 59) = 97.16 %, P(B ≤ 60) = 98.24 %).
        assert_eq!(ci_ranks(100, 0.5), (Some(40), Some(61)));
        // p99 of 100: P(B ≤ 96) = P(≥ 4 of 100 above) = 1.84 %, P(B ≤ 97) = 7.94 %: the
        // 97th smallest; P(B = 100) = 0.99¹⁰⁰ = 36.6 % > 2.5 %: the upper rank runs off.
        assert_eq!(ci_ranks(100, 0.99), (Some(97), None));
        // p99.9 of 1000: the same Poisson-like tail, the 997th smallest, open above.
        assert_eq!(ci_ranks(1000, 0.999), (Some(997), None));
        // The upper end of a p99 closes once 0.99ⁿ ≤ 2.5 %: n = 368 (0.99³⁶⁷ = 2.501 %),
        // at the largest sample.
        assert_eq!(ci_ranks(367, 0.99).1, None);
        assert_eq!(ci_ranks(368, 0.99).1, Some(368));
        assert_eq!(ci_ranks(3688, 0.999).1, Some(3688));
        assert_eq!(ci_ranks(3687, 0.999).1, None);
        // A median of 5: P(B = 0) = 3.1 % > 2.5 %: open at both ends.
        assert_eq!(ci_ranks(5, 0.5), (None, None));
        assert_eq!(ci_ranks(6, 0.5), (Some(1), Some(6)));
    }

    #[test]
    fn intervals_from_samples_and_their_null_cases() {
        let s: Vec<u64> = (1..=100).collect();
        assert_eq!(ci_sorted_u64(&s, 0.99), Some(Ci(Some(97.0), None)));
        assert_eq!(ci_sorted_u64(&s, 0.5), Some(Ci(Some(40.0), Some(61.0))));
        // The quantile rule first: no p99 of 99 samples, so no interval.
        assert_eq!(ci_sorted_u64(&s[..99], 0.99), None);
        // Open at both ends: null.
        assert_eq!(ci_sorted_u64(&[1, 2, 3, 4, 5], 0.5), None);
        assert_eq!(ci_sorted_u64(&[], 0.5), None);
        let s: Vec<u64> = (1..=1000).collect();
        assert_eq!(ci_sorted_u64(&s, 0.999), Some(Ci(Some(997.0), None)));
        // Signed values through the same ranks.
        let v: Vec<i64> = (-50..50).collect();
        assert_eq!(
            ci_sorted(&v, 0.5, |x| x as f64),
            Some(Ci(Some(-11.0), Some(10.0)))
        );
    }

    #[test]
    fn separation_needs_closed_ends() {
        let a = Ci(Some(1.0), Some(2.0));
        let b = Ci(Some(3.0), None);
        assert!(a.below(&b) && a.separated(&b) && b.separated(&a) && !b.below(&a));
        assert!(!Ci(Some(1.0), None).separated(&Ci(Some(5.0), None)));
        assert!(
            !a.separated(&Ci(Some(2.0), Some(4.0))),
            "touching ends overlap"
        );
        assert!(Ci::exact(5.0).below(&Ci(Some(5.5), Some(6.0))));
        assert!(!ci_below(None, Some(b)) && ci_below(Some(a), Some(b)));
    }

    #[test]
    fn large_samples_are_fast_and_centred() {
        // 18 M samples (the size that once hung the t quantile): ranks within a few
        // standard deviations of n·q, computed at once.
        let n = 18_000_000u64;
        for q in [0.5, 0.9, 0.99, 0.999] {
            let (l, u) = ci_ranks(n, q);
            let (l, u) = (l.unwrap() as f64, u.unwrap() as f64);
            let (mid, sd) = (n as f64 * q, (n as f64 * q * (1.0 - q)).sqrt());
            assert!((mid - l - 1.96 * sd).abs() < 3.0, "{q}: low rank {l}");
            assert!((u - mid - 1.96 * sd).abs() < 3.0, "{q}: high rank {u}");
        }
    }

    proptest! {
        /// The ranks equal those of the binomial CDF summed term by term.
        #[test]
        fn ranks_match_the_exact_binomial(n in 1u64..1500, which in 0usize..4) {
            let q = [0.5, 0.9, 0.99, 0.999][which];
            prop_assert_eq!(ci_ranks(n, q), naive_ranks(n, q), "n {} q {}", n, q);
        }

        /// Every interval holds its quantile (linear interpolation lies between the order
        /// statistics around it, which lie within the ranks).
        #[test]
        fn the_interval_holds_its_quantile(mut v in proptest::collection::vec(0u64..1_000_000, 1..3000), which in 0usize..4) {
            let q = [0.5, 0.9, 0.99, 0.999][which];
            v.sort_unstable();
            if let Some(ci) = ci_sorted_u64(&v, q) {
                let x = super::super::tail_quantile(&v, q).unwrap();
                prop_assert!(ci.low().is_none_or(|l| l <= x) && ci.high().is_none_or(|h| h >= x));
            }
        }
    }
}
