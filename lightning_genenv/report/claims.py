"""The standing figures of README.md, RESULTS.md, BENCHMARKS.md and EVALUATION.md, recomputed from ``docs/results``.

    python -m lightning_genenv.report.claims            # every figure: stated, recomputed, agrees or not
    python -m lightning_genenv.report.claims --check    # exit status 1 when a document and its data disagree
    python -m lightning_genenv.report.claims --plot     # RESULTS.md's figures, into docs/results/standing/

Each :class:`Claim` is one figure as the documents print it (``value``), how it is recomputed (``compute``, from
the archived run directories' per-task validation files, ``summary.json`` files and evaluation summaries, with the
``bench/held_out_gain.py`` readers and ``report.stats``), and where it stands (``where``: a document and a phrase of
the line that holds the figure). A claim agrees when the recomputed text equals ``value`` and every such line holds
it; ``tests/test_claims.py`` runs every claim.

A figure whose runs were not archived is kept only as a claim with ``archived=False``: it is recomputed from the
per-seed values that RESULTS.md recorded when it was measured (``RECORDED``, three decimals, with the commit they
came from), and agrees when each of its three numbers is within 0.0015 of the stated one (the recorded inputs are
rounded). It checks the arithmetic and that the documents agree, not the data.

Deliberately left out: figures that describe single runs' curves (the per-epoch tables of RESULTS.md's sections),
which the ``bench/`` readers print from the same directories.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

from lightning_genenv.difficulty import digits
from lightning_genenv.jsonl import read_jsonl_strict
from lightning_genenv.report.calibration import Setting, read_run, settings
from lightning_genenv.report.evals import read_summary
from lightning_genenv.report.plots import COLORS, DPI, FIGSIZE, pyplot
from lightning_genenv.report.stats import paired_difference

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path("docs/results")
RUNS = RESULTS / "runs"
EVALS = RESULTS / "evals"
TOLERANCE = 0.0015  # a not-archived claim's recomputation from three-decimal recorded values

# Per-seed values recorded when these runs were measured; their run directories were not kept.
RECORDED = {
    # the default regime's GenEnv seeds 1 and 2: `python train.py seed=N` at ab1c73a, sampled held-out reward at
    # the end (start 0.141); greedy score at the end
    "default_genenv_end": {1: 0.278, 2: 0.276},
    "default_genenv_score": {1: 0.336, 2: 0.336},
    # the scarce regime (`data=scarce`), GenEnv - plain GRPO, end of run, seeds 0-6 (79a4d3a, 312c36b, b0e8555)
    "scarce_genenv_minus_grpo": [0.116, 0.017, 0.006, 0.031, 0.010, 0.095, -0.041],
    "scarce_genenv_end": [0.271, 0.218, 0.188, 0.216, 0.223, 0.212, 0.147],
    "scarce_grpo_end": [0.155, 0.201, 0.182, 0.185, 0.213, 0.117, 0.188],
    # the scarce regime's GenEnv-Random (seeds 0-4) and GenEnv-Static (seeds 0-2), b0e8555 and 312c36b
    "scarce_genenv_minus_random": [0.015, -0.012, 0.011, 0.006, -0.010],
    "scarce_random_minus_grpo": [0.100, 0.029, -0.006, 0.025, 0.020],
    "scarce_static_minus_grpo": [0.042, 0.029, 0.050],
    "scarce_static_minus_genenv": [-0.074, 0.012, 0.044],
    # the frozen agent (`experiment=frozen_agent`, 8 epochs): mean |p-hat - alpha| over epochs 1-7, trained simulator
    # and GenEnv-Random paired by seed; hint on seeds 0-2 (b1f4e16), hint off seeds 0-1 (fe439b3)
    "frozen_abs_error_trained_hint": [0.441, 0.465, 0.455],
    "frozen_abs_error_random_hint": [0.435, 0.458, 0.460],
    "frozen_abs_error_trained_nohint": [0.418, 0.464],
    "frozen_abs_error_random_nohint": [0.420, 0.457],
    "frozen_in_band_trained_hint": [0.036, 0.011, 0.018],
    "frozen_in_band_random_hint": [0.011, 0.033, 0.000],
}

# The comparisons between settings that the standing table reports on the agent's held-out reward: 6 in the
# default regime, 5 in the scarce one, 4 on the paper's benchmarks (3 in the agent's interface, BFCL's own).
COMPARISONS = 15


def _minus(text: str) -> str:
    return text.replace("-", "−")


def ci(d) -> str:
    """``+0.101 [+0.013, +0.189]`` (the documents' minus sign) from ``paired_difference``'s tuple."""
    return _minus(f"{d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}]")


def _held_out_gain():
    """``bench/held_out_gain.py`` as a module: its readers of a run's step-0 and end validation."""
    return _bench_script("held_out_gain")


def run_end(root: Path, run: str, metric: str = "sampled") -> float:
    _, end = _held_out_gain().start_end(root / RUNS / run, metric)
    return statistics.fmean(end.values())


def run_gain(root: Path, run: str) -> float:
    start, end = _held_out_gain().start_end(root / RUNS / run)
    return statistics.fmean(end.values()) - statistics.fmean(start.values())


def gains_over_seeds(root: Path, runs: list[str]) -> str:
    gains = [run_gain(root, r) for r in runs]
    return ci(paired_difference(gains, [0.0] * len(gains)))


def ends_paired(root: Path, a: list[str], b: list[str], metric: str = "sampled") -> str:
    return ci(paired_difference([run_end(root, r, metric) for r in a], [run_end(root, r, metric) for r in b]))


def headline(root: Path, name: str) -> float:
    s = read_summary(root / EVALS / name)
    return float(s[s["metric"]])


def evals_paired(root: Path, a: list[str], b: list[str]) -> str:
    return ci(paired_difference([headline(root, x) for x in a], [headline(root, x) for x in b]))


def wall_time(root: Path, run: str) -> float:
    return float(json.loads((root / RUNS / run / "summary.json").read_text(encoding="utf-8"))["wall_time_s"])


def _seeds(prefix: str, seeds=(0, 1, 2)) -> list[str]:
    return [f"{prefix}{s}" for s in seeds]


DEF = {k: _seeds(f"def-{k}-s") for k in ("grpo", "random", "static")}
AFTER = _seeds("after-s")
PAPER = {"genenv": "pg", "grpo": "pr"}


def _default_genenv(root: Path, metric: str = "sampled") -> list[float]:
    """The default regime's GenEnv ends: seed 0 archived (``default-s0``), seeds 1-2 recorded."""
    rec = RECORDED["default_genenv_end" if metric == "sampled" else "default_genenv_score"]
    return [run_end(root, "default-s0", metric), rec[1], rec[2]]


def _vs_default_genenv(root: Path, other: str, genenv_first: bool) -> str:
    g, o = _default_genenv(root), [run_end(root, r) for r in DEF[other]]
    return ci(paired_difference(g, o) if genenv_first else paired_difference(o, g))


def _scarce_genenv_minus_grpo(root: Path) -> str:
    diffs = RECORDED["scarce_genenv_minus_grpo"] + [
        run_end(root, f"sc-genenv-s{s}") - run_end(root, f"sc-grpo-s{s}") for s in (7, 8)]
    return ci(paired_difference(diffs, [0.0] * len(diffs)))


def _scarce_gain(root: Path, arm: str) -> str:
    gains = [e - 0.141 for e in RECORDED[f"scarce_{arm}_end"]] + [run_gain(root, f"sc-{arm}-s{s}") for s in (7, 8)]
    return ci(paired_difference(gains, [0.0] * len(gains)))


def _recorded_diffs(key: str) -> str:
    d = RECORDED[key]
    return ci(paired_difference(d, [0.0] * len(d)))


def _recorded_pairs(a: str, b: str) -> Callable[[Path], str]:
    return lambda root: ci(paired_difference(RECORDED[a], RECORDED[b]))


def _frozen_both_settings(root: Path) -> str:
    a = RECORDED["frozen_abs_error_trained_hint"] + RECORDED["frozen_abs_error_trained_nohint"]
    b = RECORDED["frozen_abs_error_random_hint"] + RECORDED["frozen_abs_error_random_nohint"]
    return ci(paired_difference(a, b))


def _bonferroni_static_minus_grpo(root: Path) -> str:
    d = RECORDED["scarce_static_minus_grpo"]
    return ci(paired_difference(d, [0.0] * len(d), level=1 - 0.05 / COMPARISONS))


def _chance_of_one(root: Path) -> str:
    return f"{1 - 0.95 ** COMPARISONS:.2f}"


def _paper(benchmark: str, suffix: str = "agent") -> Callable[[Path], str]:
    return lambda root: evals_paired(root, [f"pg{s}-{benchmark}-{suffix}" for s in range(3)],
                                     [f"pr{s}-{benchmark}-{suffix}" for s in range(3)])


def _over_embedded(benchmark: str, prefix: str) -> Callable[[Path], str]:
    def compute(root: Path) -> str:
        trained = [headline(root, f"{prefix}{s}-{benchmark}-agent") for s in range(3)]
        return ci(paired_difference(trained, [headline(root, f"emb-{benchmark}-agent")] * 3))
    return compute


def _headline_of(name: str) -> Callable[[Path], str]:
    return lambda root: f"{headline(root, name):.3f}"


def _wall(run: str) -> Callable[[Path], str]:
    return lambda root: f"{round(wall_time(root, run)):,} s"


def _ratio(root: Path) -> str:
    return f"{wall_time(root, 'after-s0') / wall_time(root, 'before-s0'):.2f}×"


@dataclass(frozen=True)
class Claim:
    name: str                                  # the figure, in words
    value: str                                 # as the documents print it
    compute: Callable[[Path], str]             # the figure recomputed from the repository root's docs/results
    where: tuple[tuple[str, str], ...]         # (document, a phrase of the line that holds the figure)
    data: str                                  # the archived data it is computed from
    archived: bool = True                      # False: recomputed from RECORDED values (see the module docstring)

    def check(self, root: Path = ROOT) -> list[str]:
        """What disagrees: an empty list when the data and every document agree with ``value``."""
        problems = []
        got = self.compute(root)
        if self.archived and got != self.value:
            problems.append(f"{self.name}: the data give {got}, the documents state {self.value}")
        if not self.archived and not _close(got, self.value):
            problems.append(f"{self.name}: the recorded values give {got}, the documents state {self.value}")
        for doc, phrase in self.where:
            lines = [ln for ln in (root / doc).read_text(encoding="utf-8").splitlines() if phrase in ln]
            if not lines:
                problems.append(f"{self.name}: no line of {doc} holds {phrase!r}")
            elif not any(self.value in ln for ln in lines):
                problems.append(f"{self.name}: {doc}'s line with {phrase!r} does not state {self.value}")
        return problems


def _numbers(text: str) -> list[float]:
    return [float(x.replace("−", "-")) for x in re.findall(r"[−+-]?\d+\.\d+", text)]


def _close(a: str, b: str) -> bool:
    x, y = _numbers(a), _numbers(b)
    return len(x) == len(y) and all(math.isclose(u, v, abs_tol=TOLERANCE) for u, v in zip(x, y))


R, B, E, README = "RESULTS.md", "BENCHMARKS.md", "EVALUATION.md", "README.md"
_SC = "not archived: seeds 0–6 (79a4d3a, 312c36b, b0e8555); seeds 7–8 in runs/sc-{genenv,grpo}-s{7,8}"

CLAIMS: tuple[Claim, ...] = (
    Claim("the default agent's gain, 3 seeds", "+0.101 [+0.013, +0.189]",
          lambda root: gains_over_seeds(root, AFTER),
          ((R, "Does the agent learn?"), (R, "**Gain, 3 seeds:"), (README, "What the runs show"),
           ("docs/GUIDE.md", "learns (sampled held-out reward")),
          "runs/after-s{0,1,2}"),
    *(Claim(f"the default agent's gain, seed {s}", v, (lambda root, s=s: ci(_held_out_gain().gain(
        *_held_out_gain().start_end(root / RUNS / f"after-s{s}")))), ((R, f"| {s} | {start} → {end} |"),),
        f"runs/after-s{s}") for s, start, end, v in (
        (0, "0.143", "0.211", "+0.068 [+0.024, +0.113]"), (1, "0.136", "0.274", "+0.139 [+0.094, +0.183]"),
        (2, "0.153", "0.249", "+0.095 [+0.057, +0.134]"))),
    Claim("the default agent's greedy score at the end, seeds 0-2", "0.266, 0.336, 0.336",
          lambda root: ", ".join(f"{run_end(root, r, 'score'):.3f}" for r in AFTER),
          ((R, "Greedy score at the end"),), "runs/after-s{0,1,2}"),
    Claim("default regime, GenEnv's gain, 3 seeds", "+0.117 [+0.034, +0.199]",
          lambda root: ci(paired_difference([e - 0.141 for e in _default_genenv(root)], [0.0] * 3)),
          ((R, "| gain over step 0 |"),), "runs/default-s0; seeds 1–2 not archived (ab1c73a)", archived=False),
    Claim("default regime, plain GRPO's gain, 3 seeds", "+0.130 [+0.105, +0.155]",
          lambda root: gains_over_seeds(root, DEF["grpo"]), ((R, "| gain over step 0 |"),), "runs/def-grpo-s{0,1,2}"),
    Claim("default regime, GenEnv-Random's gain, 3 seeds", "+0.109 [+0.038, +0.181]",
          lambda root: gains_over_seeds(root, DEF["random"]), ((R, "| gain over step 0 |"),),
          "runs/def-random-s{0,1,2}"),
    Claim("default regime, GenEnv-Static's gain, 3 seeds", "+0.110 [+0.038, +0.182]",
          lambda root: gains_over_seeds(root, DEF["static"]), ((R, "| gain over step 0 |"),),
          "runs/def-static-s{0,1,2}"),
    Claim("default regime, GenEnv − GRPO, 3 pairs", "−0.013 [−0.074, +0.049]",
          lambda root: _vs_default_genenv(root, "grpo", True),
          ((R, "| GenEnv − plain GRPO, default regime"), (R, "| GenEnv − GRPO |")),
          "runs/default-s0, runs/def-grpo-s{0,1,2}; GenEnv seeds 1–2 not archived (ab1c73a)", archived=False),
    Claim("default regime, GenEnv − Random, 3 pairs", "+0.008 [−0.116, +0.132]",
          lambda root: _vs_default_genenv(root, "random", True),
          ((R, "| GenEnv − GenEnv-Random, default regime"), (R, "| GenEnv − Random |")),
          "runs/default-s0, runs/def-random-s{0,1,2}; GenEnv seeds 1–2 not archived (ab1c73a)", archived=False),
    Claim("default regime, Static − GenEnv, 3 pairs", "−0.007 [−0.087, +0.073]",
          lambda root: _vs_default_genenv(root, "static", False),
          ((R, "| GenEnv-Static − GenEnv, default regime"), (R, "| Static − GenEnv |")),
          "runs/default-s0, runs/def-static-s{0,1,2}; GenEnv seeds 1–2 not archived (ab1c73a)", archived=False),
    Claim("default regime, Random − GRPO, 3 pairs", "−0.021 [−0.093, +0.052]",
          lambda root: ends_paired(root, DEF["random"], DEF["grpo"]), ((R, "| Random − GRPO |"),),
          "runs/def-random-s{0,1,2}, runs/def-grpo-s{0,1,2}"),
    Claim("default regime, Static − GRPO, 3 pairs", "−0.020 [−0.094, +0.054]",
          lambda root: ends_paired(root, DEF["static"], DEF["grpo"]), ((R, "| Static − GRPO |"),),
          "runs/def-static-s{0,1,2}, runs/def-grpo-s{0,1,2}"),
    Claim("default regime, Static − Random, 3 pairs", "+0.001 [−0.142, +0.144]",
          lambda root: ends_paired(root, DEF["static"], DEF["random"]), ((R, "| Static − Random |"),),
          "runs/def-static-s{0,1,2}, runs/def-random-s{0,1,2}"),
    Claim("scarce regime, GenEnv − GRPO, 9 pairs", "+0.025 [−0.014, +0.063]", _scarce_genenv_minus_grpo,
          ((R, "| GenEnv − plain GRPO, scarce regime"), (R, "| GenEnv − GRPO, 9 pairs |")), _SC, archived=False),
    Claim("scarce regime, GenEnv's gain, 9 seeds", "+0.069 [+0.042, +0.097]", lambda root: _scarce_gain(root, "genenv"),
          ((R, "| gain over step 0, 9 seeds |"),), _SC, archived=False),
    Claim("scarce regime, GRPO's gain, 9 seeds", "+0.045 [+0.019, +0.070]", lambda root: _scarce_gain(root, "grpo"),
          ((R, "| gain over step 0, 9 seeds |"),), _SC, archived=False),
    Claim("scarce regime, GenEnv − Random, 5 pairs", "+0.002 [−0.013, +0.018]",
          lambda root: _recorded_diffs("scarce_genenv_minus_random"),
          ((R, "| GenEnv − GenEnv-Random, scarce regime"), (R, "| GenEnv − Random, 5 pairs |")),
          "not archived (b0e8555, 312c36b)", archived=False),
    Claim("scarce regime, Random − GRPO, 5 pairs", "+0.034 [−0.015, +0.083]",
          lambda root: _recorded_diffs("scarce_random_minus_grpo"), ((R, "| Random − GRPO, 5 pairs |"),),
          "not archived (b0e8555, 312c36b)", archived=False),
    Claim("scarce regime, Static − GRPO, 3 pairs", "+0.040 [+0.015, +0.066]",
          lambda root: _recorded_diffs("scarce_static_minus_grpo"),
          ((R, "| GenEnv-Static − plain GRPO, scarce regime"), (R, "| Static − GRPO, 3 pairs |")),
          "not archived (b0e8555)", archived=False),
    Claim("scarce regime, Static − GenEnv, 3 pairs", "−0.006 [−0.158, +0.146]",
          lambda root: _recorded_diffs("scarce_static_minus_genenv"),
          ((R, "| GenEnv-Static − GenEnv, scarce regime"), (R, "| Static − GenEnv, 3 pairs |")),
          "not archived (b0e8555)", archived=False),
    Claim("scarce Static − GRPO at the Bonferroni level for 15 comparisons", "+0.040 [−0.065, +0.146]",
          _bonferroni_static_minus_grpo, ((R, "Bonferroni"),), "not archived (b0e8555)", archived=False),
    Claim("chance that 1 of 15 independent null comparisons excludes 0", "0.54", _chance_of_one,
          ((R, "| What do the comparisons"),), "arithmetic"),
    Claim("frozen agent, hint on: trained − Random, mean |p̂ − α|, 3 pairs", "+0.003 [−0.013, +0.018]",
          _recorded_pairs("frozen_abs_error_trained_hint", "frozen_abs_error_random_hint"),
          ((R, "| Does the simulator learn a curriculum"), (R, "| mean \\|p̂ − α\\|, hint on")),
          "not archived (b1f4e16)", archived=False),
    Claim("frozen agent, both hint settings: trained − Random, mean |p̂ − α|, 5 pairs", "+0.003 [−0.004, +0.009]",
          _frozen_both_settings, ((R, "| mean \\|p̂ − α\\|, both settings"),), "not archived (b1f4e16, fe439b3)",
          archived=False),
    Claim("frozen agent, hint on: trained − Random, in-band fraction, 3 pairs", "+0.007 [−0.056, +0.069]",
          _recorded_pairs("frozen_in_band_trained_hint", "frozen_in_band_random_hint"),
          ((R, "| in-band fraction, hint on"),), "not archived (b1f4e16)", archived=False),
    Claim("data=paper, API-Bank (agent interface), GenEnv − GRPO, 3 seeds", "+0.008 [−0.117, +0.132]",
          _paper("api_bank"), ((R, "| the paper's benchmarks, agent interface"), (R, "| API-Bank, agent"),
                               (E, "| API-Bank, agent |")), "evals/pg{0,1,2}-api_bank-agent, evals/pr{0,1,2}-…"),
    Claim("data=paper, BFCL (agent interface), GenEnv − GRPO, 3 seeds", "+0.006 [−0.013, +0.026]",
          _paper("bfcl"), ((R, "| the paper's benchmarks, agent interface"), (R, "| BFCL, agent"),
                           (E, "| BFCL, agent |")), "evals/pg{0,1,2}-bfcl-agent, evals/pr{0,1,2}-bfcl-agent"),
    Claim("data=paper, Bamboogle (agent interface), GenEnv − GRPO, 3 seeds", "+0.000 [−0.034, +0.034]",
          _paper("bamboogle"), ((R, "| the paper's benchmarks, agent interface"), (R, "| Bamboogle, agent"),
                                (E, "| Bamboogle, agent (F1 = 1) |")),
          "evals/pg{0,1,2}-bamboogle-agent, evals/pr{0,1,2}-bamboogle-agent"),
    Claim("data=paper, BFCL (official checker), GenEnv − GRPO, 3 seeds", "+0.003 [−0.025, +0.032]",
          _paper("bfcl", "heldout100"), ((R, "| the paper's benchmarks, their own protocols"),
                                         (R, "| BFCL, own"), (E, "| BFCL, own (official checker) |")),
          "evals/pg{0,1,2}-bfcl-heldout100, evals/pr{0,1,2}-bfcl-heldout100"),
    Claim("data=paper, plain GRPO − embedded model, API-Bank (agent interface), 3 seeds", "+0.043 [+0.017, +0.070]",
          _over_embedded("api_bank", "pr"), ((R, "plain GRPO − embedded"), (E, "plain GRPO's gain"),
                                             (E, "| GRPO − embedded |")),
          "evals/pr{0,1,2}-api_bank-agent, evals/emb-api_bank-agent"),
    Claim("data=paper, GenEnv − embedded model, API-Bank (agent interface), 3 seeds", "+0.051 [−0.066, +0.168]",
          _over_embedded("api_bank", "pg"), ((E, "| GenEnv − embedded |"),),
          "evals/pg{0,1,2}-api_bank-agent, evals/emb-api_bank-agent"),
    Claim("data=paper, GenEnv − embedded model, BFCL (agent interface), 3 seeds", "+0.023 [−0.006, +0.051]",
          _over_embedded("bfcl", "pg"), ((E, "| GenEnv − embedded |"),),
          "evals/pg{0,1,2}-bfcl-agent, evals/emb-bfcl-agent"),
    Claim("data=paper, plain GRPO − embedded model, BFCL (agent interface), 3 seeds", "+0.016 [+0.006, +0.027]",
          _over_embedded("bfcl", "pr"), ((E, "| GRPO − embedded |"),),
          "evals/pr{0,1,2}-bfcl-agent, evals/emb-bfcl-agent"),
    Claim("the default agent, API-Bank (agent interface)", "0.400", _headline_of("def0-api_bank-agent"),
          ((E, "| API-Bank, agent |"),), "evals/def0-api_bank-agent"),
    Claim("the embedded model, API-Bank (agent interface)", "0.395", _headline_of("emb-api_bank-agent"),
          ((E, "| API-Bank, agent |"),), "evals/emb-api_bank-agent"),
    Claim("the default agent, BFCL (agent interface)", "0.065", _headline_of("def0-bfcl-agent"),
          ((E, "| BFCL, agent |"),), "evals/def0-bfcl-agent"),
    Claim("the embedded model, BFCL (agent interface)", "0.042", _headline_of("emb-bfcl-agent"),
          ((E, "| BFCL, agent |"),), "evals/emb-bfcl-agent"),
    Claim("the default agent, API-Bank (ToolRL's protocol)", "0.004", _headline_of("def0-api_bank-heldout"),
          ((E, "| API-Bank, own"),), "evals/def0-api_bank-heldout"),
    Claim("the default agent, ALFWorld single step (100 items)", "0.000", _headline_of("def0-alfworld100"),
          ((E, "| ALFWorld valid_seen"),), "evals/def0-alfworld100"),
    Claim("the default agent, TravelPlanner (100 items)", "0.000", _headline_of("def0-travelplanner100"),
          ((E, "| TravelPlanner (partial checks)"),), "evals/def0-travelplanner100"),
    Claim("the default run's wall time before the cuts", "2,035 s", _wall("before-s0"),
          ((B, "| `wall_time_s` |"),), "runs/before-s0/summary.json"),
    Claim("the default run's wall time", "1,450 s", _wall("after-s0"),
          ((B, "| `wall_time_s` |"), (README, "on the machine of the archived run")), "runs/after-s0/summary.json"),
    Claim("the default run's wall time against before the cuts", "0.71×", _ratio,
          ((B, "| / before |"),), "runs/{before,after}-s0/summary.json"),
)


FIGURES = RESULTS / "standing"


def plot(root: Path = ROOT, out: Path | None = None) -> list[Path]:
    """RESULTS.md's two figures from the archived runs: the default agent's start and end per seed
    (``agent_gain.png``), and the default regime's end per seed and setting (``default_regime.png``; GenEnv's
    seeds 1-2, not archived, drawn hollow)."""
    plt = pyplot()
    out = Path(out) if out is not None else root / FIGURES
    out.mkdir(parents=True, exist_ok=True)
    hog = _held_out_gain()
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for i, run in enumerate(AFTER):
        start, end = hog.start_end(root / RUNS / run)
        ax.plot([0, 1], [statistics.fmean(start.values()), statistics.fmean(end.values())], marker="o",
                color=COLORS[i], label=f"seed {i}")
    ax.set_xticks([0, 1], ["step 0", "end (48 agent steps)"])
    ax.set_ylabel("sampled held-out reward (128 tasks × 8)")
    ax.set_title("the default run: start and end, 3 seeds")
    ax.legend()
    fig.tight_layout()
    paths = [out / "agent_gain.png"]
    fig.savefig(paths[-1], dpi=DPI)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=FIGSIZE)
    arms = [("GenEnv", ["default-s0"]), ("plain GRPO", DEF["grpo"]), ("GenEnv-Random", DEF["random"]),
            ("GenEnv-Static", DEF["static"])]
    for x, (_label, runs) in enumerate(arms):
        ends = [run_end(root, r) for r in runs]
        for s, e in enumerate(ends):
            ax.plot(x + (s - 1) * 0.1, e, "o", color=COLORS[s], label=f"seed {s}" if x == 1 else None)
    for s in (1, 2):
        ax.plot((s - 1) * 0.1, RECORDED["default_genenv_end"][s], "o", mfc="none", color=COLORS[s])
    ax.axhline(0.141, color="gray", linestyle="--", label="step 0 (every run)")
    ax.set_xticks(range(len(arms)), [a for a, _ in arms])
    ax.set_ylabel("sampled held-out reward at the end")
    ax.set_title("default regime, end of run (hollow: not archived)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    paths.append(out / "default_regime.png")
    fig.savefig(paths[-1], dpi=DPI)
    plt.close(fig)
    return paths


def _bench_script(name: str):
    """A ``bench/`` script as a module (they are not a package), loaded once."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # their dataclasses need the module registered
        spec.loader.exec_module(module)
    return sys.modules[name]


def _phase_row(phases: tuple[str, ...], runs: tuple[str, ...]) -> Callable[[Path], str]:
    """A row of BENCHMARKS.md's phase table: the phases' seconds summed over each run (``bench/phase_times.py``)."""
    def compute(root: Path) -> str:
        cells = []
        for run in runs:
            series, _ = _bench_script("phase_times").phase_series(root / RUNS / run)
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

CLAIMS = CLAIMS + tuple(
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


_CAL, _CAL_OP = "calibrated", "calibrated-op"  # digits as first defined; digits needing an operation


def _calibrated(root: Path, folder: str, *runs: str) -> Setting:
    """The archived calibrated-solver runs ``runs`` of ``docs/results/<folder>``, one setting."""
    return settings([read_run(root / RESULTS / folder / run) for run in runs])[0]


def _per_seed(view: Callable[[Setting], list[float]]) -> Callable[..., Callable[[Path], str]]:
    """``(folder, *runs) -> compute``: a setting's per-seed values of ``view`` (a :class:`Setting` method),
    ``a / b / c``."""
    return lambda folder, *runs: lambda root: " / ".join(f"{e:.3f}" for e in view(_calibrated(root, folder, *runs)))


_last_epochs = _per_seed(Setting.last)  # |p-bar - alpha| at the last epoch
_tail_means = _per_seed(Setting.tail_mean)  # mean |p-bar - alpha| from epoch 5 on


def _untrained_distance(folder: str, run: str) -> Callable[[Path], str]:
    """A never-trained run's mean |p-bar - alpha| over epochs 2 on."""
    return lambda root: f"{_calibrated(root, folder, run).later_mean()[0]:.3f}"


def _untrained_p_bars(root: Path) -> list[float]:
    """The never-trained simulator's p-bar over epochs 2-10 at alpha 0.5 (digits as first defined)."""
    return [e["curriculum/p_hat_mean"] for e in _calibrated(root, _CAL, "untrained-a05-s0").runs[0].epochs[1:]]


def _bare_numbers(run: str) -> Callable[[Path], str]:
    """``k of n``: of a run's rated tasks in epochs 8-10, those ``digits`` no longer rates (no operation asked)."""
    def compute(root: Path) -> str:
        rows = read_jsonl_strict(root / RESULTS / _CAL / run / "calibration_tasks.jsonl")
        rated = [r for r in rows if r["epoch"] >= 7 and r["d"] is not None]
        bare = [r for r in rated if digits(SimpleNamespace(question=r["question"])) is None]
        return f"{len(bare)} of {len(rated)}"
    return compute


def _calibration_wall(run: str) -> Callable[[Path], str]:
    def compute(root: Path) -> str:
        summary = json.loads((root / RESULTS / _CAL / run / "summary.json").read_text(encoding="utf-8"))
        return f"{round(summary['wall_time_s']):,} s"
    return compute


CLAIMS = CLAIMS + (
    *(Claim(f"calibrated solver, grpo, alpha 0.{a[1]}: |p-bar - alpha| at epoch 10 per seed", value,
            _last_epochs(_CAL, *(f"grpo-a{a}-s{s}" for s in seeds)), ((R, phrase),), f"{_CAL}/grpo-a{a}-s*")
      for a, seeds, value, phrase in (
          ("02", (0, 1), "0.108 / 0.075", "within 0.1 on 6 of its 8"), ("05", (0, 1, 2), "0.026 / 0.212 / 0.049",
                                                                        "within 0.1 on 6 of its 8"),
          ("08", (0, 1, 2), "0.296 / 0.024 / 0.039", "α = 0.8 **0.296"))),
    *(Claim(f"calibrated solver, never trained, alpha 0.{a[1]}: mean |p-bar - alpha| over epochs 2-10", value,
            _untrained_distance(_CAL, f"untrained-a{a}-s0"), ((R, phrase),), f"{_CAL}/untrained-a{a}-s0")
      for a, value, phrase in (("02", "0.280", "The never-trained simulator stays"),
                               ("05", "0.245", "but only **0.245"), ("08", "0.542", "0.2) and **0.542"))),
    Claim("calibrated solver, grpo, alpha 0.2, d0 + 0.2 an epoch: |p-bar - alpha| at epoch 10", "0.128",
          _last_epochs(_CAL, "grpo-a02-move-s0"), ((R, "The moving target is not followed"),),
          f"{_CAL}/grpo-a02-move-s0"),
    *(Claim(f"calibrated solver, {run}: bare numbers among the rated tasks of epochs 8-10", value, _bare_numbers(run),
            ((R, phrase),), f"{_CAL}/{run}/calibration_tasks.jsonl")
      for run, value, phrase in (("grpo-a05-s0", "34 of 87", "In epochs 8–10, **34 of 87"),
                                 ("grpo-lr2e3-a08-s0", "82 of 101", "**82 of 101"),
                                 ("untrained-a05-s0", "39 of 68", "(**39 of 68"))),
    *(Claim(f"calibrated solver, digits with an operation, never trained, alpha 0.{a[1]}: mean |p-bar - alpha| over "
            "epochs 2-10", value, _untrained_distance(_CAL_OP, f"untrained-a{a}-s0"), ((R, phrase),),
            f"{_CAL_OP}/untrained-a{a}-s0")
      for a, value, phrase in (("05", "0.392", "now stays **0.392"), ("08", "0.567", "against **0.567"))),
    *(Claim(f"calibrated solver, digits with an operation, grpo, alpha 0.{a[1]}: |p-bar - alpha| {what} per seed",
            value, f(_CAL_OP, f"grpo-a{a}-s0", f"grpo-a{a}-s1"), ((R, phrase),),
            f"{_CAL_OP}/grpo-a{a}-s*")
      for a, what, f, value, phrase in (
          ("05", "at epoch 10", _last_epochs, "0.104 / 0.027", "ends at **0.104 / 0.027"),
          ("05", "over epochs 5-10", _tail_means, "0.062 / 0.122", "**0.062 / 0.122** on average"),
          ("08", "at epoch 10", _last_epochs, "0.054 / 0.003", "At α = 0.8: **"),
          ("08", "over epochs 5-10", _tail_means, "0.190 / 0.041", "**0.190 / 0.041**"))),
    Claim("calibrated solver, digits with an operation, never trained, alpha 0.2: |p-bar - alpha| at epoch 1",
          "0.129", lambda root: f"{_calibrated(root, _CAL_OP, 'untrained-a02-s0').first()[0]:.3f}",
          ((R, "now fail, so it starts only **"),), f"{_CAL_OP}/untrained-a02-s0"),
    Claim("calibrated solver, never trained, alpha 0.5: sd of p-bar over epochs 2-10", "0.072",
          lambda root: f"{statistics.stdev(_untrained_p_bars(root)):.3f}",
          ((R, "deviation of 0.072"),), f"{_CAL}/untrained-a05-s0"),
    *(Claim(f"calibrated solver, {run}: wall time beside other jobs", value, _calibration_wall(run),
            ((B, "a 10-epoch calibrated-solver run"),), f"{_CAL}/{run}/summary.json")
      for run, value in (("grpo-a05-s0", "2,340 s"), ("untrained-a05-s0", "659 s"))),
)


def check_all(root: Path = ROOT) -> list[str]:
    return [p for c in CLAIMS for p in c.check(root)]


def table(root: Path = ROOT) -> list[str]:
    rows = ["| figure | stated | recomputed | data | agrees |", "|---|---|---|---|---|"]
    for c in CLAIMS:
        rows.append(f"| {c.name} | {c.value} | {c.compute(root)} | {c.data} | "
                    f"{'yes' if not c.check(root) else 'NO'}{'' if c.archived else ' (recorded values)'} |")
    return rows


def main(argv: list[str]) -> int:
    if "--help" in argv or "-h" in argv:
        print(__doc__)
        return 0
    if "--plot" in argv:
        print("\n".join(str(p) for p in plot()))
        return 0
    if "--check" in argv:
        problems = check_all()
        print("\n".join(problems) if problems else f"{len(CLAIMS)} figures agree with docs/results")
        return 1 if problems else 0
    print("\n".join(table()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
