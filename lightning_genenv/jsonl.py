"""Reading JSON Lines files: the package's one reader, lenient or strict.

A path ending in ``.gz`` is read through gzip (archived run files, ``docs/results``); a damaged one is a
:class:`DataError` naming it. Each non-blank line must be one JSON object of at most :data:`MAX_LINE_CHARS`
characters. A line that is not (``line_too_long``, ``not_json``, ``not_an_object``) is a *bad line*, and the
caller chooses what it means:

* lenient, :func:`iter_jsonl` / :func:`read_jsonl_lenient`: bad lines are skipped and counted by reason in a
  :class:`Skipped` (which also keeps the first lines of each reason), so that a bad user file never crashes a
  run; the caller reports the count;
* strict, :func:`read_jsonl_strict`: a :class:`DataError` naming the file and the bad lines (a run's own pools
  and validation files, read back by ``report/`` and ``bench/``, must be whole).

:func:`numbered_objects` gives each object with its line number, for a caller that validates the objects
further and counts its own reasons in the same :class:`Skipped` (:func:`~lightning_genenv.tasks.read_tasks`).

Deliberately left out: writing JSONL (:func:`lightning_genenv.tasks.write_jsonl_atomic`, through
:mod:`lightning_genenv.atomic`), reading a byte range of a file (the pool log verifies its segments' checksums
on bytes first, :mod:`lightning_genenv.pools`), and any schema of the objects.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections import Counter
from pathlib import Path
from typing import Iterator

MAX_LINE_CHARS = 200_000  # a longer line is skipped unread (untrusted content: simulator output, user files)


class DataError(ValueError):
    """A user data file that yields no usable records; reported in one line, never a traceback."""


class Skipped(Counter):
    """Bad records counted by reason (a :class:`Counter`), with the first lines of each reason: what a
    warning or ``check`` names."""

    MAX_PLACES = 3  # lines named per reason

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.places: dict[str, list[tuple[str, int]]] = {}  # reason -> [(file, line), ...]

    def add(self, reason: str, path, lineno: int) -> None:
        self[reason] += 1
        where = self.places.setdefault(reason, [])
        if len(where) < self.MAX_PLACES:
            where.append((str(path), lineno))

    def lines(self, reason: str, with_file: bool = True) -> str:
        """`` (file:3, file:7, ...)`` (or `` (lines 3, 7, ...)``) for ``reason``; empty when none is known."""
        where = self.places.get(reason)
        if not where:
            return ""
        more = ", ..." if self[reason] > len(where) else ""
        if with_file:
            return " (" + ", ".join(f"{p}:{n}" for p, n in where) + more + ")"
        return f" (line{'s' if len(where) > 1 else ''} " + ", ".join(str(n) for _, n in where) + more + ")"

    def describe(self) -> str:
        """``reason: n (file:line, ...)``, most frequent first, on one line."""
        return "; ".join(f"{reason}: {n}{self.lines(reason)}"
                         for reason, n in sorted(self.items(), key=lambda kv: (-kv[1], kv[0])))


def count_bad(skipped: Counter, reason: str, path, lineno: int) -> None:
    """Count one bad line of ``path`` under ``reason``; a :class:`Skipped` also keeps where it was."""
    if isinstance(skipped, Skipped):
        skipped.add(reason, path, lineno)
    else:
        skipped[reason] += 1


def numbered_objects(path: str | Path, skipped: Counter) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for each JSON object of a JSONL file; bad lines counted by reason.
    A file that cannot be opened is a :class:`FileNotFoundError` in one line."""
    opener = gzip.open if str(path).endswith(".gz") else open
    try:
        f = opener(path, "rt", encoding="utf-8", errors="replace")
    except OSError as e:
        raise FileNotFoundError(f"cannot read data file {path}: {e.strerror}") from None
    with f:
        for lineno, line in enumerate(_lines(f, path), 1):
            line = line.strip()
            if not line:
                continue
            if len(line) > MAX_LINE_CHARS:
                count_bad(skipped, "line_too_long", path, lineno)
                continue
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                count_bad(skipped, "not_json", path, lineno)
                continue
            if not isinstance(obj, dict):
                count_bad(skipped, "not_an_object", path, lineno)
                continue
            yield lineno, obj


def _lines(f, path) -> Iterator[str]:
    """The file's lines; a gzip file that is damaged or cut short is a :class:`DataError` naming it."""
    try:
        yield from f
    except (OSError, EOFError, zlib.error) as e:
        raise DataError(f"{path}: not a readable gzip file ({e})") from None


def iter_jsonl(path: str | Path, skipped: Counter | None = None) -> Iterator[dict]:
    """Yield JSON objects from a JSONL file; bad lines are counted in ``skipped`` by reason (and, in a
    :class:`Skipped`, placed by line)."""
    for _, obj in numbered_objects(path, skipped if skipped is not None else Counter()):
        yield obj


def read_jsonl_lenient(path: str | Path) -> tuple[list[dict], Skipped]:
    """Every JSON object of a JSONL file, and its bad lines (skipped) counted by reason."""
    skipped = Skipped()
    return list(iter_jsonl(path, skipped)), skipped


def read_jsonl_strict(path: str | Path) -> list[dict]:
    """Every JSON object of a JSONL file (a run's pools or validation files, read back by ``bench/``); raises
    :class:`DataError` naming the file and its bad lines by reason where any line is not one."""
    records, skipped = read_jsonl_lenient(path)
    if skipped:
        raise DataError(f"{path}: " + "; ".join(f"{n} {reason}{skipped.lines(reason, with_file=False)}"
                                                for reason, n in skipped.items()))
    return records
