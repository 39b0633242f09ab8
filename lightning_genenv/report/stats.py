"""Pure statistics over per-epoch series (``{epoch: value}``), and the number format of the tables.

:func:`aggregate` gives the mean and sample standard deviation over seeds at each x; :func:`first_last`
a run's first and last logged epoch; :func:`moved_toward` whether ``p̂`` ended closer to α than it
began; :func:`fmt_spread` writes ``mean ± sd``. Nothing here reads files or draws.

Deliberately left out: significance tests or confidence intervals beyond the seed spread, and
interpolating series whose epochs differ (each x averages the seeds that logged it).
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
