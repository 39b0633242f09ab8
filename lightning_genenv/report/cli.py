"""The command line: ``python -m lightning_genenv.report runs=[<run_dir>,...] [out=DIR] [alpha=A] [band=B]``;
bare directories (``report <sweep_dir>``) join ``runs``, and a ``train.py -m`` sweep directory stands for its runs.

:func:`make_report` checks every path, reads the runs, groups them, and writes the plots and
``report.md``; :func:`main` parses the arguments with the shared composer (``--help``: the package's
docstring and the keys; ``--cfg``: the parsed keys) and turns every input problem into a one-line error.

Deliberately left out: config groups (the report's keys are plain ``key=value``), and any output
but the files (the console gets one line naming ``report.md``).
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from omegaconf import MISSING, DictConfig

from lightning_genenv.config import ConfigError, parse_cli
from lightning_genenv.report.groups import group_runs
from lightning_genenv.report.markdown import write_markdown
from lightning_genenv.report.plots import plot_all
from lightning_genenv.report.runs import ReportError, check_run_dir, label_runs, load_run


def make_report(run_dirs: list[str | Path], out: str | Path | None = None, alpha: float | None = None,
                band: float | None = None) -> Path:
    """Write the plots and ``report.md``; returns the output directory."""
    run_dirs = expand_sweeps(run_dirs)
    if not run_dirs:
        raise ReportError("give at least one run directory")
    for p in run_dirs:  # every path is checked before any is read
        check_run_dir(p)
    runs = [load_run(p) for p in run_dirs]
    label_runs(runs)
    groups = group_runs(runs, alpha, band)
    out = Path(out) if out is not None else (Path(run_dirs[0]) / "report" if len(run_dirs) == 1 else Path("report"))
    out.mkdir(parents=True, exist_ok=True)
    plots = plot_all(groups, out)
    write_markdown(groups, runs, out, plots)
    return out


def expand_sweeps(paths: list[str | Path]) -> list[Path]:
    """Each path as given, except a sweep directory (``train.py -m``: no ``config.yaml`` of its own, run
    directories under it), which becomes its runs, in the sweep's order."""
    out = []
    for p in map(Path, paths):
        runs = [] if (p / "config.yaml").is_file() or not p.is_dir() else \
            [d for d in p.iterdir() if d.is_dir() and (d / "config.yaml").is_file()]
        key = lambda d: (int(d.name.split("-")[0]) if d.name.split("-")[0].isdigit() else 1 << 30, d.name)
        out += sorted(runs, key=key) if runs else [p]
    return out


def _positional(argv: list[str]) -> list[str]:
    """``report <dir> [<dir> ...] [key=value ...]``: bare directories join ``runs=[...]``."""
    dirs = [a for a in argv if "=" not in a and not a.startswith("-")]
    if not dirs:
        return argv
    return [a for a in argv if a not in dirs] + ["runs=[" + ",".join(dirs) + "]"]


@dataclass
class ReportConfig:
    runs: list[str] = MISSING  # run directories written by train.py (or a -m sweep dir), e.g. runs=[runs/a,runs/b]
    out: Optional[str] = None  # output directory; None: <run_dir>/report for one run, else ./report
    alpha: Optional[float] = None  # target p-hat for the shading; None: each run's curriculum.alpha
    # half-width of the band around alpha; None: each run's curriculum.band, or its curriculum.in_band_width if null
    band: Optional[float] = None


def parse_script_args(argv: list[str], doc: str, schema: type) -> DictConfig | None:
    """The ``key=value`` arguments of a ``bench/`` script, typed by its ``schema`` dataclass with the shared
    composer (``runs=[a,b]`` lists, unknown keys and wrong types named; ``--help``: ``doc`` and the keys, then
    None). A bad argument exits with one line, ``error: ...``, and status 2."""
    try:
        return parse_cli(argv, doc, schema, conf_dir=None)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


def main(argv: list[str] | None = None) -> Path | None:
    try:
        doc = importlib.import_module(__package__).__doc__  # the package's docstring is the command's
        cfg = parse_cli(_positional(sys.argv[1:] if argv is None else argv), doc, ReportConfig, conf_dir=None)
        if cfg is None:
            return None
        out = make_report(list(cfg.runs), cfg.out, cfg.alpha, cfg.band)
    except (ConfigError, ReportError) as e:
        sys.exit(f"error: {e}")
    print(f"report: {out / 'report.md'}")
    return out
