"""The one quantile definition of every Python script and report of sleeplab, the same as
the Rust crates' (`crates/sleeplab-stats/src/stats/quantile.rs`, `quantile_ci.rs`;
docs/REPORT.md names it):

* a quantile interpolates linearly between closest ranks (numpy's and pandas' default:
  position q·(n − 1));
* the quantile rule: a q quantile is reported only where n·(1 − q) ≥ 1 (p90 needs 10
  samples, p99 100, p99.9 1000; the median any n ≥ 1), else None ("–" beside n);
* its 95 % interval comes from order statistics: ranks l and u (1-based) from the exact
  Binomial(n, q) distribution with equal tails of 2.5 %; an end whose rank runs off the
  sample is open (None), an interval open at both ends is None;
* two intervals order two values only where they separate (`below`); else the values are
  "indistinguishable in this run";
* a verdict rests on intervals over the units a measurement varies by (blocks, rounds,
  runs: `stats/units.rs`, docs/REPORT.md), never on pooled samples: `units_ci` (a
  quantile's order statistics at the ranks of the effective sample size, the design
  effect measured at the quantile, Korn and Graubard's degrees of freedom) and `ratio_ci`
  (a ratio of sums, e.g. CPU time over wall time, by the ratio estimator and Student's
  t), none below MIN_UNITS units; where only a point value exists the sentence says
  BY_POINT_VALUE.
"""
from __future__ import annotations

import math
import random

from statistics import NormalDist

CI_LEVEL = 0.95
INDISTINGUISHABLE = "indistinguishable in this run"
BY_POINT_VALUE = "by point value"
# The fewest units an interval over units is computed from (stats/units.rs: MIN_UNITS).
MIN_UNITS = 8


def min_samples(q: float) -> int:
    """The fewest samples whose q quantile is reported (1 for the median)."""
    if q <= 0.5:
        return 1
    return max(1, math.ceil(1.0 / (1.0 - q) - 1e-9))


def rank_from_top(n: int, q: float) -> int:
    """Where the q quantile of n samples sits, counted from the largest (1): at or above
    that sample and below the next larger one (linear interpolation at q·(n − 1)). The
    p99 of 100 samples is about the 2nd largest, of 200 the 3rd: where the rule just
    admits a quantile, it is nearly the sample's maximum."""
    return n - math.floor(q * (n - 1))


def ordinal(k: int) -> str:
    """`1st`, `2nd`, `3rd`, `4th`, …, `11th`, `21st`."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def block_note(n: int, q: float, what: str = "frames", unit: str = "block") -> str:
    """What a unit's q quantile rests on, where few samples make it nearly the unit's
    largest: `each block's p99 is of 100 frames: about its 2nd largest`; `` where the
    unit holds 1000 or more samples per 1 − q (the quantile is then well inside)."""
    if n <= 0 or n * (1 - q) >= 10:
        return ""
    name = f"p{100 * q:g}"
    if quantile(list(range(n)), q) is None:
        return f"each {unit}'s {name} needs {min_samples(q)} {what}, a {unit} holds {n}"
    return f"each {unit}'s {name} is of {n} {what}: about its {ordinal(rank_from_top(n, q))} largest"


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


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _ibeta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_quantile(level: float, df: int) -> float:
    """The two-sided `level` quantile of Student's t with `df` degrees of freedom (as
    stats/ci.rs: 0.95 gives the t with 95 % of the mass within ±t), by bisection on the
    CDF."""
    p = 0.5 + level / 2.0
    if df > 100_000:
        return NormalDist().inv_cdf(p)
    cdf = lambda t: 1.0 - 0.5 * _ibeta(df / 2.0, 0.5, df / (df + t * t))  # noqa: E731
    lo, hi = 0.0, 1.0
    while cdf(hi) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2.0


def design_effect(groups, q: float, x: float) -> float:
    """The design effect of `groups` (one list of samples per unit) at their pooled q
    quantile `x`: the variance across units of the share at or below `x` (ratio
    estimator) over the binomial variance; at least 1."""
    k, n = len(groups), sum(len(g) for g in groups)
    below_x = [sum(1 for v in g if v <= x) for g in groups]
    share = sum(below_x) / n
    spread = sum((c - share * len(g)) ** 2 for g, c in zip(groups, below_x))
    clustered = k / (k - 1) * spread / (n * n)
    return max(clustered / (q * (1.0 - q) / n), 1.0)


def units_ci(groups, q: float):
    """The 95 % interval of the pooled q quantile of `groups` (one list per unit: block,
    round, run) over its units, as stats/units.rs computes it: order statistics of the
    pooled sample at the exact binomial ranks of the effective sample size n / deff ×
    (z / t_{k−1})², scaled back to n (low rank down, high rank up). None below MIN_UNITS
    non-empty units, where the effective sample cannot resolve the quantile, or where
    both ends are open."""
    groups = [list(g) for g in groups if len(g)]
    k = len(groups)
    if k < MIN_UNITS:
        return None
    pooled = sorted(v for g in groups for v in g)
    n = len(pooled)
    if n < min_samples(q):
        return None
    pos = q * (n - 1)
    lo_i, hi_i = math.floor(pos), math.ceil(pos)
    x = pooled[lo_i] + (pooled[hi_i] - pooled[lo_i]) * (pos - lo_i)
    deff = design_effect(groups, q, x)
    z = NormalDist().inv_cdf(0.5 + CI_LEVEL / 2.0)
    effective = math.floor(n / deff * (z / t_quantile(CI_LEVEL, k - 1)) ** 2)
    if effective < min_samples(q):
        return None
    scale = n / effective
    lo, hi = ci_ranks(effective, q)
    lo = None if lo is None else min(max(math.floor(lo * scale), 1), n)
    hi = None if hi is None else min(max(math.ceil(hi * scale), 1), n)
    if lo is None and hi is None:
        return None
    return (None if lo is None else pooled[lo - 1], None if hi is None else pooled[hi - 1])


def ratio_ci(num, den):
    """The 95 % interval of sum(num) / sum(den) over units (one pair each: a block's CPU
    time and wall time, a block's late frames and frames): the ratio estimator's variance
    across units and Student's t at k − 1 degrees of freedom, as stats/units.rs (the lower
    end stops at 0 where no `num` is negative). None below MIN_UNITS units or without a
    positive total."""
    k = min(len(num), len(den))
    total = sum(den)
    if k < MIN_UNITS or total <= 0:
        return None
    r = sum(num) / total
    spread = sum((a - r * b) ** 2 for a, b in zip(num, den))
    half = t_quantile(CI_LEVEL, k - 1) * math.sqrt(k / (k - 1) * spread) / total
    low = r - half if any(a < 0 for a in num) else max(r - half, 0.0)
    return (low, r + half)


def share_ci(units):
    """The 95 % interval of a share over units: `units` holds one (k, n) pair per unit
    (round, block, run: k of its n samples counted), the share is sum(k) / sum(n), its
    interval `ratio_ci` over the units, clamped to [0, 1]. None below MIN_UNITS units
    with samples."""
    units = [(k, n) for k, n in units if n > 0]
    c = ratio_ci([float(k) for k, _ in units], [float(n) for _, n in units])
    return None if c is None else (max(c[0], 0.0), min(c[1], 1.0))


def by_unit(pairs):
    """`pairs` of (unit, value) grouped by unit, in the order units first appear: the
    groups `units_ci` takes."""
    out = {}
    for unit, value in pairs:
        out.setdefault(unit, []).append(value)
    return list(out.values())


def counted_by_unit(pairs, ok):
    """Per unit, (values for which `ok` holds, values) of `pairs` (unit, value): the
    (k, n) pairs `share_ci` takes, units in the order they first appear."""
    return [(sum(1 for v in g if ok(v)), len(g)) for g in by_unit(pairs)]


def chunks(values, size: int):
    """`values` (in measurement order) cut into consecutive units of `size` (the last may
    be shorter): the blocks of an interleaved run."""
    size = max(1, int(size))
    return [values[i:i + size] for i in range(0, len(values), size)]


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
    # Where a block's p99 sits: of 100 frames about the 2nd largest, of 200 the 3rd.
    assert rank_from_top(100, 0.99) == 2 and rank_from_top(200, 0.99) == 3
    assert rank_from_top(1000, 0.99) == 11 and rank_from_top(10, 0.9) == 2
    assert [ordinal(k) for k in (1, 2, 3, 4, 11, 12, 13, 21, 102)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "102nd"]
    assert block_note(100, 0.99) == "each block's p99 is of 100 frames: about its 2nd largest"
    assert block_note(150, 0.99, "waits", "round") == "each round's p99 is of 150 waits: about its 3rd largest"
    assert block_note(1000, 0.99) == "" and block_note(0, 0.99) == ""
    assert block_note(50, 0.99) == "each block's p99 needs 100 frames, a block holds 50"
    s = sorted(random.Random(1).random() for _ in range(100))
    assert s[-2] <= quantile(s, 0.99) <= s[-1]
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
    # Student's t at the table's values (stats/ci.rs pins the same).
    for df, t in [(1, 12.706), (9, 2.262), (10, 2.228), (39, 2.023)]:
        assert abs(t_quantile(0.95, df) - t) < 1e-3, (df, t_quantile(0.95, df))
    # The interval over units, the same as stats/units.rs on the same data (its test
    # `the_python_port_agrees`): 12 units of 40 whose level moves from unit to unit.
    groups = cross_check_units()
    assert units_ci(groups, 0.5) == CROSS_CHECK[0.5], units_ci(groups, 0.5)
    assert units_ci(groups, 0.9) == CROSS_CHECK[0.9], units_ci(groups, 0.9)
    assert units_ci(groups, 0.99) == CROSS_CHECK[0.99], units_ci(groups, 0.99)
    assert units_ci(groups[:7], 0.5) is None  # 7 units: too few
    # Where the units do not differ, the interval holds the independent one.
    same = [list(range(1, 51)) for _ in range(40)]
    iid = ci([v for g in same for v in g], 0.5)
    got = units_ci(same, 0.5)
    assert got[0] <= iid[0] and got[1] >= iid[1], (got, iid)
    # A ratio over units: 1 % and 3 % alternating over 10 blocks.
    r = ratio_ci([1.0, 3.0] * 5, [100.0] * 10)
    assert abs(r[1] - 0.02 - 2.262 * math.sqrt(10 / 9 * 10e-4) / 10) < 1e-4, r
    assert ratio_ci([1.0] * 7, [2.0] * 7) is None
    assert ratio_ci([0.0] * 9 + [10.0], [100.0] * 10)[0] == 0.0
    assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]
    assert by_unit([(0, 5), (1, 6), (0, 7)]) == [[5, 7], [6]]
    assert counted_by_unit([(0, 5), (1, 6), (0, 7)], lambda v: v > 5) == [(1, 2), (1, 1)]
    # A share over units: every unit at 100 % is [1, 1]; seven units are too few; one
    # bad unit of ten widens the interval below the pooled (Wilson) one.
    assert share_ci([(50, 50)] * 10) == (1.0, 1.0)
    assert share_ci([(50, 50)] * 7) is None and share_ci([(1, 1)] * 7 + [(0, 0)] * 3) is None
    lo, hi = share_ci([(50, 50)] * 9 + [(25, 50)])
    # r = 0.95, the standard error over units √(10/9 · 562.5) / 500 = 0.05, t(9) = 2.2622
    # (as the Rust ground truth's test): far below the pooled (Wilson) 92.7 % lower end.
    assert abs(lo - (0.95 - 2.2621571628 * 0.05)) < 1e-6 and hi == 1.0, (lo, hi)
    # Against a simulation with a shared offset per unit (docs/REPORT.md): the pooled
    # interval misses the true median far more often than the interval over units.
    rng = random.Random(7)
    truth = 1e3
    pooled_hits = units_hits = 0
    for _ in range(200):
        g = []
        for _ in range(20):
            b = rng.gauss(0.0, 0.5)
            g.append([1e3 * math.exp(b + rng.gauss(0.0, 1.0)) for _ in range(30)])
        pooled_hits += covers(ci([v for u in g for v in u], 0.5), truth)
        units_hits += covers(units_ci(g, 0.5), truth)
    assert pooled_hits < 0.75 * 200 and units_hits >= 0.9 * 200, (pooled_hits, units_hits)


def covers(c, x) -> bool:
    """Whether interval `c` holds `x` (an open end holds everything beyond)."""
    return c is not None and (c[0] is None or c[0] <= x) and (c[1] is None or c[1] >= x)


def cross_check_units():
    """The deterministic data both implementations compute intervals over units of."""
    return [[((i * 37 + j * 101) % 997) + 150 * (i % 4) for j in range(40)] for i in range(12)]


# What stats/units.rs gives on cross_check_units() (its test pins the same numbers).
CROSS_CHECK = {0.5: (608, 836), 0.9: (1066, 1382), 0.99: (1328, None)}


if __name__ == "__main__":
    self_test()
    print("quantiles: self-test passed")
