"""The paper's five benchmarks behind one record type (:class:`Benchmark`), by name.

``BENCHMARKS[name]`` gives the loader, the scorer and the summarizer; ``evaluate.py`` and the
training validation hook use nothing else. Each module's docstring says what it scores, what it
does not, and how that differs from the paper.
"""

from lightning_genenv.benchmarks import alfworld, api_bank, bamboogle, bfcl, travelplanner
from lightning_genenv.benchmarks.common import (
    Benchmark, BenchItem, BenchmarkDataError, ItemResult,
)

BENCHMARKS: dict[str, Benchmark] = {
    b.BENCHMARK.name: b.BENCHMARK for b in (api_bank, bfcl, alfworld, bamboogle, travelplanner)
}

__all__ = ["BENCHMARKS", "Benchmark", "BenchItem", "BenchmarkDataError", "ItemResult"]
