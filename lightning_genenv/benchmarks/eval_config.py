"""The typed schema of ``evaluate.py`` and its composer: ``key=value`` overrides on the dataclass
defaults, with the same one-line errors as :mod:`lightning_genenv.config`.

Deliberately left out: YAML files and groups (evaluation has a handful of flat keys; the
dataclass below is their single source of truth).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from lightning_genenv.config import NO_TRAIN_SPLIT, ConfigError, _leaf_keys, _nearest, parse_overrides

REPO_ROOT = Path(__file__).resolve().parent.parent.parent


@dataclass
class EvalConfig:
    benchmark: Optional[str] = None  # api_bank | bfcl | alfworld | bamboogle | travelplanner (required)
    model: str = "embedded"  # embedded | tiny | a local model directory | a train run directory | a cached HF id
    rollout: str = "hf"  # hf | vllm (with conf/rollout/vllm.yaml's settings)
    limit: Optional[int] = None  # evaluate this many items, spread evenly over the benchmark
    # all | heldout (the part of a derived split that data=<benchmark> never trains on); None: heldout
    # when model= is a train run directory whose data.benchmark is this benchmark, else all
    split: Optional[str] = None
    out: Optional[str] = None  # output directory; None: <run>/eval/<benchmark> or runs/eval/<benchmark>-<time>
    data_root: Optional[str] = None  # None: ../shared/benchmarks next to the repository, if it exists
    batch_size: int = 8  # prompts per generate call
    mode: str = "step"  # step: one model turn per item | episode: full ALFWorld games in TextWorld (alfworld only)
    max_steps: int = 50  # mode=episode: actions per game before it counts as lost
    max_new_tokens: Optional[int] = None  # None: the benchmark's default
    dtype: str = "float32"
    cache_dir: Optional[str] = None  # where the embedded and tiny models are cached
    tb_dir: Optional[str] = None  # TensorBoard log dir; None: <run>/tb/eval for a train run, else none
    progress: bool = True
    judge_url: Optional[str] = None  # OpenAI-compatible base URL (…/v1) for the Bamboogle judge; off
    judge_model: str = "gpt-4o"
    judge_api_key_env: Optional[str] = "OPENAI_API_KEY"  # name of the env variable holding the key


CHOICES = {"rollout": ("hf", "vllm"), "dtype": ("float32", "bfloat16", "float16"), "split": ("all", "heldout"),
           "mode": ("step", "episode")}


def default_data_root() -> Path | None:
    candidate = REPO_ROOT.parent / "shared" / "benchmarks"
    return candidate if candidate.is_dir() else None


def compose_eval(argv: list[str]) -> DictConfig:
    from lightning_genenv.benchmarks import BENCHMARKS

    cfg = OmegaConf.structured(EvalConfig)
    valid = _leaf_keys(cfg)
    for key, value in parse_overrides(argv):
        if key not in valid:
            raise ConfigError(f"unknown config key '{key}' (from the command line){_nearest(key, valid)}")
        if key in CHOICES and value not in CHOICES[key]:
            raise ConfigError(f"{key}={value!r}: must be one of {', '.join(CHOICES[key])}")
        if key in ("model", "benchmark", "out", "data_root", "tb_dir") and value is not None:
            value = str(value)
        try:
            OmegaConf.update(cfg, key, value, merge=False)
        except OmegaConfBaseException as e:
            expected = type(OmegaConf.select(cfg, key)).__name__
            raise ConfigError(f"{key}={value!r}: wrong type, expected {expected} "
                              f"({str(e).splitlines()[0]})") from None
    if cfg.benchmark is None:
        raise ConfigError(f"benchmark= is required; one of {', '.join(BENCHMARKS)}")
    if cfg.benchmark not in BENCHMARKS:
        raise ConfigError(f"benchmark={cfg.benchmark}: unknown{_nearest(cfg.benchmark, list(BENCHMARKS))}")
    if cfg.split == "heldout" and cfg.benchmark in NO_TRAIN_SPLIT:
        raise ConfigError(f"split=heldout: {cfg.benchmark} has no derived train/held-out split "
                          f"({NO_TRAIN_SPLIT[cfg.benchmark]})")
    if cfg.mode == "episode" and cfg.benchmark != "alfworld":
        raise ConfigError(f"mode=episode: only benchmark=alfworld has episodes (got {cfg.benchmark})")
    if cfg.max_steps < 1:
        raise ConfigError(f"max_steps={cfg.max_steps} must be >= 1")
    if cfg.limit is not None and cfg.limit < 1:
        raise ConfigError(f"limit={cfg.limit} must be >= 1")
    if cfg.batch_size < 1:
        raise ConfigError(f"batch_size={cfg.batch_size} must be >= 1")
    if cfg.max_new_tokens is not None and cfg.max_new_tokens < 1:
        raise ConfigError(f"max_new_tokens={cfg.max_new_tokens} must be >= 1")
    if cfg.data_root is None:
        found = default_data_root()
        if found is None:
            raise ConfigError("data_root= is required: no ../shared/benchmarks next to the repository")
        cfg.data_root = str(found)
    if not Path(cfg.data_root).is_dir():
        raise ConfigError(f"data_root={cfg.data_root}: directory not found")
    return cfg
