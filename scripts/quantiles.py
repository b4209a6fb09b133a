"""The one quantile definition of every Python script and report of sleeplab, the same as
the Rust crates' (`crates/sleeplab-cli/src/stats/quantile.rs`, `quantile_ci.rs`;
docs/REPORT.md names it):

* a quantile interpolates linearly between closest ranks (numpy's and pandas' default:
  position q·(n − 1));
* the quantile rule: a q quantile is reported only where n·(1 − q) ≥ 1 (p90 needs 10
  samples, p99 100, p99.9 1000; the median any n ≥ 1), else None ("–" beside n);
* its 95 % interval comes from order statistics: ranks l and u (1-based) from the exact
  Binomial(n, q) distribution with equal tails of 2.5 %; an end whose rank runs off the
  sample is open (None), an interval open at both ends is None;
* two intervals order two values only where they separate (`below`); else the values are
  "indistinguishable in this run".
"""
from __future__ import annotations

import math

CI_LEVEL = 0.95
INDISTINGUISHABLE = "indistinguishable in this run"


def min_samples(q: float) -> int:
    """The fewest samples whose q quantile is reported (1 for the median)."""
    if q <= 0.5:
        return 1
    return max(1, math.ceil(1.0 / (1.0 - q) - 1e-9))


def quantile(values, q: float):
    """The q quantile of `values` (any order), or None where the rule rejects it."""
    n = len(values)
    if n == 0 or n < min_samples(q):
        return None
    s = sorted(values)
    pos = q * (n - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def _binomial_cdf(n: int, q: float) -> tuple[int, list[float]]:
    """Binomial(n, q)'s CDF over the window of k that holds all but a negligible share of
    its mass: (first k, [F(first), F(first + 1), …]), from the ratios of consecutive terms
    (as the Rust code computes it)."""
    cut = -46.0  # ln(1e-20)
    odds = math.log(q / (1.0 - q))
    mode = min(math.floor((n + 1) * q), n)
    down, k, lw = [], mode, 0.0
    while k > 0:
        lw += math.log(k / (n - k + 1)) - odds
        k -= 1
        if lw < cut:
            k += 1
            break
        down.append(lw)
    first = k
    logs = list(reversed(down)) + [0.0]
    k, lw = mode, 0.0
    while k < n:
        lw += math.log((n - k) / (k + 1)) + odds
        k += 1
        if lw < cut:
            break
        logs.append(lw)
    weights = [math.exp(x) for x in logs]
    total = sum(weights)
    acc, cdf = 0.0, []
    for w in weights:
        acc += w
        cdf.append(min(acc / total, 1.0))
    return first, cdf


def ci_ranks(n: int, q: float) -> tuple[int | None, int | None]:
    """The 1-based ranks of the order statistics that bound the q quantile of n samples
    at 95 %: (low, high), each None where it runs off the sample."""
    if n <= 0 or not 0.0 < q < 1.0:
        return None, None
    tail = (1.0 - CI_LEVEL) / 2.0
    first, cdf = _binomial_cdf(n, q)
    below = first - 1
    for i, f in enumerate(cdf):
        if f <= tail:
            below = first + i
        else:
            break
    low = below + 1 if below >= 0 else None
    k = next((first + i for i, f in enumerate(cdf) if f >= 1.0 - tail), first + len(cdf) - 1)
    return low, (k + 1 if k < n else None)


def ci(values, q: float):
    """The 95 % interval (low, high) of the q quantile of `values`, an open end None; None
    where the rule rejects the quantile or neither end is bounded."""
    n = len(values)
    if quantile(values, q) is None:
        return None
    lo, hi = ci_ranks(n, q)
    if lo is None and hi is None:
        return None
    s = sorted(values)
    return (None if lo is None else s[lo - 1], None if hi is None else s[hi - 1])


def below(a, b) -> bool:
    """Whether interval `a` lies entirely below interval `b` (an open end, or an unknown
    interval, never separates). A fixed value is the interval (v, v)."""
    return a is not None and b is not None and a[1] is not None and b[0] is not None and a[1] < b[0]


def order(a, b) -> str:
    """"below", "above" or INDISTINGUISHABLE: how interval `a` stands against `b`."""
    if below(a, b):
        return "below"
    if below(b, a):
        return "above"
    return INDISTINGUISHABLE


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion k/n, as (low, high) fractions."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def fmt_ci(c, fmt) -> str:
    """`[2.10 µs–6.00 µs]`, `[≥ 2.10 µs]`, `[≤ 6.00 µs]` or `[–]`, each end written by `fmt`."""
    if c is None or (c[0] is None and c[1] is None):
        return "[–]"
    if c[1] is None:
        return f"[≥ {fmt(c[0])}]"
    if c[0] is None:
        return f"[≤ {fmt(c[1])}]"
    return f"[{fmt(c[0])}–{fmt(c[1])}]"


def self_test() -> None:
    """The hand-computed values the Rust tests pin too."""
    assert ci_ranks(100, 0.5) == (40, 61)
    assert ci_ranks(100, 0.99) == (97, None)
    assert ci_ranks(1000, 0.999) == (997, None)
    assert ci_ranks(367, 0.99)[1] is None and ci_ranks(368, 0.99)[1] == 368
    assert ci_ranks(5, 0.5) == (None, None) and ci_ranks(6, 0.5) == (1, 6)
    assert quantile([1, 2, 3, 4], 0.5) == 2.5
    assert quantile([1, 2, 3, 4], 0.9) is None  # n = 4 < 10
    assert abs(quantile(list(range(1, 11)), 0.9) - 9.1) < 1e-12
    assert abs(quantile(list(range(1, 101)), 0.99) - 99.01) < 1e-9
    assert quantile(list(range(1, 100)), 0.99) is None
    assert quantile([7], 0.5) == 7 and quantile([], 0.5) is None
    assert ci(list(range(1, 101)), 0.99) == (97, None)
    assert ci(list(range(1, 101)), 0.5) == (40, 61)
    assert below((1, 2), (3, None)) and not below((1, None), (5, 6)) and not below((1, 2), (2, 4))
    assert order((1, 2), (3, 4)) == "below" and order((3, 4), (1, 2)) == "above"
    assert order((1, 3), (2, 4)) == INDISTINGUISHABLE
    # Wilson: 0 of 1200 is not "no tail", and 12 of 1200 and 36 of 1200 are told apart.
    lo, hi = wilson(0, 1200)
    assert lo == 0.0 and 0.002 < hi < 0.004, (lo, hi)
    assert wilson(12, 1200)[1] < wilson(36, 1200)[0]
    assert wilson(0, 0) == (0.0, 1.0)


if __name__ == "__main__":
    self_test()
    print("quantiles: self-test passed")
