"""scripts/quantiles.py, the quantile definition and interval every Python script and
benchmark report shares, against the same hand-computed values the Rust tests pin
(crates/sleeplab-stats/src/stats/quantile_ci.rs) and the binomial distribution summed term
by term."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
import quantiles  # noqa: E402


def naive_ranks(n: int, q: float) -> tuple[int | None, int | None]:
    cdf, acc = [], 0.0
    for k in range(n + 1):
        acc += math.comb(n, k) * q**k * (1 - q) ** (n - k)
        cdf.append(acc)
    tail = 0.025
    low = max((k for k in range(n + 1) if cdf[k] <= tail), default=None)
    high = next(k for k in range(n + 1) if cdf[k] >= 1 - tail)
    return (None if low is None else low + 1), (high + 1 if high < n else None)


def test_the_hand_computed_ranks_of_the_rust_tests():
    quantiles.self_test()
    assert quantiles.ci_ranks(100, 0.5) == (40, 61)
    assert quantiles.ci_ranks(100, 0.99) == (97, None)
    assert quantiles.ci_ranks(1000, 0.999) == (997, None)


def test_ranks_match_the_binomial_summed_term_by_term():
    rng = random.Random(25)
    for _ in range(150):
        n = rng.randint(1, 900)
        q = rng.choice([0.5, 0.9, 0.99, 0.999])
        assert quantiles.ci_ranks(n, q) == naive_ranks(n, q), (n, q)


def test_linear_interpolation_and_the_rule():
    v = list(range(1, 11))
    assert abs(quantiles.quantile(v, 0.9) - 9.1) < 1e-12  # numpy.quantile(range(1, 11), .9)
    assert quantiles.quantile(v[:9], 0.9) is None  # n·(1 − q) < 1
    rng = random.Random(7)
    for _ in range(200):
        v = [rng.randint(0, 10**6) for _ in range(rng.randint(100, 2000))]
        x = quantiles.quantile(v, 0.99)
        lo, hi = quantiles.ci(v, 0.99)
        # The interval holds its quantile; an open end bounds nothing.
        assert lo <= x and (hi is None or x <= hi)
