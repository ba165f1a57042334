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
