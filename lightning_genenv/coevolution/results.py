"""The agent's latest results per task family, which the simulator's prompt is conditioned on.

:func:`family_results` is pure: an epoch's scored groups in, per family the success rate over all
attempts, the tasks solved at least once and those never solved (the first of each is the one a prompt shows
unless ``simulator.result_tasks_pick=rotate``). :class:`LatestResults`
keeps each family's most recent ones across epochs (a later epoch replaces a family's results) and
travels in the co-evolution callback's checkpoint state.

Deliberately left out: how the results are phrased in the prompt (:mod:`lightning_genenv.prompts`,
``FamilyResults``) and results older than a family's latest epoch.
"""

from __future__ import annotations

from lightning_genenv.epoch_values import Group
from lightning_genenv.prompts import FamilyResults
from lightning_genenv.rewards import success_rate
from lightning_genenv.tasks import Task


def family_results(groups: list[Group], threshold: float) -> dict[str, FamilyResults]:
    """Per family of ``groups``: its success rate (a completion succeeds at ``threshold``) over all
    attempts, and its solved and unsolved tasks, in the groups' order (the first of each as ``solved`` and
    ``unsolved``)."""
    by_family: dict[str, list[Group]] = {}
    for g in groups:
        by_family.setdefault(g.task.family, []).append(g)
    out = {}
    for family, gs in by_family.items():
        rates = [success_rate(g.rewards, threshold) for g in gs]
        attempts = sum(len(g.rewards) for g in gs)
        solved = tuple(g.task for g, p in zip(gs, rates) if p > 0)
        unsolved = tuple(g.task for g, p in zip(gs, rates) if p == 0)
        out[family] = FamilyResults(family, sum(p * len(g.rewards) for g, p in zip(gs, rates)) / attempts, attempts,
                                    solved[0] if solved else None, unsolved[0] if unsolved else None, solved, unsolved)
    return out


class LatestResults:
    """Each family's latest :class:`FamilyResults`; read by the simulator's task source."""

    def __init__(self):
        self._by_family: dict[str, FamilyResults] = {}

    def get(self, family: str) -> FamilyResults | None:
        return self._by_family.get(family)

    def update(self, results: dict[str, FamilyResults]) -> None:
        """An epoch's :func:`family_results`: they replace those of the same families."""
        self._by_family.update(results)

    def state_dict(self) -> dict:
        return {f: {"success_rate": r.success_rate, "attempts": r.attempts, "solved": _task_json(r.solved),
                    "unsolved": _task_json(r.unsolved), "solved_all": [t.to_dict() for t in r.solved_all],
                    "unsolved_all": [t.to_dict() for t in r.unsolved_all]} for f, r in self._by_family.items()}

    def load_state_dict(self, state: dict) -> None:
        task = lambda d: Task.from_dict(d) if d is not None else None  # noqa: E731
        # a checkpoint without the lists (written before they were kept) loads them empty: each prompt shows the first
        self._by_family = {f: FamilyResults(f, r["success_rate"], r["attempts"], task(r["solved"]), task(r["unsolved"]),
                                            tuple(map(Task.from_dict, r.get("solved_all", []))),
                                            tuple(map(Task.from_dict, r.get("unsolved_all", []))))
                           for f, r in state.items()}


def _task_json(task: Task | None) -> dict | None:
    return task.to_dict() if task is not None else None
