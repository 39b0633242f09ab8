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

Where they are: :mod:`~lightning_genenv.report.claims_runs` (the co-evolution runs),
:mod:`~lightning_genenv.report.claims_bench` (the evaluation cells, the benchmarks' tables),
:mod:`~lightning_genenv.report.claims_calibrated` (the calibrated solver),
:mod:`~lightning_genenv.report.claims_replay` (the calibrated solver with replayed seeds),
:mod:`~lightning_genenv.report.claims_measured` (the calibrated solver measured apart from its training),
:mod:`~lightning_genenv.report.claims_prompt` (what the simulator's prompt shows, and the runs that test it),
:mod:`~lightning_genenv.report.claims_sampler` (the simulator's sampling temperature moved over the run),
:mod:`~lightning_genenv.report.claims_settings` (the calibrated bar, one row per pre-registered set),
:mod:`~lightning_genenv.report.claims_frozen` (the frozen agent with the group objective),
:mod:`~lightning_genenv.report.claims_coevo` (co-evolution on the four families); :class:`Claim` is in
:mod:`~lightning_genenv.report.claim`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lightning_genenv.report.claim import ROOT, RUNS, Claim  # noqa: F401  (the names tests and readers use)
from lightning_genenv.report.claims_bench import BENCH_CLAIMS
from lightning_genenv.report.claims_calibrated import CALIBRATED_CLAIMS
from lightning_genenv.report.claims_coevo import COEVO_CLAIMS
from lightning_genenv.report.claims_frozen import FROZEN_CLAIMS
from lightning_genenv.report.claims_measured import MEASURED_CLAIMS
from lightning_genenv.report.claims_prompt import PROMPT_CLAIMS
from lightning_genenv.report.claims_replay import REPLAY_CLAIMS
from lightning_genenv.report.claims_runs import RUN_CLAIMS
from lightning_genenv.report.claims_sampler import SAMPLER_CLAIMS
from lightning_genenv.report.claims_settings import SETTINGS_CLAIMS
from lightning_genenv.report.standing_figures import plot

CLAIMS: tuple[Claim, ...] = (RUN_CLAIMS + BENCH_CLAIMS + CALIBRATED_CLAIMS + REPLAY_CLAIMS + MEASURED_CLAIMS
                             + PROMPT_CLAIMS + SAMPLER_CLAIMS + SETTINGS_CLAIMS + FROZEN_CLAIMS + COEVO_CLAIMS)


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
