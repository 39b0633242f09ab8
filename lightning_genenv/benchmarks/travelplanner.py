"""TravelPlanner, PARTIAL: only the checks the shipped data allows (``travelplanner/SOURCE.md``).

Data: ``validation_queries_example_evaluation.jsonl`` (the 180 validation queries as text) and the
``database/`` CSVs (accommodations, attractions, restaurants). The model gets the query and writes
the plan directly as a JSON list of per-day objects in the official submission format
(``days, current_city, transportation, breakfast, attraction, lunch, dinner, accommodation``).

What is scored, per plan:

- ``delivered``: the reply holds a non-empty JSON list of day objects with all eight keys;
- ``diverse_restaurants``: no restaurant is used twice;
- ``diverse_attractions``: no attraction is used twice;
- ``non_conflicting_transport``: not both self-driving and a flight, nor both self-driving and taxi;
- ``within_current_city``: every meal, attraction and accommodation is in a city of that day's
  ``current_city``;
- ``within_sandbox_partial``: every restaurant, attraction and accommodation exists in the
  database for its city (flights are NOT checked: the flights table is missing);
- ``minimum_nights``: each accommodation is booked for at least its minimum nights.

These are our re-implementations of six of the eight commonsense checks, some of them only in part.
NOT scored: ``reasonable_city_route`` and ``complete_information`` (they need the structured
``org``/``days`` fields), the flight part of the sandbox check, and all five hard constraints
(budget, room rule, room type, cuisine, transportation), which need the structured query fields and
the flights table. The paper's metric (the mean of CS Micro, CS Macro, HD Micro, HD Macro) therefore
cannot be computed, and the summary reports ``paper_metric: null``; the partial figures are named
``partial_*`` and must not be quoted as the paper's.

Deliberately left out: the LLM post-parser that converts natural-language plans to JSON (the model
must write JSON itself), the tool-using two-stage mode, and the sole-planning mode (its reference
information exists only for the train split here).
"""

from __future__ import annotations

import functools

import csv
import re
from collections import Counter
from pathlib import Path

from lightning_genenv.benchmarks.common import (
    Benchmark, BenchItem, BenchmarkDataError, ItemResult, mean, read_jsonl, require_dir,
)
from lightning_genenv.parsing import check_text, decode_at

QUERIES = "validation_queries_example_evaluation.jsonl"
KEYS = ("current_city", "transportation", "breakfast", "attraction", "lunch", "dinner", "accommodation")
CHECKS = ("diverse_restaurants", "diverse_attractions", "non_conflicting_transport",
          "within_current_city", "within_sandbox_partial", "minimum_nights")
NOT_SCORED = ("reasonable_city_route", "complete_information", "within_sandbox (flights)",
              "hard: budget", "hard: room_rule", "hard: room_type", "hard: cuisine", "hard: transportation")
MAX_DAYS = 30

_SYSTEM = (
    "You are a travel planner. Write a day-by-day plan for the user's trip as a JSON list, one object "
    "per day, with exactly these keys:\n"
    '{"days": 1, "current_city": "from A to B" or "B", "transportation": "Flight Number: ..., from A '
    'to B" or "Self-driving, from A to B" or "Taxi, from A to B" or "-", "breakfast": "Name, City" or '
    '"-", "attraction": "Name, City;Name, City;" or "-", "lunch": "Name, City" or "-", "dinner": '
    '"Name, City" or "-", "accommodation": "Name, City" or "-"}\n'
    "Use real restaurants, attractions and accommodations of the cities visited, never the same "
    "restaurant or attraction twice. Reply with the JSON list only."
)


# ----------------------------------------------------------------------------- data


class Database:
    """Name lookups from the database CSVs, keyed by (normalized name, normalized city)."""

    def __init__(self, root: Path):
        db = require_dir(root / "database", "travelplanner database")
        self.restaurants = {k for k, _ in self._rows(db / "restaurants/clean_restaurant_2022.csv", "Name", "City")}
        self.attractions = {k for k, _ in self._rows(db / "attractions/attractions.csv", "Name", "City")}
        self.accommodations = dict(self._rows(db / "accommodations/clean_accommodations_2022.csv",
                                              "NAME", "city", "minimum nights"))

    @staticmethod
    def _rows(path: Path, name: str, city: str, value: str | None = None):
        try:
            f = open(path, encoding="utf-8", errors="replace", newline="")
        except OSError as e:
            raise BenchmarkDataError(f"cannot read {path}: {e.strerror or e}") from None
        with f:
            for row in csv.DictReader(f):
                if row.get(name) and row.get(city):
                    try:
                        extra = float(row.get(value) or 1) if value else None
                    except ValueError:
                        extra = 1.0
                    yield (_norm(row[name]), _norm(row[city])), extra


def database(root: Path) -> Database:
    """One Database per data directory, built on first use."""
    return _database_at(root.resolve())


@functools.lru_cache(maxsize=None)
def _database_at(root: Path) -> Database:
    return Database(root)


def load(root: Path, skipped: Counter) -> list[BenchItem]:
    path = require_dir(root, "travelplanner") / QUERIES
    if not path.is_file():
        raise BenchmarkDataError(f"travelplanner: query file not found: {path}")
    database(root)  # fail early on a missing database
    items = []
    for rec in read_jsonl(path, skipped):
        query, idx = rec.get("query"), rec.get("idx")
        if not isinstance(query, str) or not query.strip() or not isinstance(idx, int):
            skipped["bad_record"] += 1
            continue
        items.append(BenchItem(
            id=f"validation-{idx}",
            messages=[{"role": "system", "content": _SYSTEM}, {"role": "user", "content": query.strip()}],
            gold=None, meta={"root": str(root)}))
    return items


# ----------------------------------------------------------------------------- parsing


def _norm(s: str) -> str:
    return " ".join(str(s).split()).casefold()


def parse_plan(text: str) -> tuple[list[dict] | None, str | None]:
    """The plan as a list of day dicts (``day`` is accepted for ``days``), or ``(None, reason)``."""
    reason = check_text(text)
    if reason:
        return None, reason
    if "[" not in text:
        return None, "no_plan"
    plan, reason = decode_at(text, text.index("["))
    if reason:
        return None, reason
    return validate_plan(plan)


def validate_plan(plan) -> tuple[list[dict] | None, str | None]:
    if not isinstance(plan, list) or not plan or len(plan) > MAX_DAYS:
        return None, "bad_plan_shape"
    days = []
    for day in plan:
        if not isinstance(day, dict) or not all(isinstance(day.get(k), str) for k in KEYS):
            return None, "bad_plan_shape"
        days.append({k: day[k] for k in KEYS})
    return days, None


def _name_city(entry: str) -> tuple[str, str] | None:
    """``"Name, City; Cost: 14"`` -> (name, city); None for ``-`` or an entry without a city."""
    entry = entry.split(";")[0].strip()
    if not entry or entry == "-" or "," not in entry:
        return None
    name, city = entry.rsplit(",", 1)
    return _norm(name), _norm(city)


def _attractions(entry: str) -> list[tuple[str, str] | None]:
    return [_name_city(a) for a in entry.split(";") if a.strip() and a.strip() != "-"]


def _cities(current_city: str) -> set[str]:
    match = re.match(r"\s*from\s+(.+?)\s+to\s+(.+)", current_city, re.IGNORECASE)
    parts = [match.group(1), match.group(2)] if match else [current_city]
    return {_norm(p) for p in parts}


# ----------------------------------------------------------------------------- checks


def check_plan(plan: list[dict], db: Database) -> dict[str, bool]:
    meals = [_name_city(d[k]) for d in plan for k in ("breakfast", "lunch", "dinner") if d[k].strip() != "-"]
    attractions = [a for d in plan for a in _attractions(d["attraction"])]
    transport = " ".join(d["transportation"].lower() for d in plan)
    named = [m for m in meals if m] + [a for a in attractions if a]

    in_city = True
    for d in plan:
        cities = _cities(d["current_city"])
        entries = [_name_city(d[k]) for k in ("breakfast", "lunch", "dinner", "accommodation")
                   if d[k].strip() != "-"] + _attractions(d["attraction"])
        if any(e is None or e[1] not in cities for e in entries):
            in_city = False

    stays = [_name_city(d["accommodation"]) for d in plan if d["accommodation"].strip() != "-"]
    sandbox = (all(m in db.restaurants for m in meals) and all(a in db.attractions for a in attractions)
               and all(s in db.accommodations for s in stays))

    nights_ok, run, previous = True, 0, None
    for stay in stays + [None]:  # consecutive nights in one place must reach its minimum
        if stay == previous:
            run += 1
            continue
        if previous is not None and run < db.accommodations.get(previous, 1):
            nights_ok = False
        previous, run = stay, 1

    return {
        "diverse_restaurants": len(set(m for m in meals)) == len(meals) and None not in meals,
        "diverse_attractions": len(set(attractions)) == len(attractions) and None not in attractions,
        "non_conflicting_transport": not ("self-driving" in transport and ("flight" in transport or "taxi" in transport)),
        "within_current_city": in_city and all(n is not None for n in named),
        "within_sandbox_partial": sandbox,
        "minimum_nights": nights_ok,
    }


def score(item: BenchItem, text: str) -> ItemResult:
    plan, reason = parse_plan(text)
    if reason:
        return ItemResult(item.id, 0.0, None, reason, {"delivered": False})
    checks = check_plan(plan, database(Path(item.meta["root"])))
    failed = [name for name in CHECKS if not checks[name]]
    return ItemResult(item.id, float(not failed), plan, f"failed_{failed[0]}" if failed else None,
                      {"delivered": True, "checks": checks})


def summarize(items: list[BenchItem], results: list[ItemResult]) -> dict:
    delivered = [r for r in results if r.extra.get("delivered")]
    per_check = {c: mean([float(r.extra["checks"][c]) if r.extra.get("delivered") else 0.0 for r in results])
                 for c in CHECKS}
    passed = sum(sum(r.extra["checks"].values()) for r in delivered)
    return {
        "metric": "partial_commonsense_macro",
        "paper_metric": None,
        "paper_metric_missing_because": "needs the structured query fields and the flights table "
                                        "(see travelplanner/SOURCE.md); hard constraints are not scored",
        "delivery_rate": len(delivered) / len(results) if results else 0.0,
        "partial_commonsense_micro": passed / (len(CHECKS) * len(results)) if results else 0.0,
        "partial_commonsense_macro": mean([r.score for r in results]),
        "partial_checks": per_check,
        "not_scored": list(NOT_SCORED),
        "comparable_to_paper": False,
    }


BENCHMARK = Benchmark(
    name="travelplanner", subdir="travelplanner", load=load, score=score, summarize=summarize,
    max_new_tokens=768,
    notes="PARTIAL: delivery rate and 6 of 8 commonsense checks (partly), no hard constraints; the "
          "paper's TravelPlanner metric is not computed (structured fields and flights table missing).",
)
