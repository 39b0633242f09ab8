"""The schema's check functions: :class:`ConfigError` (one line), :func:`check`, :func:`within` (a numeric
key's interval) and :func:`check_file`, and the bounds every group shares (:data:`MAX_COUNT`, :data:`SEED_MAX`).

Deliberately left out: the keys themselves and their checks (``schema.py``, next to the fields).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional


class ConfigError(ValueError):
    """A config problem, described in one line."""


def check(ok: bool, message: str) -> None:
    """Raise :class:`ConfigError` with ``message`` unless ``ok``: the schema's checks read as a list."""
    if not ok:
        raise ConfigError(message)


def within(group: str, obj: Any, **intervals: str) -> None:
    """Refuse each named field of ``obj`` outside its interval (``"[0, 1]"``, ``"(0, 1e9]"``: brackets
    include the end, parentheses exclude it), or NaN or inf, in one line; None (an optional key unset) passes."""
    for name, interval in intervals.items():
        value = getattr(obj, name)
        if value is None:
            continue
        low, high = (float(x) for x in interval[1:-1].split(","))
        finite = not isinstance(value, float) or math.isfinite(value)  # math.isfinite overflows on huge ints
        ok = (finite and (low < value if interval[0] == "(" else low <= value)
              and (value < high if interval[-1] == ")" else value <= high))
        check(ok, f"{group}.{name}={value} must be in {interval}")


MAX_COUNT = "1e6"  # the upper end of counts with no natural one: a larger value is a typo
SEED_MAX = 2**32 - 1  # Lightning's seed_everything accepts seeds in [0, 2^32 - 1]


def check_file(key: str, path: Optional[str]) -> None:
    check(path is None or Path(path).is_file(), f"{key}={path}: file not found")
