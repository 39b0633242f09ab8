"""GenEnv-Static's task set: the simulator writes ``variations`` tasks per seed, once, before training.

``python -m lightning_genenv.static_augment out=static.jsonl [variations=5] [group=option key=value ...]``
uses the same config as ``train.py`` (``model.simulator``, ``simulator.*``, ``data.*``; ``--help``
lists every key, ``--cfg`` prints the composed config) and writes
the valid tasks as JSONL in our task schema; pass it to ``curriculum=static
curriculum.static_path=static.jsonl``. ``train.py`` runs the same function itself (:func:`static_tasks`)
when ``curriculum.task_source=static`` and no ``static_path`` is given, and records the file's path in the
run's ``run_choices.json``, where a resume finds it.

Deliberately left out: filtering the static set by the agent's success rate (GenEnv-Static
trains on what the simulator wrote; the ``k_min`` filter still applies to ``D_train`` in training).
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from omegaconf import MISSING

from lightning_genenv.config import Config, ConfigError, check, parse_cli
from lightning_genenv.data import GenEnvDataModule
from lightning_genenv.models import ModelUnavailable, load_from_config
from lightning_genenv.rollout import build_engine
from lightning_genenv.task_writing import write_tasks
from lightning_genenv.tasks import DataError, Task, write_jsonl_atomic


def augment(cfg, backend: str, model, tokenizer, dm, variations: int, out: str | Path) -> tuple[list[Task], Counter]:
    """Write ``variations`` tasks per base seed with the simulator (on the rollout ``backend``); save the valid
    ones to ``out``."""
    engine = build_engine(backend, model, tokenizer, cfg.rollout.batch_size,
                          cfg.trainer.enable_progress_bar, cfg.rollout)
    invalid: Counter = Counter()
    records = write_tasks(engine, tokenizer, dm.base, lambda s: dm.family_examples(s, cfg.simulator.num_examples),
                          cfg.simulator, epoch=-1, invalid=invalid, num_variations=variations)
    tasks = [r.task for r in records if r.task is not None]
    write_jsonl_atomic(out, [t.to_dict() for t in tasks])
    return tasks, invalid


def static_tasks(cfg, backend: str, run_dir: Path, dm, earlier: dict) -> str:
    """A static run's task set: ``curriculum.static_path``, else the one the run generated at an earlier start
    (``earlier``: that start's ``run_choices.json``), else GenEnv-Static's, which the simulator writes now."""
    cur = cfg.curriculum
    path = cur.static_path or earlier.get("curriculum", {}).get("static_path")
    if path is None:
        path = str(Path(run_dir) / "static_tasks.jsonl")
        model, tokenizer = load_from_config(cfg.model, cfg.model.simulator)
        augment(cfg, backend, model, tokenizer, dm, cur.static_variations, path)
    return path


@dataclass
class AugmentConfig(Config):
    """The training schema (``model.simulator``, ``simulator.*``, ``data.*``, ...) plus the output."""

    out: str = MISSING  # where the valid tasks go (JSONL in our task schema)
    variations: int = 5  # tasks written per base seed

    def __post_init__(self):
        super().__post_init__()
        check(self.variations >= 1, f"variations={self.variations} must be >= 1")


def main(argv: list[str] | None = None) -> Path | None:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        cfg = parse_cli(argv, __doc__, AugmentConfig)
        if cfg is None:
            return None
        model, tok = load_from_config(cfg.model, cfg.model.simulator)
        dm = GenEnvDataModule(cfg.data, cfg.agent, tok.pad_token_id, benchmarks_root=cfg.trainer.benchmarks_root)
        dm.setup()
        tasks, invalid = augment(cfg, cfg.rollout.backend, model, tok, dm, cfg.variations, cfg.out)
    except (ConfigError, FileNotFoundError, DataError, ModelUnavailable) as e:
        sys.exit(f"error: {e}")
    total = len(dm.base) * cfg.variations
    print(f"wrote {len(tasks)} valid tasks of {total} generations to {cfg.out}; invalid: {dict(invalid)}")
    return Path(cfg.out)


if __name__ == "__main__":
    main()
