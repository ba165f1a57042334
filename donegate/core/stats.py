"""Small statistics shared by the report and the experiment harness (no SciPy: one formula is enough)."""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials, as (low, high) in [0, 1].

    Chosen over the normal approximation because the rates here sit near 0% or 100% with n of 10-50,
    where the normal interval leaves [0, 1] or collapses to a point.
    """
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= k <= n:
        raise ValueError(f"wilson: k={k} is not within 0..n={n}")
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    if k == 0:  # exact ends: floating point leaves 1e-17 where the formula gives 0
        return (0.0, min(1.0, centre + half))
    if k == n:
        return (max(0.0, centre - half), 1.0)
    return (max(0.0, centre - half), min(1.0, centre + half))


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether two intervals overlap: the difference between two rates is then not shown by the data."""
    return a[0] <= b[1] and b[0] <= a[1]


def newcombe(k1: int, n1: int, k2: int, n2: int, z: float = Z95) -> tuple[float, float]:
    """Newcombe's hybrid score interval (his method 10) for the difference of two rates k1/n1 - k2/n2,
    built from the two Wilson intervals: the difference is told apart from 0 when the interval excludes
    it. Sharper than asking whether the two Wilson intervals overlap (which misses real differences)."""
    if n1 <= 0 or n2 <= 0:
        return (-1.0, 1.0)
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1, z)
    l2, u2 = wilson(k2, n2, z)
    d = p1 - p2
    return (max(-1.0, d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)), min(1.0, d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)))


BOOTSTRAP = 2000  # resamples: the 2.5th and 97.5th percentiles move by well under a percent between seeds


def resampled_means(values: list[float], seed: int, b: int = BOOTSTRAP) -> list[float]:
    """`b` means of `values` resampled with replacement (a fixed seed: the report reads the same every time)."""
    import random

    rnd = random.Random(seed)
    n = len(values)
    return [sum(values[rnd.randrange(n)] for _ in range(n)) / n for _ in range(b)]


def percentile_interval(samples: list[float], level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap samples."""
    s = sorted(samples)
    lo = s[int((1 - level) / 2 * (len(s) - 1))]
    hi = s[int(round((1 + level) / 2 * (len(s) - 1)))]
    return (lo, hi)
