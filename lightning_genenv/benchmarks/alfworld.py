"""ALFWorld, single step: expert trajectories of the valid_seen games decomposed into next-action
items (EVALUATION.md; ``alfworld/SOURCE.md``).

The items come from a cache with one line per game, found at ``$GENENV_ALFWORLD_CACHE``, else
``<data_root>/alfworld/expert_steps.jsonl``, else ``<model cache>/alfworld/expert_steps.jsonl`` (the
model cache of :func:`lightning_genenv.models.default_cache_dir`, where the builder writes)::

    {"game": "<game_file>", "task_type": str, "won": bool,
     "initial": "<first observation, with 'Your task is to: ...'>",
     "steps": [{"admissible": [str, ...], "action": str, "observation": str}, ...]}

It is built once by ``python -m lightning_genenv.benchmarks.alfworld_build`` (needs
``alfworld==0.3.5``, see that module). Step ``k`` of a game becomes item ``<game>#<k>``: the initial
observation, the last :data:`HISTORY` (action, observation) pairs before ``k``, the admissible
actions at ``k``, and the expert's action at ``k`` as the gold. Only games the expert won are used,
and the opening ``look`` is not an item: ALFWorld's expert wrapper emits it on reset, before the
expert has planned anything. A cache that lacks some of the manifest's valid_seen games (an
interrupted or ``limit=`` build) is scored as it is, with the missing games counted as skipped
``game_not_in_cache`` and a warning.

Scoring: the first line of the reply, minus a leading ``>`` or ``Action:`` and surrounding quotes,
must equal the expert's action after lowercasing and whitespace normalization. Metrics:
next-action accuracy (overall and per task type) and the share of replies that are admissible.
This item construction follows the paper's one-line description; it is not published code.

Deliberately left out: episodic success rate in the real TextWorld environment (the paper's
single-step protocol does not need it), ReAct-style thoughts, and the valid_unseen split (not in
the shared data).
"""

from __future__ import annotations

import os
import re
import warnings
from collections import Counter
from pathlib import Path

from lightning_genenv.benchmarks.common import (
    Benchmark, BenchItem, BenchmarkDataError, ItemResult, grouped_mean, mean, read_jsonl,
)
from lightning_genenv.models import default_cache_dir
from lightning_genenv.parsing import check_text

CACHE_NAME = "expert_steps.jsonl"
MANIFEST = "MANIFEST.jsonl"  # the shared copy's game list, as the builder reads it
HISTORY = 8  # (action, observation) pairs kept before the current step
MAX_STEPS = 60
SYSTEM_PROMPT = (  # the system message of every step, also of the played episodes (alfworld_episode.py)
    "You are an agent in a text-based household. Read the task and what happened so far, then choose "
    "the next action. It must be exactly one of the admissible actions. Reply with the action only."
)
_PREFIX = re.compile(r"^\s*(?:>\s*|action\s*:\s*|next action\s*:\s*)", re.IGNORECASE)


def cache_path(root: Path) -> Path:
    """The first existing cache location, else the default one (where the builder writes)."""
    env = os.environ.get("GENENV_ALFWORLD_CACHE")
    if env:
        return Path(env)
    default = default_cache_dir() / "alfworld" / CACHE_NAME
    return root / CACHE_NAME if (root / CACHE_NAME).is_file() else default


def _valid_game(rec: dict) -> bool:
    steps = rec.get("steps")
    return (isinstance(rec.get("game"), str) and isinstance(rec.get("initial"), str)
            and isinstance(steps, list) and 0 < len(steps) <= MAX_STEPS
            and all(isinstance(s, dict) and isinstance(s.get("action"), str)
                    and isinstance(s.get("observation"), str) and isinstance(s.get("admissible"), list)
                    and all(isinstance(a, str) for a in s["admissible"]) for s in steps))


def render(initial: str, steps: list[dict], k: int) -> str:
    """The user message for step ``k``: the start, the recent history, the admissible actions."""
    lines = [initial.strip()]
    first = max(0, k - HISTORY)
    if first:
        lines.append(f"({first} earlier steps omitted)")
    for step in steps[first:k]:
        lines.append(f"> {step['action']}\n{step['observation'].strip()}")
    lines.append("Admissible actions: " + "; ".join(steps[k]["admissible"]))
    lines.append("Your next action:")
    return "\n\n".join(lines)


def _games_not_in_cache(root: Path, records: list[dict]) -> int:
    """How many valid_seen games of ``root``'s manifest have no record in the cache (0 without a manifest)."""
    if not (root / MANIFEST).is_file():
        return 0
    cached = {rec.get("game") for rec in records}
    return sum(1 for game in read_jsonl(root / MANIFEST, Counter())
               if game.get("split") == "valid_seen" and game.get("game_file") not in cached)


def load(root: Path, skipped: Counter) -> list[BenchItem]:
    path = cache_path(root)
    if not path.is_file():
        raise BenchmarkDataError(
            f"alfworld: item cache not found: {path}; build it with "
            f"'python -m lightning_genenv.benchmarks.alfworld_build' (needs alfworld==0.3.5)")
    records = read_jsonl(path, skipped)
    missing = _games_not_in_cache(root, records)
    if missing:  # an interrupted or limit= build: score what is there, and say so
        skipped["game_not_in_cache"] += missing
        warnings.warn(f"alfworld: {missing} valid_seen game(s) of {root / MANIFEST} are not in {path}; "
                      f"rerun 'python -m lightning_genenv.benchmarks.alfworld_build' to finish the cache", stacklevel=2)
    items = []
    for rec in records:
        if rec.get("error"):  # the builder could not play this game
            skipped["game_error"] += 1
            continue
        if not _valid_game(rec):
            skipped["bad_record"] += 1
            continue
        if not rec.get("won"):
            skipped["expert_lost"] += 1
            continue
        game_id = rec["game"].split("/")[-2] if rec["game"].count("/") >= 1 else rec["game"]
        for k, step in enumerate(rec["steps"]):
            if k == 0 and step["action"] == "look":  # ALFWorld's wrapper, before the expert plans
                continue
            items.append(BenchItem(
                id=f"{game_id}#{k}",
                messages=[{"role": "system", "content": SYSTEM_PROMPT},
                          {"role": "user", "content": render(rec["initial"], rec["steps"], k)}],
                gold=step["action"],
                meta={"task_type": rec.get("task_type"), "step": k, "admissible": step["admissible"]}))
    return items


def normalize_action(text: str) -> str:
    return " ".join(str(text).lower().split()).strip(" .'\"`")


def parse_action(text: str) -> tuple[str | None, str | None]:
    reason = check_text(text)
    if reason:
        return None, reason
    for line in text.splitlines():
        action = normalize_action(_PREFIX.sub("", line, count=1))
        if action:
            return action, None
    return None, "empty"


def score(item: BenchItem, text: str) -> ItemResult:
    action, reason = parse_action(text)
    if reason:
        return ItemResult(item.id, 0.0, None, reason, {"admissible": False})
    admissible = action in {normalize_action(a) for a in item.meta.get("admissible", [])}
    ok = action == normalize_action(item.gold)
    reason = None if ok else ("wrong_action" if admissible else "not_admissible")
    return ItemResult(item.id, float(ok), action, reason, {"admissible": admissible})


def summarize(items: list[BenchItem], results: list[ItemResult]) -> dict:
    return {
        "metric": "next_action_accuracy",
        "next_action_accuracy": mean([r.score for r in results]),
        "accuracy_by_task_type": grouped_mean(items, results, "task_type"),
        "admissible_rate": mean([float(r.extra.get("admissible", False)) for r in results]),
        "games": len({i.id.split("#")[0] for i in items}),
        "comparable_to_paper": False,
        "paper_protocol_gap": "single-step items built by us from expert trajectories (valid_seen); "
                              "the paper's exact item construction is not published",
    }


BENCHMARK = Benchmark(
    name="alfworld", subdir="alfworld", load=load, score=score, summarize=summarize, max_new_tokens=24,
    notes="Single-step next-action accuracy on expert trajectories of valid_seen (cached JSONL built "
          "with alfworld==0.3.5); exact match after normalization.",
)
