"""The one command-line front end of every command (:func:`parse_cli`): ``--help`` prints the command's
docstring, the config groups with their options, and every key (:func:`usage`); ``--cfg`` prints the
composed config; otherwise the composed config is returned.

``--config-dir <dir>`` (commands with config groups) adds the user's option files to the groups
(:func:`split_config_dirs`, ``options.option_files``).

Deliberately left out: argparse-style flags beyond ``--help``/``-h``, ``--cfg`` and ``--config-dir``
(``-m``, multi-run, is ``train.py``'s: :mod:`lightning_genenv.sweep`); every other argument is
``key=value`` or ``group=option``.
"""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig

from lightning_genenv.config.composer import compose, to_yaml
from lightning_genenv.config.describe import schema_keys, show_value, type_name
from lightning_genenv.config.options import CONF_DIR, groups, load_yaml_mapping
from lightning_genenv.config.schema import Config, ConfigError


def split_config_dirs(argv: list[str]) -> tuple[list[str], list[str]]:
    """``argv`` without its ``--config-dir <dir>`` / ``--config-dir=<dir>`` flags, and those directories."""
    rest, dirs, args = [], [], iter(argv)
    for arg in args:
        if arg == "--config-dir":
            value = next(args, None)
            if value is None:
                raise ConfigError("--config-dir needs a directory: --config-dir <dir>")
            dirs.append(value)
        elif arg.startswith("--config-dir="):
            dirs.append(arg.split("=", 1)[1])
        else:
            rest.append(arg)
    return rest, dirs


def usage(doc: str, schema: type = Config, conf_dir: Path | None = CONF_DIR, extra_dirs: list[str] = ()) -> str:
    """``--help``: the command's docstring, the config groups and their options, then every key."""
    parts = [doc.strip(), ""]
    if conf_dir is not None:
        defaults = load_yaml_mapping(Path(conf_dir) / "config.yaml").get("defaults", {})
        parts.append("config groups (group=option picks conf/<group>/<option>.yaml):")
        for group, names in groups(conf_dir, extra_dirs).items():
            default = f" (default: {defaults[group]})" if group in defaults else ""
            parts.append(f"  {group}: {', '.join(names)}{default}")
        parts.append("")
    keys = schema_keys(schema)
    parts.append("keys (key=value; type, default, description):")
    width = max(len(k.name) for k in keys)
    for k in keys:
        doc = f"  # {k.doc}" if k.doc else ""
        parts.append(f"  {k.name:<{width}}  {type_name(k.type)} = {show_value(k.default)}{doc}")
    parts.append("\n--cfg prints the composed config and exits; ??? marks a required key.")
    return "\n".join(parts)


def parse_cli(argv: list[str], doc: str, schema: type = Config, conf_dir: Path | None = CONF_DIR,
              composer=None) -> DictConfig | None:
    """The one command-line front end: ``--help`` prints :func:`usage`, ``--cfg`` the composed config
    (both return None); otherwise the composed config. ``composer(argv)`` replaces :func:`compose`
    for a command that completes its config further (``evaluate``'s data root)."""
    argv, dirs = split_config_dirs(argv) if conf_dir is not None else (argv, [])
    if {"-h", "--help"} & set(argv):
        print(usage(doc, schema, conf_dir, dirs))
        return None
    rest = [a for a in argv if a != "--cfg"]
    cfg = composer(rest) if composer is not None else compose(rest, conf_dir, schema, dirs)
    if len(rest) < len(argv):
        print(to_yaml(cfg), end="")
        return None
    return cfg
