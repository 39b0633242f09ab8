"""Multi-run: ``python train.py -m seed=0,1,2 experiment=genenv,base_grpo`` (Hydra's ``--multirun`` grammar).

Every ``key=a,b,...`` (a comma outside brackets; ``key=[a,b]`` stays one list value) is swept, and the
runs are the product of the swept values, the first key varying slowest (Hydra's order). Each run gets
its own directory under one sweep directory (``sweep_dir=``; None: ``multirun/<timestamp>``), named
``<n>-<swept key=value,...>``. Every combination is composed (checked) before the first run starts;
``<sweep_dir>/multirun.yaml`` lists each run's overrides, directory and command line, then the runs go
one after another, each in its own process (a fresh interpreter: no state, memory or engine carries
over), and the sweep stops at the first that fails. ``python -m lightning_genenv.report <sweep_dir>``
reads every run under it.

On a cluster, run the commands that ``multirun.yaml`` lists as the tasks of an array job (one line each,
e.g. a Slurm ``--array`` indexing them): they are the same runs, in the same directories.

Deliberately left out: parallel launchers (one machine runs one training at a time), Hydra's range and
choice sweep syntax (``range(0,3)``, ``choice(a,b)``), and sweeping inside ``resume=``.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Callable, Sequence

import yaml

from lightning_genenv.config import ConfigError, compose, parse_overrides

FLAGS = ("-m", "--multirun")


def split_values(raw: str) -> list[str]:
    """``a,b,[c,d]`` -> ``["a", "b", "[c,d]"]``: commas outside brackets and braces separate values."""
    parts, depth, current = [], 0, ""
    for ch in raw:
        depth += ch in "[{"
        depth -= ch in "]}"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return [*parts, current]


def expand(args: Sequence[str]) -> list[list[str]]:
    """Every combination's argument list, the first swept key varying slowest; flags (``--config-dir``)
    and unswept arguments are kept in every run as given."""
    choices = []
    for arg in args:
        key, sep, raw = arg.partition("=")
        values = split_values(raw) if sep and not arg.startswith("-") else [raw]
        choices.append([f"{key}={v}" for v in values] if sep and len(values) > 1 else [arg])
    return [list(combo) for combo in itertools.product(*choices)]


def swept(args: Sequence[str], combo: Sequence[str]) -> list[str]:
    """The arguments of ``combo`` that the sweep varies (those that differ from what was given)."""
    return [c for a, c in zip(args, combo) if a != c]


def run_name(n: int, changes: Sequence[str]) -> str:
    name = f"{n}-" + ",".join(changes) if changes else str(n)
    return "".join(ch if ch.isalnum() or ch in "=,.-_+" else "_" for ch in name)[:200]


def plan(args: Sequence[str], now: datetime | None = None) -> tuple[Path, list[dict]]:
    """The sweep directory and one entry per run (``overrides``, ``run_dir``, ``command``), each composed
    (a bad combination is refused here, naming its overrides, before any run starts)."""
    keys = dict(parse_overrides([a for a in args if "=" in a and not a.startswith("-")]))
    if keys.get("run_dir") is not None:
        raise ConfigError("run_dir with -m: each run gets its own directory under sweep_dir; set sweep_dir= instead")
    if keys.get("resume") is not None:
        raise ConfigError("resume with -m is not supported: resume each run directory on its own")
    sweep_dir = Path(str(keys.get("sweep_dir") or Path("multirun") / (now or datetime.now()).strftime("%Y%m%d-%H%M%S")))
    runs = []
    for n, combo in enumerate(expand(args)):
        run_dir = sweep_dir / run_name(n, swept(args, combo))
        argv = [*combo, f"run_dir={run_dir}"] if keys.get("sweep_dir") else [*combo, f"sweep_dir={sweep_dir}",
                                                                                  f"run_dir={run_dir}"]
        try:
            compose_argv(argv)
        except ConfigError as e:
            raise ConfigError(f"run {n} ({' '.join(swept(args, combo)) or 'no sweep'}): {e}") from None
        runs.append({"num": n, "overrides": swept(args, combo), "run_dir": str(run_dir),
                     "argv": argv, "command": " ".join(["python", "train.py", *argv])})
    return sweep_dir, runs


def compose_argv(argv: Sequence[str]):
    """:func:`compose` of a train command line (its ``--config-dir`` flags included)."""
    from lightning_genenv.config.cli import split_config_dirs

    rest, dirs = split_config_dirs(list(argv))
    return compose(rest, extra_dirs=dirs)


def launch_process(argv: Sequence[str]) -> int:
    """One run of ``train.py`` in a fresh interpreter; its exit status."""
    return subprocess.run([sys.executable, "-m", "lightning_genenv.train", *argv]).returncode


def multirun(args: Sequence[str], launch: Callable[[Sequence[str]], int] | None = None) -> Path:
    """Plan the sweep, write ``multirun.yaml``, then run each combination in turn (``launch(argv)``: its exit
    status; None: :func:`launch_process`); stop at the first failure."""
    launch = launch or launch_process
    sweep_dir, runs = plan(args)
    sweep_dir.mkdir(parents=True, exist_ok=True)
    listing = [{k: r[k] for k in ("num", "overrides", "run_dir", "command")} for r in runs]
    (sweep_dir / "multirun.yaml").write_text(yaml.safe_dump({"runs": listing}, sort_keys=False))
    print(f"multirun: {len(runs)} runs in {sweep_dir}", flush=True)
    for r in runs:
        print(f"multirun: run {r['num']} of {len(runs)}: {' '.join(r['overrides']) or '(no sweep)'}", flush=True)
        rc = launch(r["argv"])
        if rc != 0:
            raise ConfigError(f"multirun: run {r['num']} ({r['run_dir']}) failed with exit status {rc}; "
                              f"the sweep stops (the runs before it are complete)")
    print(f"multirun: {len(runs)} runs done; python -m lightning_genenv.report {sweep_dir}", flush=True)
    return sweep_dir
