"""Calibrated-solver runs (``experiment=calibrated``) summarized over seeds, with the curriculum bar.

Each run is read by :func:`~lightning_genenv.report.calibrated_run.read_run` (its setting and per-epoch records);
runs of the same setting and different seeds form a :class:`Setting`.

The bar a trained setting must meet, per α: at its last epoch ``|p̄ − α| <= 0.1`` (:data:`BAR`) for every seed,
while the never-trained simulator at the same α and ``d₀`` stays at least 0.25 (:data:`UNTRAINED_BAR`) from α. The
never-trained simulator's distance is its mean over epochs 2 to the last: its ``p̄`` moves from epoch to epoch
with the seed tasks its prompt shows (the first epoch is the same for both, before any update).

Where a trained simulator can end at best: :func:`reward_optimum`, the difficulty level whose tasks earn the most
expected reward (the shaped ``R_env`` over the solver's binomial attempts), its success probability, and the
next-best level's expected reward. A setting whose optimum lies more than :data:`BAR` from α cannot meet the bar by
maximizing its reward; one whose next-best level earns nearly as much gives its update little to go on. Where its
tasks miss that level: :func:`misses`, the shares written easier and harder than it (than each epoch's, for a
moving target). A level at the edge of what the family can express (``digits``: an operation takes two numbers,
``d >= 2``) can be missed on one side only, and ``p̄`` then lands on that side of α unless every task is at the
level.

Deliberately left out: reading a run (:mod:`~lightning_genenv.report.calibrated_run`), plots (TensorBoard's
``tb/calibration``), and runs of any other experiment.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from lightning_genenv.config.schema import AgentConfig, SimulatorConfig
from lightning_genenv.jsonl import read_jsonl_strict
from lightning_genenv.objectives.shaping import Shaping
from lightning_genenv.report.calibrated_run import ERROR, CalibratedRun, tasks_file
from lightning_genenv.rewards import ENV_REWARDS
from lightning_genenv.solver import success_probability

BAR = 0.1  # |p-bar - alpha| a trained simulator must reach by its last epoch
UNTRAINED_BAR = 0.25  # the distance from alpha the never-trained simulator must keep
EPS = 1e-9  # p-bar is a ratio of counts: 0.8 - 0.7 must meet a bar of 0.1
TAIL = 5  # the first (1-based) epoch of the late-epochs mean, a less noisy view than the last epoch alone
LEVELS = range(1, 25)  # the difficulty levels searched for the reward's optimum: the built-in functions' values


@dataclass(frozen=True)
class Optimum:
    """Where a reward-maximizing simulator ends: the difficulty level whose tasks earn the most expected reward, its
    success probability, and the next-best level's expected reward (the closer, the weaker the update's signal)."""

    d: float
    p: float
    reward: float
    runner_up_d: float
    runner_up_reward: float


def reward_optimum(run: CalibratedRun, epoch: int | None = None) -> Optimum:
    """The best two difficulty levels (of :data:`LEVELS`; the lower one on a tie) for the run's simulator at
    ``d₀`` of its (0-based) ``epoch``, the last unless given, by the expected reward of a valid, novel task
    (:meth:`Shaping.expected_reward`)."""
    shaping = Shaping(unsolved=run.reward_unsolved, solved=run.reward_solved)
    reward = ENV_REWARDS[run.env_reward]

    def r_env(p_hat: float) -> float:
        return reward(p_hat, alpha=run.alpha, beta=run.beta, band=run.band)

    d0 = run.d0 + run.d0_step * (max(len(run.epochs) - 1, 0) if epoch is None else epoch)
    expected = {d: shaping.expected_reward(success_probability(d, d0, run.slope), run.attempts, r_env) for d in LEVELS}
    best, second = sorted(LEVELS, key=lambda d: (-expected[d], d))[:2]
    return Optimum(float(best), success_probability(best, d0, run.slope), expected[best], float(second),
                   expected[second])


def misses(run: CalibratedRun) -> tuple[float, float]:
    """Of the run's valid tasks from epoch :data:`TAIL` on, the shares rated easier than their epoch's
    :func:`reward_optimum` and harder (an unrated task among them: the solver always fails it); NaN, NaN before
    epoch :data:`TAIL`."""
    path = tasks_file(run.path)
    try:
        rows = [(int(r["epoch"]), r["d"]) for r in read_jsonl_strict(path) if r["epoch"] >= TAIL - 1]
    except (KeyError, TypeError, ValueError) as e:
        raise SystemExit(f"{path}: a task record without a usable {e} (not a calibrated run's tasks)") from None
    if not rows:
        return math.nan, math.nan
    level = {e: reward_optimum(run, e).d for e in {e for e, _ in rows}}
    easier = sum(d is not None and d < level[e] for e, d in rows) / len(rows)
    harder = sum(d is None or d > level[e] for e, d in rows) / len(rows)
    return easier, harder


@dataclass(frozen=True)
class Setting:
    """The runs of one setting, one per seed, in seed order."""

    runs: tuple[CalibratedRun, ...]

    @property
    def name(self) -> str:
        first = self.runs[0]
        cap = f", KL cap {first.kl_max:g}" if first.kl_max != SimulatorConfig.kl_max else ""
        cap += f", KL weight {first.kl_coef:g}" if first.kl_coef != SimulatorConfig.kl_coef else ""
        cap += f", in-band imitation {first.imitate_in_band:g}" if first.imitate_in_band else ""
        cap += f", target gain {first.target_gain:g}" if first.target_gain else ""
        cap += f" memory {first.target_memory:g}" if first.target_memory else ""
        schedule = f" {first.lr_scheduler_type}" if first.lr_scheduler_type != SimulatorConfig.lr_scheduler_type else ""
        who = f"{first.objective} (lr {first.learning_rate:g}{schedule}{cap})" if first.trained else "never trained"
        if first.trained and (first.reward_unsolved, first.reward_solved) != (None, None):
            who += f", p̂ = 0 / 1 scored {_reward_text(first.reward_unsolved)} / {_reward_text(first.reward_solved)}"
        if first.seed_replay:
            picked = "in band" if first.seed_replay_pick == "in_band" else "nearest α"
            picked += f" moved by {first.seed_replay_gain:g} × the error" if first.seed_replay_gain else ""
            who += f", seeds {first.seed_replay:g} replayed (last {first.seed_replay_epochs} epochs' {picked})"
        moving = f", d₀ +{first.d0_step:g}/epoch" if first.d0_step else ""
        attempts = f", {first.attempts} attempts" if first.attempts != AgentConfig.num_generations else ""
        seeds, candidates, batch = first.writing()
        writing = f", {seeds} seeds × {candidates} candidates" if candidates else ""
        writing += f", {batch} a step" if candidates and batch != SimulatorConfig.batch_size else ""
        if first.temperature != SimulatorConfig.temperature:
            writing += f", written at temperature {first.temperature:g}"
        writing += "" if first.result_tasks else ", success rate alone in the prompt"
        writing += ", each prompt the next solved and failed task" if first.result_tasks_pick == "rotate" else ""
        if first.trained and first.select_last:
            writing += f", the nearest of the last {first.select_last} states"
        return f"{who}, α = {first.alpha:g}, d₀ = {first.d0:g}{moving}{attempts}{writing}"

    def first(self) -> list[float]:
        return [run.errors()[0] for run in self.runs]

    def last(self) -> list[float]:
        return [run.errors()[-1] for run in self.runs]

    def tail_mean(self, key: str = ERROR) -> list[float]:
        """Each seed's mean of the per-epoch metric ``key`` (``|p̄ − α|`` unless named) from epoch :data:`TAIL` on."""
        return [_mean([record[key] for record in run.epochs[TAIL - 1:]]) for run in self.runs]

    def later_mean(self) -> list[float]:
        """Each seed's mean ``|p̄ − α|`` over epochs 2 to the last (the never-trained simulator's distance)."""
        return [_mean(run.errors()[1:]) for run in self.runs]

    def meets(self) -> bool:
        """A trained setting: every seed within :data:`BAR` at its last epoch. Never trained: every seed at least
        :data:`UNTRAINED_BAR` away on average over epochs 2 on."""
        if self.runs[0].trained:
            return all(e <= BAR + EPS for e in self.last())
        return all(e >= UNTRAINED_BAR - EPS for e in self.later_mean())


def _reward_text(value: float | None) -> str:
    return "R_env" if value is None else f"{value:g}"


def optimum_text(run: CalibratedRun) -> str:
    """A trained run's :func:`reward_optimum` as the summary prints it (``6 (0.119); E[R] 0.59, 0.45 at 5``)."""
    if not run.trained:
        return "–"
    o = reward_optimum(run)
    return f"{o.d:g} ({o.p:.3f}); E[R] {o.reward:.2f}, {o.runner_up_reward:.2f} at {o.runner_up_d:g}"


def misses_text(setting: Setting) -> str:
    """A trained setting's :func:`misses` of its reward's optimum, per seed (``0.01 / 0.27, 0.00 / 0.41``)."""
    if not setting.runs[0].trained:
        return "–"
    return ", ".join(_cells(list(misses(run)), 2) for run in setting.runs)


def settings(runs: list[CalibratedRun]) -> list[Setting]:
    """Runs grouped by setting (trained before never trained, then by objective, α, d₀), seeds in order."""
    groups: dict[tuple, list[CalibratedRun]] = {}
    for run in runs:
        groups.setdefault(run.key, []).append(run)
    order = sorted(groups, key=lambda k: (not k[0], *k[1:]))
    return [Setting(tuple(sorted(groups[k], key=lambda r: r.seed))) for k in order]


def _mean(values: list[float]) -> float:
    """The mean, or NaN for a run that has not reached the window yet (printed as a dash)."""
    return statistics.fmean(values) if values else math.nan


def _cells(values: list[float], places: int = 3) -> str:
    return " / ".join("–" if math.isnan(v) else f"{v:.{places}f}" for v in values)


def summary_table(runs: list[CalibratedRun]) -> str:
    """One row per setting: its seeds, ``|p̄ − α|`` at the first and the last epoch per seed, the mean from epoch
    :data:`TAIL` on and over epochs 2 on, per seed, the last epoch's share of unrated tasks, per seed, the reward's
    optimum (:func:`reward_optimum`; a trained setting's), the shares of its tasks easier and harder than that
    level from epoch :data:`TAIL` on (:func:`misses`), per seed, and whether it meets its half of the bar."""
    rows = ["| setting | seeds | epochs | \\|p̄ − α\\| epoch 1 | last epoch | mean, epochs "
            f"{TAIL}+ | mean, epochs 2+ | unrated, last epoch | reward's optimum: d (p); its expected reward, "
            f"the next-best level's | off the optimum, epochs {TAIL}+: easier / harder | bar |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in settings(runs):
        bar = (f"≤ {BAR} at the last epoch" if s.runs[0].trained else f"≥ {UNTRAINED_BAR} over epochs 2+")
        rows.append(f"| {s.name} | {', '.join(str(r.seed) for r in s.runs)} | "
                    f"{', '.join(str(len(r.epochs)) for r in s.runs)} | {_cells(s.first())} | {_cells(s.last())} | "
                    f"{_cells(s.tail_mean())} | {_cells(s.later_mean())} | {_cells([r.unrated() for r in s.runs])} | "
                    f"{optimum_text(s.runs[0])} | {misses_text(s)} | {'meets' if s.meets() else 'misses'} ({bar}) |")
    return "\n".join(rows)
