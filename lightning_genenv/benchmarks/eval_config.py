"""The typed schema of ``evaluate.py``: flat ``key=value`` overrides on the dataclass defaults,
composed by :func:`lightning_genenv.config.compose` (the same merge, errors and ``--help`` as
``train.py``).

Deliberately left out: YAML files and groups (evaluation has a handful of flat keys; the
dataclass below is their single source of truth).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional

from omegaconf import MISSING, DictConfig

from lightning_genenv.config import BENCHMARK_NAMES, DTYPES, NO_TRAIN_SPLIT, ConfigError, check, compose
from lightning_genenv.config.schema import RolloutConfig
from lightning_genenv.rollout_engines import BACKEND_CHOICES

REPO_ROOT = Path(__file__).resolve().parent.parent.parent


@dataclass
class EvalConfig:
    benchmark: Literal[BENCHMARK_NAMES] = MISSING  # the benchmark to evaluate on (required)
    model: str = "embedded"  # embedded | tiny | a local model directory | a train run directory | a cached HF id
    # the generation backend, chosen as train.py chooses it (auto: vLLM when it runs the model); vllm with
    # conf/rollout/vllm.yaml's settings
    rollout: Literal[BACKEND_CHOICES] = RolloutConfig.backend
    # benchmark: the benchmark's own prompt and checker | agent: the held-out part as the converted tasks a
    # data=<benchmark> run trains on, in the agent's prompt, scored by its reward (benchmarks/agent_format.py)
    interface: Literal["benchmark", "agent"] = "benchmark"
    limit: Optional[int] = None  # evaluate this many items, spread evenly over the benchmark
    # all | heldout (the part of a derived split that data=<benchmark> never trains on); None: heldout
    # when model= is a train run directory whose data.benchmark is this benchmark, else all
    split: Optional[Literal["all", "heldout"]] = None
    out: Optional[str] = None  # output directory; None: <run>/eval/<benchmark> or runs/eval/<benchmark>-<time>
    data_root: Optional[str] = None  # None: ../shared/benchmarks next to the repository, if it exists
    batch_size: int = 8  # prompts per generate call
    # step: one model turn per item | episode: full ALFWorld games in TextWorld (alfworld only)
    mode: Literal["step", "episode"] = "step"
    max_steps: int = 50  # mode=episode: actions per game before it counts as lost
    # None: the benchmark's default; interface=agent: the run's agent.max_completion_length, at least data=<benchmark>'s
    max_new_tokens: Optional[int] = None
    dtype: Literal[DTYPES] = "float32"  # the dtype the weights are loaded in
    cache_dir: Optional[str] = None  # where the embedded and tiny models are cached
    tb_dir: Optional[str] = None  # TensorBoard log dir; None: <run>/tb/eval for a train run, else none
    progress: bool = True  # a progress bar over the items
    judge_url: Optional[str] = None  # OpenAI-compatible base URL (…/v1) for the Bamboogle judge; off
    judge_model: str = "gpt-4o"  # the judge's model name
    judge_api_key_env: Optional[str] = "OPENAI_API_KEY"  # name of the env variable holding the key

    def __post_init__(self):
        check(self.split != "heldout" or self.benchmark not in NO_TRAIN_SPLIT,
              f"split=heldout: {self.benchmark} has no derived train/held-out split "
              f"({NO_TRAIN_SPLIT.get(self.benchmark)})")
        check(self.interface != "agent" or self.benchmark not in NO_TRAIN_SPLIT,
              f"interface=agent: {self.benchmark} has no converted tasks ({NO_TRAIN_SPLIT.get(self.benchmark)})")
        check(self.interface != "agent" or self.mode == "step", "interface=agent scores single steps (mode=step)")
        check(self.mode != "episode" or self.benchmark == "alfworld",
              f"mode=episode: only benchmark=alfworld has episodes (got {self.benchmark})")
        check(self.max_steps >= 1, f"max_steps={self.max_steps} must be >= 1")
        check(self.limit is None or self.limit >= 1, f"limit={self.limit} must be >= 1")
        check(self.batch_size >= 1, f"batch_size={self.batch_size} must be >= 1")
        check(self.max_new_tokens is None or self.max_new_tokens >= 1,
              f"max_new_tokens={self.max_new_tokens} must be >= 1")
        check(self.data_root is None or Path(self.data_root).is_dir(),
              f"data_root={self.data_root}: directory not found")


def default_data_root() -> Path | None:
    candidate = REPO_ROOT.parent / "shared" / "benchmarks"
    return candidate if candidate.is_dir() else None


def compose_eval(argv: list[str]) -> DictConfig:
    """``evaluate.py``'s config: :class:`EvalConfig` with ``argv``'s overrides, its data root filled in."""
    cfg = compose(argv, conf_dir=None, schema=EvalConfig)
    if cfg.data_root is None:
        found = default_data_root()
        if found is None:
            raise ConfigError("data_root= is required: no ../shared/benchmarks next to the repository")
        cfg.data_root = str(found)
    return cfg
