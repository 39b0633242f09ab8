"""The figures of the co-evolution runs (the agent's held-out gains, the regimes' paired differences, the frozen
agent, the paper's benchmarks, the default run's cost) as :class:`~lightning_genenv.report.claim.Claim` values,
recomputed from ``docs/results/runs`` and ``docs/results/evals``; and the per-seed values recorded for the runs that
were not archived (``RECORDED``). Left out: the calibrated solver's (``claims_calibrated.py``) and the benchmarks'
cell tables (``claims_bench.py``).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Callable

from lightning_genenv.report.claim import EVALS, README, RUNS, B, Claim, E, R, bench_script
from lightning_genenv.report.evals import read_summary
from lightning_genenv.report.stats import paired_difference

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
# default regime, 5 in the scarce one, 3 on the four families (claims_coevo), 4 on the paper's benchmarks (3 in the
# agent's interface, BFCL's own).
COMPARISONS = 18


def _minus(text: str) -> str:
    return text.replace("-", "−")


def ci(d) -> str:
    """``+0.101 [+0.013, +0.189]`` (the documents' minus sign) from ``paired_difference``'s tuple."""
    return _minus(f"{d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}]")


def _held_out_gain():
    """``bench/held_out_gain.py`` as a module: its readers of a run's step-0 and end validation."""
    return bench_script("held_out_gain")


def start_end_means(root: Path, run: str, metric: str = "sampled") -> tuple[float, float]:
    """The archived run's held-out reward at step 0 and at the end, each the mean over its tasks."""
    start, end = _held_out_gain().start_end(root / RUNS / run, metric)
    return statistics.fmean(start.values()), statistics.fmean(end.values())


def run_end(root: Path, run: str, metric: str = "sampled") -> float:
    return start_end_means(root, run, metric)[1]


def run_gain(root: Path, run: str) -> float:
    start, end = start_end_means(root, run)
    return end - start


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


_SC = "not archived: seeds 0–6 (79a4d3a, 312c36b, b0e8555); seeds 7–8 in runs/sc-{genenv,grpo}-s{7,8}"


RUN_CLAIMS: tuple[Claim, ...] = (
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
    Claim("scarce Static − GRPO at the Bonferroni level for 18 comparisons", "+0.040 [−0.076, +0.156]",
          _bonferroni_static_minus_grpo, ((R, "Bonferroni"),), "not archived (b0e8555)", archived=False),
    Claim("chance that 1 of 18 independent null comparisons excludes 0", "0.60", _chance_of_one,
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
