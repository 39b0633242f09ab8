"""Reading ``evaluate.py``'s outputs: an evaluation directory's ``summary.json`` with its headline metric.

Shared by the ``bench/`` scripts that tabulate and pair evaluations (``eval_table.py``, ``paired_seeds.py``).

Deliberately left out: ``items.jsonl`` (``bench/paired_items.py`` reads it item by item) and ALFWorld's
``mode=episode`` summaries, which have no headline ``metric``.
"""

from __future__ import annotations

import json
from pathlib import Path


class SummaryError(ValueError):
    """A ``summary.json`` that cannot be read, or that holds no headline metric."""


def read_summary(directory: str | Path) -> dict:
    """An evaluation's ``summary.json``, checked to name its headline (``metric``) and hold it as a number."""
    path = Path(directory) / "summary.json"
    try:
        s = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SummaryError(f"{path}: unreadable ({type(e).__name__}: {e})") from None
    headline = s.get("metric") if isinstance(s, dict) else None
    if not isinstance(headline, str) or not isinstance(s.get(headline), (int, float)):
        raise SummaryError(f"{path}: no headline metric (a mode=episode summary, or not evaluate.py's)")
    return s
