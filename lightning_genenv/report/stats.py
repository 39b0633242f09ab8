"""Pure statistics over per-epoch series (``{epoch: value}``), and the number format of the tables.

:func:`aggregate` gives the mean and sample standard deviation over seeds at each x; :func:`first_last`
a run's first and last logged epoch; :func:`moved_toward` whether ``p̂`` ended closer to α than it
began; :func:`paired_difference` the mean of paired differences with its two-sided 95% t interval;
:func:`welch_difference` the difference of two independent samples' means (one run's tasks against another's)
with its Welch 95% interval;
:func:`wilson_interval` the 95% Wilson score interval of a proportion (``evaluate.py``'s accuracies);
:func:`fmt_spread` writes ``mean ± sd``; :func:`t_quantile` Student's t at any two-sided level (a Bonferroni interval
for one of ``m`` comparisons is ``paired_difference(a, b, level=1 - 0.05 / m)``). Nothing here reads files or draws.

Deliberately left out: tests other than these intervals (no p-values), and interpolating series whose epochs differ
(each x averages the seeds that logged it).
"""

from __future__ import annotations

import math
import statistics

NOT_LOGGED = "not logged"


def aggregate(series: list[dict]) -> tuple[list, list[float], list[float | None]]:
    """Mean and sample sd (None with one value) at each x that any series has."""
    xs = sorted({x for s in series for x in s})
    means, sds = [], []
    for x in xs:
        values = [s[x] for s in series if x in s and _finite(s[x])]
        means.append(sum(values) / len(values) if values else math.nan)
        sds.append(statistics.stdev(values) if len(values) > 1 else None)
    return xs, means, sds


# Student's t quantile t_{0.975, df} for df = 1..30; beyond 30 the normal's 1.96 is within 2%.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


def t975(df: int) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` degrees of freedom (df >= 1)."""
    if df < 1:
        raise ValueError(f"t975 needs df >= 1, got {df}")
    return _T975[df - 1] if df <= len(_T975) else 1.96


def _t_two_sided_mass(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with ``df`` degrees of freedom (Abramowitz & Stegun 26.7.3-4, exact)."""
    theta = math.atan(t / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        return s * total
    if df == 1:
        return 2 * theta / math.pi
    term, total = math.cos(theta), math.cos(theta)
    for k in range(1, (df - 1) // 2):
        term *= c2 * (2 * k) / (2 * k + 1)
        total += term
    return 2 / math.pi * (theta + s * total)


def t_quantile(level: float, df: int) -> float:
    """The ``t`` with P(|T| <= t) = ``level`` for ``df`` degrees of freedom (``t_quantile(0.95, 2)`` = 4.303)."""
    if df < 1 or not 0 < level < 1:
        raise ValueError(f"t_quantile needs df >= 1 and 0 < level < 1, got {df}, {level}")
    low, high = 0.0, 1.0
    while _t_two_sided_mass(high, df) < level:
        high *= 2
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if _t_two_sided_mass(mid, df) < level else (low, mid)
    return (low + high) / 2


def paired_difference(a: list[float], b: list[float], level: float = 0.95) -> tuple[float, float, float, int] | None:
    """Mean of ``a[i] - b[i]`` and its t interval over the pairs at ``level`` (95%: the table of :func:`t975`):
    ``(mean, low, high, n)``; None with fewer than two pairs (no interval). ``a`` and ``b`` are paired by position
    (the same seed)."""
    if len(a) != len(b):
        raise ValueError(f"paired_difference needs pairs: {len(a)} values against {len(b)}")
    diffs = [x - y for x, y in zip(a, b)]
    if len(diffs) < 2:
        return None
    mean = sum(diffs) / len(diffs)
    t = t975(len(diffs) - 1) if level == 0.95 else t_quantile(level, len(diffs) - 1)
    half = t * statistics.stdev(diffs) / math.sqrt(len(diffs))
    return mean, mean - half, mean + half, len(diffs)


def welch_difference(a: list[float], b: list[float]) -> tuple[float, float, float, float] | None:
    """Mean of ``a`` minus mean of ``b``, two independent samples, with its two-sided 95% Welch interval:
    ``(difference, low, high, df)`` (the Welch-Satterthwaite ``df``, rounded down for the t quantile); None when
    either sample has fewer than two values or both have no spread."""
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    if va + vb == 0:
        return None
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    diff = statistics.fmean(a) - statistics.fmean(b)
    half = t975(max(math.floor(df + 1e-9), 1)) * math.sqrt(va + vb)  # 1e-9: a df of 3 computed as 2.999...
    return diff, diff - half, diff + half, df


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` out of ``n`` (95% at the default ``z``): unlike the
    normal approximation it stays inside [0, 1] and is not empty at 0 or ``n`` successes."""
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"wilson_interval needs 0 <= successes <= n and n >= 1, got {successes} of {n}")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def clustered_se(clusters: list[list[float]]) -> float:
    """The standard error of a mean over clusters of correlated values (each a seed's candidates), counting each
    cluster once: the sample SD of the cluster means over the square root of their number (at least 2 clusters)."""
    means = [statistics.fmean(c) for c in clusters]
    return statistics.stdev(means) / math.sqrt(len(means))


def centered_within(se: float, width: float) -> float:
    """The chance that a normal estimate whose mean is exactly on its target and whose SD is ``se`` lands within
    ``width`` of it: ``2 Φ(width / se) − 1``."""
    return math.erf(width / (se * math.sqrt(2)))


def _finite(v) -> bool:
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v)


def first_last(series: dict[int, float]) -> tuple[tuple[int, float], tuple[int, float]] | None:
    if not series:
        return None
    epochs = sorted(series)
    return (epochs[0], series[epochs[0]]), (epochs[-1], series[epochs[-1]])


def moved_toward(series: dict[int, float], alpha: float) -> bool | None:
    fl = first_last(series)
    if fl is None or fl[0][0] == fl[1][0]:
        return None
    return abs(fl[1][1] - alpha) < abs(fl[0][1] - alpha)


def fmt(v, count: bool = False) -> str:
    """Three decimals (none from 1000 up, three significant digits below 0.001, e.g. a small KL);
    ``count``: a whole number, one decimal for a mean."""
    if not _finite(v):
        return NOT_LOGGED if v is None else str(v)
    if count:
        return f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"
    if v != 0 and abs(v) < 1e-3:
        return f"{v:.2e}"
    return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.3f}"


def fmt_spread(values: list[float], count: bool = False) -> str:
    values = [v for v in values if _finite(v)]
    if not values:
        return NOT_LOGGED
    mean = sum(values) / len(values)
    if len(values) == 1:
        return fmt(mean, count)
    return f"{fmt(mean, count)} ± {fmt(statistics.stdev(values))}"
