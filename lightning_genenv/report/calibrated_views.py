"""Views of the archived calibrated-solver runs (``docs/results/calibrated*/``) that RESULTS.md's figures quote: each
a function of the repository root that returns the figure as printed, for
:mod:`~lightning_genenv.report.claims_calibrated`'s claims. Left out: the claims themselves, and any run not archived.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

from lightning_genenv.difficulty import digits
from lightning_genenv.jsonl import read_jsonl_strict
from lightning_genenv.report.calibrated_run import read_run, tasks_file
from lightning_genenv.report.calibration import BAR, EPS, TAIL, Setting, misses, optimum_text, settings
from lightning_genenv.report.claim import RESULTS
from lightning_genenv.report.claims_runs import ci
from lightning_genenv.report.stats import centered_within, clustered_se, paired_difference

# digits as first defined; digits needing an operation; and p-hat 0 and 1 scored 0 (the preset's rewards)
CAL, CAL_OP, SHAPED = "calibrated", "calibrated-op", "calibrated-shaped"


def seed_runs(stem: str, seeds: tuple[int, ...] = (0, 1, 2)) -> tuple[str, ...]:
    """The archived run names of ``stem``'s seeds: ``<stem>-s0``, ``<stem>-s1``, ..."""
    return tuple(f"{stem}-s{s}" for s in seeds)


def calibrated(root: Path, folder: str, *runs: str) -> Setting:
    """The archived calibrated-solver runs ``runs`` of ``docs/results/<folder>``, one setting."""
    return settings([read_run(root / RESULTS / folder / run) for run in runs])[0]


def per_seed(view: Callable[[Setting], list[float]], digits: int = 3) -> Callable[..., Callable[[Path], str]]:
    """``(folder, *runs) -> compute``: a setting's per-seed values of ``view`` (a :class:`Setting` method),
    ``a / b / c``."""
    return lambda folder, *runs: lambda root: " / ".join(
        f"{e:.{digits}f}" for e in view(calibrated(root, folder, *runs)))


last_epochs = per_seed(Setting.last)  # |p-bar - alpha| at the last epoch
tail_means = per_seed(Setting.tail_mean)  # mean |p-bar - alpha| from epoch 5 on


def rate_values(key: str) -> Callable[[Setting], list[float]]:
    """Each seed's mean of the per-epoch metric ``key`` from epoch 5 on."""
    return lambda setting: setting.tail_mean(key)


in_band_values = rate_values("curriculum/in_band_fraction")  # the attainable band around alpha
in_band = per_seed(in_band_values)  # each seed's mean in-band fraction (the attainable band) from epoch 5 on
difficulty_values = rate_values("solver/difficulty_mean")  # of the valid, rated tasks


def shaped_tasks(root: Path, run: str) -> list[dict]:
    """The per-task records of the archived run ``calibrated-shaped/<run>``."""
    return list(read_jsonl_strict(tasks_file(root / RESULTS / SHAPED / run)))


def level_share(level: float, *runs: str) -> Callable[[Path], str]:
    """Per run (``a / b / c``): the share of its valid tasks from epoch 5 on whose difficulty is ``level``."""
    def compute(root: Path) -> str:
        shares = []
        for run in runs:
            rows = [r for r in shaped_tasks(root, run) if r["epoch"] >= TAIL - 1]
            shares.append(sum(r["d"] == level for r in rows) / len(rows))
        return " / ".join(f"{x:.2f}" for x in shares)
    return compute


def variations_of_level(level: float, *runs: str) -> Callable[[Path], str]:
    """Over ``runs``, from epoch 5 on: of the tasks written from a replayed seed whose difficulty is ``level``, the
    shares written easier, at the same level, harder and unrated, and their number (``easier a / same b / harder c /
    unrated d of n``)."""
    def compute(root: Path) -> str:
        counts = dict.fromkeys(("easier", "same", "harder", "unrated"), 0)
        for run in runs:
            rows = shaped_tasks(root, run)
            seeds = {r["id"]: r["d"] for r in rows}
            for r in rows:
                if r["epoch"] < TAIL - 1 or seeds.get(r["seed"]) != level:
                    continue
                d = r["d"]
                counts["unrated" if d is None else "easier" if d < level else "same" if d == level else "harder"] += 1
        total = sum(counts.values())
        return " / ".join(f"{k} {v / total:.2f}" for k, v in counts.items()) + f" of {total}"
    return compute


def success_by_seed_kind(*runs: str) -> Callable[[Path], str]:
    """Over ``runs``, from epoch 5 on: the mean success ``k / n`` of the tasks written from base seeds and of those
    written from replayed ones (a seed that is the run's own earlier task), and the base ones' share of all
    (``base a (share b of n) / replayed c``). ``p̄`` is their mix: ``b · a + (1 − b) · c``."""
    def compute(root: Path) -> str:
        base, replayed = [], []
        for run in runs:
            rows = shaped_tasks(root, run)
            ids = {r["id"] for r in rows}
            for r in rows:
                if r["epoch"] >= TAIL - 1:
                    (replayed if r["seed"] in ids else base).append(r["k"] / r["n"])
        total = len(base) + len(replayed)
        return (f"base {sum(base) / len(base):.2f} (share {len(base) / total:.2f} of {total}) / "
                f"replayed {sum(replayed) / len(replayed):.2f}")
    return compute


def replay_hits(alpha: float, d0: float) -> Callable[[Path], str]:
    """``k of n``: of every archived trained run of ``calibrated-shaped`` with replayed seeds at ``alpha`` and a fixed
    ``d0``, whatever its other settings, those within :data:`~.calibration.BAR` of α at their last epoch."""
    def compute(root: Path) -> str:
        ends = [r.errors()[-1] for r in replay_runs(root) if (r.alpha, r.d0) == (alpha, d0)]
        return f"{sum(e <= BAR + EPS for e in ends)} of {len(ends)}"
    return compute


def replay_runs(root: Path) -> list:
    """Every archived trained run of ``calibrated-shaped`` with replayed seeds at a fixed target (d₀ not moving)."""
    runs = [read_run(p) for p in sorted((root / RESULTS / SHAPED).iterdir()) if (p / "config.yaml").is_file()]
    return [r for r in runs if r.trained and r.seed_replay and not r.d0_step]


def epoch_noise(targets: tuple[tuple[float, float], ...], within: float = BAR) -> Callable[[Path], str]:
    """How far an epoch's ``p̄`` strays by sampling alone: per target (α, d₀), over every epoch from 5 on of every
    trained replay run there, the mean standard error of ``p̄`` with each seed's candidates one cluster
    (:func:`~.stats.clustered_se`), and the chance that a simulator exactly on α with that error ends an epoch within
    ``within`` (:func:`~.stats.centered_within`); then the chance that all of three seeds at every target do, and
    the same with twice the seeds an epoch (each error over √2) (``SE a, chance b; ...; all c; twice the seeds d``)."""
    def compute(root: Path) -> str:
        parts, everything, doubled, runs = [], 1.0, 1.0, replay_runs(root)
        for alpha, d0 in targets:
            errors = []
            for run in (r for r in runs if (r.alpha, r.d0) == (alpha, d0)):
                by_epoch: dict[int, dict[str, list[float]]] = {}
                for r in read_jsonl_strict(tasks_file(run.path)):
                    if r["epoch"] >= TAIL - 1:
                        by_epoch.setdefault(r["epoch"], {}).setdefault(r["seed"], []).append(r["k"] / r["n"])
                errors += [clustered_se(list(seeds.values())) for seeds in by_epoch.values() if len(seeds) > 1]
            se = sum(errors) / len(errors)
            chance = centered_within(se, within)
            everything *= chance ** 3
            doubled *= centered_within(se / math.sqrt(2), within) ** 3
            parts.append(f"SE {se:.3f}, chance {chance:.2f}")
        return "; ".join(parts) + f"; all {everything:.2f}; twice the seeds {doubled:.2f}"
    return compute


def late_hits(first: int, *runs: str, within: float = 0.1) -> Callable[[Path], str]:
    """``k of n``: of the epochs from ``first`` (1-based) on of each archived run of ``calibrated-shaped``, those
    whose ``|p̄ − α|`` is within ``within``."""
    def compute(root: Path) -> str:
        errors = [e for run in runs for e in read_run(root / RESULTS / SHAPED / run).errors()[first - 1:]]
        return f"{sum(e <= within for e in errors)} of {len(errors)}"
    return compute


def groups_differ(*runs: str) -> Callable[[Path], str]:
    """Per run (``a / b / c``): of the seed groups with two or more valid candidates (every epoch; a task's ``seed``
    names its group), the share whose candidates differ in difficulty (an unrated one differs from a rated one)."""
    def compute(root: Path) -> str:
        shares = []
        for run in runs:
            groups: dict[tuple, list] = {}
            for r in shaped_tasks(root, run):
                groups.setdefault((r["epoch"], r["seed"]), []).append(r["d"])
            pairs = [ds for ds in groups.values() if len(ds) >= 2]
            shares.append(sum(len(set(ds)) > 1 for ds in pairs) / len(pairs))
        return " / ".join(f"{x:.2f}" for x in shares)
    return compute


def missed(side: int, *runs: str) -> Callable[[Path], str]:
    """Per run (``a / b / c``): the share of its tasks from epoch 5 on written easier (``side`` 0) or harder (1) than
    the reward's optimum (:func:`~lightning_genenv.report.calibration.misses`)."""
    return lambda root: " / ".join(f"{misses(read_run(root / RESULTS / SHAPED / run))[side]:.2f}" for run in runs)


def objective_row(objective: str, view: Callable[[Setting], list[float]]) -> Callable[[Path], str]:
    """``view`` of ``<objective>-a05-s{0,1,2}`` (α = 0.5, d₀ = 2), per seed with two decimals."""
    return per_seed(view, 2)(SHAPED, *seed_runs(f"{objective}-a05"))


def end_difficulty(setting: Setting) -> list[float]:
    """Each run's mean ``d`` at its last epoch."""
    return [r.epochs[-1]["solver/difficulty_mean"] for r in setting.runs]


last_d = per_seed(end_difficulty, 2)
d_mean = per_seed(difficulty_values, 2)  # mean d from epoch 5 on


def optimum(run: str) -> Callable[[Path], str]:
    """Where the reward of an archived run's setting peaks, as the summary table prints it."""
    return lambda root: optimum_text(read_run(root / RESULTS / SHAPED / run))


def trained_minus_untrained(trained: str, untrained: str, view: Callable[[Setting], list[float]],
                             ) -> Callable[[Path], str]:
    """The preset's runs ``<trained>-s{0,1,2}`` − ``<untrained>-s{0,1,2}``, paired by seed (the same first epoch):
    the mean of ``view``'s per-seed values with its 95% interval."""
    def compute(root: Path) -> str:
        a, b = (view(calibrated(root, SHAPED, *seed_runs(arm))) for arm in (trained, untrained))
        return ci(paired_difference(a, b))
    return compute


def untrained_distance(folder: str, run: str) -> Callable[[Path], str]:
    """A never-trained run's mean |p-bar - alpha| over epochs 2 on."""
    return lambda root: f"{calibrated(root, folder, run).later_mean()[0]:.3f}"


def untrained_p_bars(root: Path) -> list[float]:
    """The never-trained simulator's p-bar over epochs 2-10 at alpha 0.5 (digits as first defined)."""
    return [e["curriculum/p_hat_mean"] for e in calibrated(root, CAL, "untrained-a05-s0").runs[0].epochs[1:]]


def bare_numbers(run: str) -> Callable[[Path], str]:
    """``k of n``: of a run's rated tasks in epochs 8-10, those ``digits`` no longer rates (no operation asked)."""
    def compute(root: Path) -> str:
        rows = read_jsonl_strict(tasks_file(root / RESULTS / CAL / run))
        rated = [r for r in rows if r["epoch"] >= 7 and r["d"] is not None]
        bare = [r for r in rated if digits(SimpleNamespace(question=r["question"])) is None]
        return f"{len(bare)} of {len(rated)}"
    return compute


_SUM = re.compile(r"What is (\d+) (plus|minus|times) (\d+)\?")
_OPERATIONS = {"plus": lambda a, b: a + b, "minus": lambda a, b: a - b, "times": lambda a, b: a * b}


def right_answers(folder: str) -> Callable[[Path], str]:
    """``k of n (x%)``: of every task the archived runs of ``docs/results/<folder>`` wrote in the seeds' own form,
    ``What is A plus|minus|times B?``, those whose answer is the right number (the calibrated solver reads the
    question alone, never the answer)."""
    def compute(root: Path) -> str:
        asked = right = 0
        for run in sorted(p for p in (root / RESULTS / folder).iterdir() if p.is_dir()):
            for row in read_jsonl_strict(tasks_file(run)):
                if (m := _SUM.fullmatch(row["question"].strip())) is None:
                    continue
                asked += 1
                right += str(row["answer"]).strip() == str(_OPERATIONS[m[2]](int(m[1]), int(m[3])))
        return f"{right:,} of {asked:,} ({right / asked:.0%})"
    return compute


def calibration_wall(folder: str, run: str) -> Callable[[Path], str]:
    def compute(root: Path) -> str:
        summary = json.loads((root / RESULTS / folder / run / "summary.json").read_text(encoding="utf-8"))
        return f"{round(summary['wall_time_s']):,} s"
    return compute


CAL_README, OP_README = f"{RESULTS}/{CAL}/README.md", f"{RESULTS}/{CAL_OP}/README.md"


def unrated_last(folder: str, *runs: str) -> Callable[[Path], str]:
    """Each seed's share of unrated tasks among the last epoch's valid ones."""
    return lambda root: " / ".join(f"{r.unrated():.3f}" for r in calibrated(root, folder, *runs).runs)
