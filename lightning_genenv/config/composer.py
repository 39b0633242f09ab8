"""Composing a config: Hydra's command-line grammar onto a structured schema, errors made one line.

``conf/config.yaml`` has a ``defaults`` list naming one option per group; ``group=option`` picks
another file from ``conf/<group>/``; ``experiment=<name>`` applies ``conf/experiment/<name>.yaml`` (its
own ``defaults`` select groups, the rest overrides keys); ``key.sub=value`` sets a key last;
``--config-dir <dir>`` (:func:`option_files`) adds the user's ``<dir>/<group>/<option>.yaml`` files to the
groups, with the same checks, and ``experiment=path/to/file.yaml`` takes a file directly (the files,
and the ``# @package _global_`` header, are read by ``options.py``); ``resume=<run_dir>`` starts from
the config that run saved (:func:`save_config` writes it atomically; an empty or unreadable one is
refused), and ``key=value`` may change only the keys that
:data:`lightning_genenv.config.resume.SAFE_ON_RESUME` names; ``resume=auto`` with ``run_dir=``
composes the command as a new run, or as a resume of ``run_dir`` when it holds a checkpoint.
OmegaConf's merge onto the structured schema rejects unknown keys and wrong types; each error is one
line that names the key and the nearest valid one
(:class:`ConfigError`). After merging, required (``???``) keys are checked, then every
group's ``__post_init__``.

Deliberately left out: Hydra's multirun sweeps (``lightning_genenv/sweep.py`` expands ``-m`` into single
compositions), interpolation resolvers beyond OmegaConf's
built-ins, and ``+key=`` additions (every key must exist in the schema).
"""

from __future__ import annotations

import difflib
import re
import typing
import warnings
from pathlib import Path
from typing import Any, Sequence

import yaml
from omegaconf import MISSING, DictConfig, OmegaConf
from omegaconf.errors import ConfigKeyError, OmegaConfBaseException, ValidationError

from lightning_genenv.atomic import atomic_writer
from lightning_genenv.config.describe import Key, choices_of, schema_keys, type_name
from lightning_genenv.config.options import (
    CONF_DIR,
    load_yaml_mapping,
    nearest,
    option_files,
    option_label,
    option_mapping,
    option_path,
    parse_mapping,
    read_config_text,
)
from lightning_genenv.config.schema import Config, ConfigError

# Old key names, still accepted with a deprecation note: old -> current (TRL renamed them).
ALIASES = {"rollout.vllm_importance_sampling_cap": "rollout.vllm_importance_sampling_clip_max"}


def _nested(key: str, value: Any) -> dict:
    """``a.b.c``, ``v`` -> ``{a: {b: {c: v}}}``."""
    for part in reversed(key.split(".")):
        value = {part: value}
    return value


def _get(data: Any, key: str) -> Any:
    """The value at dotted ``key`` in nested dicts (None where there is none)."""
    for part in key.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    return data


def _required(data: dict, prefix: str = "") -> list[str]:
    """The keys that ``data`` marks ``???`` (required: the user must set them)."""
    out = []
    for k, v in data.items():
        if isinstance(v, dict):
            out += _required(v, f"{prefix}{k}.")
        elif v == MISSING:
            out.append(f"{prefix}{k}")
    return out


def _renamed(data: dict, where: str) -> dict:
    """``data`` with deprecated key names (:data:`ALIASES`) moved to their current names, with a note."""
    for old, new in ALIASES.items():
        *path, leaf = old.split(".")
        node = data
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and leaf in node:
            warnings.warn(f"{old} (from {where}) is deprecated: it is now {new}", FutureWarning, stacklevel=3)
            node[new.rsplit(".", 1)[1]] = node.pop(leaf)
    return data


def _merge(cfg: DictConfig, data: dict, where: str, schema: type) -> DictConfig:
    """OmegaConf's merge of ``data`` onto ``cfg``, its errors made one line that names the key."""
    data = _renamed(data, where)
    try:
        merged = OmegaConf.merge(cfg, data)
        for key in _required(data):  # merge keeps a value that the source marks ???; the source means "required"
            OmegaConf.update(merged, key, MISSING)
        return merged
    except ConfigKeyError as e:
        key, node = e.full_key or str(e.key), _get(data, e.full_key or str(e.key))
        while isinstance(node, dict) and len(node) == 1:  # the whole key as written: agnt.beta, not agnt
            (sub, node), = node.items()
            key = f"{key}.{sub}"
        valid = [k.name for k in schema_keys(schema)] + sorted({k.name.rsplit(".", 1)[0] for k in schema_keys(schema)})
        raise ConfigError(f"unknown config key '{key}' (from {where}){nearest(key, valid)}") from None
    except (ValidationError, OmegaConfBaseException) as e:
        key, msg = e.full_key, str(e).splitlines()[0]
        if not key:
            raise ConfigError(f"{where}: {msg}") from None
        key = re.sub(r"\[\d+\]$", "", key)  # an item of a list: name the list
        value = _get(data, key)
        tp = {k.name: k.type for k in schema_keys(schema)}.get(key)
        if typing.get_origin(tp) is list and choices_of(typing.get_args(tp)[0]):
            tp = typing.get_args(tp)[0]
        choices = [str(c) for c in choices_of(tp)]
        if choices:
            close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.6)
            raise ConfigError(f"{key}={value!r} (from {where}): must be one of {', '.join(choices)}"
                              + (f"; did you mean '{close[0]}'?" if close else "")) from None
        expected = type_name(tp) if tp is not None else "another type"
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


def _missing(cfg: DictConfig, schema: type) -> list[Key]:
    missing = OmegaConf.missing_keys(cfg)
    return [k for k in schema_keys(schema) if k.name in missing] if missing else []


def _finish(cfg: DictConfig, schema: type) -> DictConfig:
    """Refuse unset required keys, then run every group's checks (``__post_init__``) on the merged values."""
    missing = _missing(cfg, schema)
    if missing:
        choices = choices_of(missing[0].type)
        hint = f", one of {', '.join(map(str, choices))}" if choices else ""
        raise ConfigError(f"required config key{'s' if len(missing) > 1 else ''} not set: "
                          f"{', '.join(k.name for k in missing)} (pass {missing[0].name}=...{hint})")
    OmegaConf.to_object(cfg)  # builds the dataclasses: their __post_init__ checks raise ConfigError
    return cfg


def compose(argv: list[str] | None = None, conf_dir: Path | str | None = CONF_DIR,
            schema: type = Config, extra_dirs: Sequence[Path | str] = ()) -> DictConfig:
    """Compose ``schema`` with ``conf_dir/config.yaml``, group choices, an experiment and key overrides.

    ``conf_dir=None``: a command without groups (``key=value`` onto the schema's defaults only);
    ``extra_dirs``: the user's ``--config-dir`` directories, whose ``<group>/<option>.yaml`` files join the
    groups."""
    overrides = parse_overrides(argv or [])
    files = option_files(Path(conf_dir), extra_dirs) if conf_dir is not None else {}
    available = {g: sorted(options) for g, options in files.items()}
    cli_groups = {k: v for k, v in overrides if k in available}
    cli_keys = [(k, v) for k, v in overrides if k not in available]

    cfg = OmegaConf.structured(schema)
    resume = dict(overrides).get("resume") if "resume" in cfg else None
    if resume == "auto":
        return _compose_auto(argv or [], dict(cli_keys).get("run_dir"), conf_dir, schema)
    if resume:
        return _compose_resume(cfg, Path(str(resume)), cli_groups, cli_keys, schema)
    if conf_dir is not None:
        conf_dir = Path(conf_dir)
        root = load_yaml_mapping(conf_dir / "config.yaml")
        choices = dict(root.pop("defaults", {}) or {})
        experiment = experiment_file = None
        if "experiment" in cli_groups:
            experiment_file = option_path(files, "experiment", cli_groups.pop("experiment"))
            experiment = load_yaml_mapping(experiment_file)
            choices.update(experiment.pop("defaults", {}) or {})
        choices.update(cli_groups)
        cfg = _merge(cfg, root, "conf/config.yaml", schema)
        for group, option in choices.items():
            if group not in available:
                raise ConfigError(f"unknown config group '{group}'{nearest(group, list(available))}")
            path = option_path(files, group, option)
            cfg = _merge(cfg, option_mapping(path, group), option_label(path, conf_dir), schema)
        if experiment:
            cfg = _merge(cfg, experiment, f"the experiment, {option_label(experiment_file, conf_dir)}", schema)
    for key, value in cli_keys:
        cfg = _merge(cfg, _nested(key, value), "the command line", schema)
    return _finish(cfg, schema)


def _compose_resume(cfg: DictConfig, run_dir: Path, cli_groups: dict, cli_keys: list, schema: type) -> DictConfig:
    """The resolved config a run saved, with key overrides (e.g. ``trainer.max_epochs`` to extend it)."""
    saved = run_dir / "config.yaml"
    if not saved.is_file():
        raise ConfigError(f"resume={run_dir}: no config.yaml there; pass the directory of a run")
    try:
        text = read_config_text(saved)
    except ConfigError as e:
        raise ConfigError(f"resume={run_dir}: {e}; the run's config is needed to resume") from None
    if not text.strip():
        raise ConfigError(f"resume={run_dir}: {saved} is empty; the run's config is needed to resume "
                          "(it would resume on the defaults)")
    if cli_groups:
        raise ConfigError(f"resume={run_dir}: group choices ({', '.join(cli_groups)}) are fixed by the run; "
                          f"override single keys instead")
    from lightning_genenv.config.resume import refuse_unsafe_changes  # it imports this package

    cfg = _merge(cfg, _inputs(parse_mapping(text, saved)), str(saved), schema)
    run_cfg = OmegaConf.to_container(cfg)
    for key, value in cli_keys:
        cfg = _merge(cfg, _nested(key, value), "the command line", schema)
    refuse_unsafe_changes(run_dir, run_cfg, OmegaConf.to_container(cfg))
    cfg.run_dir, cfg.resume = str(run_dir), str(run_dir)
    return _finish(cfg, schema)


def _inputs(saved: dict) -> dict:
    """A saved config without ``rollout.chosen_because``, an output that runs before ``run_choices.json`` saved."""
    rollout = saved.get("rollout")
    if isinstance(rollout, dict):
        saved["rollout"] = {k: v for k, v in rollout.items() if k != "chosen_because"}
    return saved


def _compose_auto(argv: list[str], run_dir: Any, conf_dir, schema: type) -> DictConfig:
    """``resume=auto``: the command composed as a new run when ``run_dir`` has no checkpoint; else the
    run's saved config, with what the command changes of the keys a resume may change."""
    from lightning_genenv.config.resume import has_checkpoint, refuse_unsafe_changes  # it imports this package

    if not run_dir:
        raise ConfigError("resume=auto needs run_dir=<dir>: the directory to start the run in, or to resume "
                          "it from when it holds a checkpoint")
    command = compose([a for a in argv if a.split("=", 1)[0].strip() != "resume"], conf_dir, schema)
    if not has_checkpoint(str(run_dir)):
        return command
    cfg = _compose_resume(OmegaConf.structured(schema), Path(str(run_dir)), {}, [], schema)
    for key in refuse_unsafe_changes(run_dir, OmegaConf.to_container(cfg), OmegaConf.to_container(command)):
        OmegaConf.update(cfg, key, OmegaConf.select(command, key), merge=False)
    return _finish(cfg, schema)


def to_yaml(cfg: DictConfig) -> str:
    return OmegaConf.to_yaml(cfg, resolve=True)


def save_config(cfg: DictConfig, path: Path | str) -> None:
    """``to_yaml(cfg)`` to ``path`` through a temp file of its own (processes may write at once), fsync and
    rename: a reader sees the old file or the new one, never a partial one."""
    with atomic_writer(path) as f:
        f.write(to_yaml(cfg))
