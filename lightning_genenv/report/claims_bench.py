"""The figures of EVALUATION.md's cell tables and BENCHMARKS.md's phase table, peak memory and wall time as
:class:`~lightning_genenv.report.claim.Claim` values. Left out: the co-evolution runs' figures (``claims_runs.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from lightning_genenv.report.claim import RUNS, B, Claim, E, bench_script
from lightning_genenv.report.claims_runs import _headline_of, _wall, headline


def _phase_row(phases: tuple[str, ...], runs: tuple[str, ...]) -> Callable[[Path], str]:
    """A row of BENCHMARKS.md's phase table: the phases' seconds summed over each run (``bench/phase_times.py``)."""
    def compute(root: Path) -> str:
        cells = []
        for run in runs:
            series, _ = bench_script("phase_times").phase_series(root / RUNS / run)
            cells.append(f"{sum(round(sum(series.get(p, []))) for p in phases):,}")  # each phase as phase_times rounds
        return " | ".join(cells)
    return compute


def _peak_rss(run: str) -> Callable[[Path], str]:
    def compute(root: Path) -> str:
        summary = json.loads((root / RUNS / run / "summary.json").read_text(encoding="utf-8"))
        return f"{summary['peak_rss_gb']:.1f} GiB"
    return compute


def _seed_cells(setting: str, suffix: str) -> Callable[[Path], str]:
    return lambda root: " / ".join(f"{headline(root, f'{setting}{s}-{suffix}'):.3f}" for s in range(3))


# EVALUATION.md's table of figures, cell by cell: (row, evaluations, the cell as printed).
_CELLS = (
    ("| API-Bank, agent |", "pg", "api_bank-agent", "0.498 / 0.437 / 0.405"),
    ("| API-Bank, agent |", "pr", "api_bank-agent", "0.433 / 0.451 / 0.433"),
    ("| BFCL, agent |", "pg", "bfcl-agent", "0.053 / 0.076 / 0.065"),
    ("| BFCL, agent |", "pr", "bfcl-agent", "0.053 / 0.061 / 0.061"),
    ("| Bamboogle, agent (F1 = 1) |", "pg", "bamboogle-agent", "0.000 / 0.000 / 0.014"),
    ("| Bamboogle, agent (F1 = 1) |", "pr", "bamboogle-agent", "0.014 / 0.000 / 0.000"),
    ("| BFCL, own (official checker) |", "pg", "bfcl-heldout100", "0.010 / 0.010 / 0.010"),
    ("| BFCL, own (official checker) |", "pr", "bfcl-heldout100", "0.000 / 0.020 / 0.000"),
)
_SINGLE_CELLS = (
    ("| API-Bank, own", "emb-api_bank-heldout", "0.000"), ("| API-Bank, own", "pg0-api_bank-heldout", "0.004"),
    ("| API-Bank, own", "pr0-api_bank-heldout", "0.004"),
    ("| BFCL, own (official checker) |", "emb-bfcl-heldout100", "0.010"),
    ("| BFCL, own (official checker) |", "def0-bfcl-heldout100", "0.000"),
    ("| Bamboogle, agent (F1 = 1) |", "def0-bamboogle-agent", "0.014"),
    ("| Bamboogle, own (closed book, exact match) |", "def0-bamboogle-heldout", "0.000"),
    ("| ALFWorld valid_seen", "emb-alfworld100", "0.000"),
    ("| TravelPlanner (partial checks)", "emb-travelplanner100", "0.000"),
)

BENCH_CLAIMS: tuple[Claim, ...] = tuple(
    Claim(f"data=paper {setting}<seed>-{suffix}, seeds 0-2", value, _seed_cells(setting, suffix), ((E, row),),
          f"evals/{setting}{{0,1,2}}-{suffix}") for row, setting, suffix, value in _CELLS) + tuple(
    Claim(f"evaluation {name}", value, _headline_of(name), ((E, row),), f"evals/{name}")
    for row, name, value in _SINGLE_CELLS) + (
    Claim("the default run's wall time, seed 1", "1,418 s", _wall("after-s1"),
          ((B, "| `wall_time_s` |"), (B, "the default `python train.py`, seed 0, alone")),
          "runs/after-s1/summary.json"),
    *(Claim(f"BENCHMARKS.md's phase table: {row}", value, _phase_row(phases, ("before-s0", "after-s0", "after-s1")),
            ((B, f"| {row}"),), "runs/{before-s0,after-s0,after-s1}/tb") for row, phases, value in (
        ("agent update", ("agent_update",), "350 | 342 | 378"),
        ("prepare groups", ("prepare_groups",), "284 | 142 | 147"),
        ("agent rollouts", ("agent_rollouts",), "241 | 231 | 226"),
        ("simulator writes tasks", ("generate_tasks",), "149 | 149 | 139"),
        ("simulator update", ("simulator_update",), "120 | 133 | 73"),
        ("checkpoints, weight sync", ("checkpoint", "weight_sync"), "19 | 17 | 17"))),
    Claim("the default run's peak RSS, seed 0", "12.1 GiB", _peak_rss("after-s0"),
          ((B, "the default `python train.py`, seed 0, alone"),), "runs/after-s0/summary.json"),
)
