"""One standing figure of the documents (:class:`Claim`): as they print it, how it is recomputed from
``docs/results``, and the lines that hold it; the paths and documents the figures name.

A figure whose runs were not archived is kept only as a claim with ``archived=False``: it is recomputed from the
per-seed values that RESULTS.md recorded when it was measured (three decimals, with the commit they came from), and
agrees when each of its numbers is within 0.0015 of the stated one (the recorded inputs are rounded). It checks the
arithmetic and that the documents agree, not the data. What the figures are is :mod:`lightning_genenv.report.claims`'.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path("docs/results")
RUNS = RESULTS / "runs"
EVALS = RESULTS / "evals"
TOLERANCE = 0.0015  # a not-archived claim's recomputation from three-decimal recorded values

R, B, E, README = "RESULTS.md", "BENCHMARKS.md", "EVALUATION.md", "README.md"


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
        if not self.archived and not close(got, self.value):
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


def close(a: str, b: str) -> bool:
    x, y = _numbers(a), _numbers(b)
    return len(x) == len(y) and all(math.isclose(u, v, abs_tol=TOLERANCE) for u, v in zip(x, y))


def bench_script(name: str):
    """A ``bench/`` script as a module (they are not a package), loaded once."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # their dataclasses need the module registered
        spec.loader.exec_module(module)
    return sys.modules[name]
