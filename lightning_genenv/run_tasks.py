"""The base seeds and the validation tasks of a run, from the ``data`` config group.

The seeds are the embedded ones (:mod:`lightning_genenv.seeds`), a JSONL file (``data.train_path``;
without ``data.val_path`` a share of it is held out for validation), or a benchmark's train part
(``data.benchmark``, :mod:`lightning_genenv.benchmarks.train_seeds`, whose held-out part is then the
validation set; ``data=paper``: the train parts of every benchmark in ``PAPER_MIX`` together, their
held-out parts the validation set). The embedded seeds' held-out set is topped up to ``data.num_held_out``
tasks of the same families (:func:`lightning_genenv.seeds.top_up_held_out`). ``data.families`` keeps some
families; ``data.num_val`` caps the validation set, evenly over the benchmarks when it holds several
(:func:`cap_validation`); ``data.num_val_subset`` picks the fixed subset validated after each epoch but the
last (:func:`validation_subset`).
Invalid records are skipped and counted by reason; the warning names the first lines of each reason.

Deliberately left out: the pools that grow from the seeds (:mod:`lightning_genenv.data`).
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from lightning.pytorch.utilities import rank_zero_info, rank_zero_warn

from lightning_genenv.config import PAPER_MIX
from lightning_genenv.tasks import DataError, Skipped, Task, read_tasks


def benchmark_of(family: str) -> str | None:
    """The benchmark a converted task's family names (``api_bank/<tool>``, ``bfcl/<class>``, ``bamboogle``:
    :mod:`lightning_genenv.benchmarks.train_seeds`); None for any other family."""
    head = family.split("/", 1)[0]
    return head if head in PAPER_MIX else None


def per_benchmark(by_family: dict[str, list[float]]) -> dict[str, list[float]]:
    """Per-family scores pooled per benchmark, for the benchmarks whose families are several
    (``api_bank/<tool>``, ``bfcl/<class>``); Bamboogle's one family is its benchmark already."""
    pooled: dict[str, list[float]] = {}
    for family, scores in sorted(by_family.items()):
        bench = benchmark_of(family)
        if bench is not None and bench != family:
            pooled.setdefault(bench, []).extend(scores)
    return pooled


def load_seeds(cfg, skipped: Counter, benchmarks_root: str | Path | None = None) -> tuple[list[Task], list[Task]]:
    """``(base seeds, validation tasks)`` for the ``data`` group ``cfg``; skipped records are counted in
    ``skipped``. ``benchmarks_root``: ``data.benchmark``'s data (None: ``../shared/benchmarks``)."""
    base: list[Task] = []
    val: list[Task] = []
    if cfg.train_path:
        base = read_tasks(cfg.train_path, skipped)
        if not cfg.val_path and not cfg.get("benchmark"):
            base, val = _split_train_file(cfg, base)
    if cfg.val_path:
        val = read_tasks(cfg.val_path, skipped)
    if cfg.get("benchmark") and (not cfg.train_path or not cfg.val_path):
        train, held_out = _benchmark_seeds(cfg, skipped, benchmarks_root)
        base = base or train
        val = val or held_out
    elif not cfg.train_path:
        from lightning_genenv.seeds import embedded_seeds

        try:
            train, held_out = embedded_seeds(cfg.seed, cfg.val_fraction, cfg.num_held_out)
        except ValueError as e:
            raise DataError(f"data.num_held_out={cfg.num_held_out}: {e}") from None
        base = base or train
        val = val or held_out
    if cfg.families:
        keep = set(cfg.families)
        base = [t for t in base if t.family in keep]
        val = [t for t in val if t.family in keep]
    if skipped:
        rank_zero_warn(f"skipped invalid records in the data files: {_describe(skipped)}")
    if not base:
        where = cfg.train_path or (f"data.benchmark={cfg.benchmark}" if cfg.get("benchmark") else "the embedded seeds")
        why = (f"skipped: {_describe(skipped)}" if skipped else
               f"none of data.families={list(cfg.families)}" if cfg.families else "it holds no task line")
        raise DataError(f"no valid seed tasks in {where} ({why})")
    return base, cap_validation(val, cfg.num_val, cfg.seed)


def cap_validation(val: list[Task], num_val: int, seed: int) -> list[Task]:
    """At most ``num_val`` validation tasks (0: all), a seeded sample. When they come from several
    benchmarks (``data=paper``), the sample takes the benchmarks in turn, so that each is present and
    they differ in count by at most one task (a benchmark with fewer tasks gives what it has)."""
    if not num_val or len(val) <= num_val:
        return val
    rng = random.Random(seed)
    groups: dict[str | None, list[Task]] = {}
    for t in val:
        groups.setdefault(benchmark_of(t.family), []).append(t)
    if len(groups) < 2:
        return rng.sample(val, num_val)
    return _in_turn([rng.sample(ts, len(ts)) for _, ts in sorted(groups.items(), key=lambda kv: str(kv[0]))],
                    num_val)


def validation_subset(val: list[Task], num: int, seed: int) -> list[Task]:
    """The fixed per-epoch validation subset (``data.num_val_subset``): at most ``num`` of ``val`` (0: all),
    every family present, the families taken in turn from seeded orders of their own (a random stream of its
    own, so the subset depends on ``val`` and ``seed`` only), in ``val``'s order. Raises :class:`DataError`
    when ``num`` is smaller than the number of families."""
    if not num or num >= len(val):
        return val
    kept = {id(t) for t in _families_in_turn(val, num, random.Random(f"val-subset:{seed}"), "data.num_val_subset",
                                             "families of the validation set", ", or 0 (the whole set every epoch)")}
    return [t for t in val if id(t) in kept]


def _families_in_turn(tasks: list[Task], num: int, rng: random.Random, key: str, what: str,
                      alternative: str = "") -> list[Task]:
    """``num`` of ``tasks``, every family present: each family's tasks in an order drawn from ``rng``, the
    families taken in turn (:func:`_in_turn`). Raises :class:`DataError` naming ``key`` when ``num`` is
    smaller than the number of families."""
    by_family: dict[str, list[Task]] = {}
    for t in tasks:
        by_family.setdefault(t.family, []).append(t)
    if num < len(by_family):
        raise DataError(f"{key}={num} cannot keep every one of the {len(by_family)} {what} present; "
                        f"use at least {len(by_family)}{alternative}")
    return _in_turn([rng.sample(ts, len(ts)) for _, ts in sorted(by_family.items())], num)


def _in_turn(queues: list[list[Task]], n: int) -> list[Task]:
    """``n`` tasks taken from the queues in turn, round by round (an empty queue is passed over)."""
    kept: list[Task] = []
    while len(kept) < n:
        for queue in queues:
            if queue and len(kept) < n:
                kept.append(queue.pop(0))
    return kept


def limit_base(base: list[Task], num_train: int, seed: int) -> list[Task]:
    """At most ``num_train`` base tasks, every family present (0: all): each family's tasks in a seeded
    order, taken one family after another, round by round, so the families differ in size by at most one
    task (a family with fewer tasks gives what it has). Raises :class:`DataError` when ``num_train`` is
    smaller than the number of families."""
    if not num_train or num_train >= len(base):
        return base
    return _families_in_turn(base, num_train, random.Random(seed), "data.num_train", "task families")


def _describe(skipped: Counter) -> str:
    """The skipped records by reason, with the first lines of each when ``skipped`` knows them."""
    return skipped.describe() if isinstance(skipped, Skipped) else str(dict(skipped))


def _split_train_file(cfg, tasks: list[Task]) -> tuple[list[Task], list[Task]]:
    """``data.train_path`` without ``data.val_path``: hold out ``data.val_fraction`` of the file's
    tasks (by family, as the embedded seeds are split) for validation, and say so."""
    from lightning_genenv.seeds import split_seeds

    if not tasks:
        return tasks, []
    train, val = split_seeds(tasks, val_fraction=cfg.val_fraction, seed=cfg.seed)
    if not val:
        raise DataError(f"data.train_path={cfg.train_path}: no family has two distinct questions to "
                        f"hold out for validation; pass data.val_path")
    rank_zero_info(f"data.val_path is not set: validating on {len(val)} of the {len(tasks)} tasks in "
                   f"{cfg.train_path} (data.val_fraction={cfg.val_fraction}), "
                   f"training on the other {len(train)}")
    return train, val


def _benchmark_seeds(cfg, skipped: Counter, benchmarks_root) -> tuple[list[Task], list[Task]]:
    """(train seeds, held-out tasks) of ``data.benchmark`` (``paper``: of each benchmark in ``PAPER_MIX``,
    concatenated); skipped items are counted as ``<benchmark>:<reason>``."""
    from lightning_genenv.benchmarks.eval_config import default_data_root
    from lightning_genenv.benchmarks.train_seeds import benchmark_seeds

    root = benchmarks_root or default_data_root()
    if root is None:
        raise DataError(f"data.benchmark={cfg.benchmark}: set trainer.benchmarks_root (no ../shared/benchmarks "
                        "next to the repository)")
    train, val = [], []
    for name in PAPER_MIX if cfg.benchmark == "paper" else (cfg.benchmark,):
        own: Counter = Counter()
        seeds, held_out = benchmark_seeds(name, root, own)
        skipped.update({f"{name}:{reason}": n for reason, n in own.items()})
        train, val = train + seeds, val + held_out
    return train, val
