"""The option files of ``conf/``: where the directory is, each group's options (and a user's
``--config-dir`` ones), and each option file read as a mapping rooted at the whole config.

An option file whose header (the comment lines before its first key) holds ``# @package _global_``
(Hydra's directive) is rooted at the whole config, so that one option may set keys of other groups
(``data=paper`` sets the agent's completion budget its tasks need); any other file is its group's.

Deliberately left out: merging and checking values (``composer.py``), and Hydra's other package
directives (``_group_``, named packages).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Sequence

import yaml

from lightning_genenv.config.schema import ConfigError

# An installed package holds conf/ as lightning_genenv/conf (pyproject's package-dir); a checkout has it
# at the top of the repository.
_PACKAGE = Path(__file__).resolve().parent.parent
CONF_DIR = _PACKAGE / "conf" if (_PACKAGE / "conf").is_dir() else _PACKAGE.parent / "conf"


def nearest(word: str, options: list[str]) -> str:
    """"; did you mean '<closest>'?" for ``word`` among ``options`` (or the first valid ones)."""
    match = difflib.get_close_matches(word, options, n=1, cutoff=0.4)
    return f"; did you mean '{match[0]}'?" if match else f"; valid: {', '.join(sorted(options)[:12])}"


def read_config_text(path: Path) -> str:
    """A config file's text (UTF-8); a one-line :class:`ConfigError` when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read {path} ({e.__class__.__name__}: "
                          f"{getattr(e, 'strerror', None) or e})") from None


def parse_mapping(text: str, path: Path) -> dict:
    """``text`` (read from ``path``) as a YAML mapping; a one-line :class:`ConfigError` otherwise."""
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: must be a mapping of keys")
    return data


def load_yaml_mapping(path: Path) -> dict:
    """A YAML file that must hold a mapping; a one-line :class:`ConfigError` otherwise (unreadable, not YAML,
    not a mapping)."""
    return parse_mapping(read_config_text(path), path)


GLOBAL_PACKAGE = "# @package _global_"


def option_mapping(path: Path, group: str) -> dict:
    """A group option's file as a mapping rooted at the whole config: ``{group: <file>}``, or the file
    itself when its header (the comment lines before the first key) declares ``# @package _global_``."""
    text = read_config_text(path)
    header = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            break
        header.append(line.strip())
    data = parse_mapping(text, path)
    return data if GLOBAL_PACKAGE in header else {group: data}


def option_files(conf_dir: Path = CONF_DIR, extra_dirs: Sequence[Path | str] = ()) -> dict[str, dict[str, Path]]:
    """Every config group's options and their files: ``conf_dir``'s, then each ``--config-dir``'s (a user's
    directory may add options to the groups, never a group or an option of the same name)."""
    files = {d.name: {p.stem: p for p in sorted(d.glob("*.yaml"))}
             for d in sorted(Path(conf_dir).iterdir()) if d.is_dir()}
    for extra in extra_dirs:
        extra = Path(extra)
        if not extra.is_dir():
            raise ConfigError(f"--config-dir {extra}: not a directory")
        for d in sorted(p for p in extra.iterdir() if p.is_dir()):
            if d.name not in files:
                raise ConfigError(f"--config-dir {extra}: {d.name}/ is not a config group"
                                  f"{nearest(d.name, list(files))}")
            for p in sorted(d.glob("*.yaml")):
                if p.stem in files[d.name]:
                    raise ConfigError(f"--config-dir {extra}: {d.name}/{p.name} has the name of an option that "
                                      f"exists ({files[d.name][p.stem]}); give yours another name")
                files[d.name][p.stem] = p
    return files


def groups(conf_dir: Path = CONF_DIR, extra_dirs: Sequence[Path | str] = ()) -> dict[str, list[str]]:
    """Every config group in ``conf_dir`` (and the ``--config-dir`` directories) and its options."""
    return {g: sorted(options) for g, options in option_files(conf_dir, extra_dirs).items()}


def option_path(files: dict, group: str, option: Any) -> Path:
    """The file of ``group=option``: one of the group's options, or (``experiment=path/to/file.yaml``) a file."""
    if str(option).endswith((".yaml", ".yml")) and Path(str(option)).is_file():
        return Path(str(option))
    if str(option) not in files[group]:
        raise ConfigError(f"{group}={option}: no such option{nearest(str(option), sorted(files[group]))}")
    return files[group][str(option)]


def option_label(path: Path, conf_dir: Path) -> str:
    """An option file as errors name it: ``conf/<group>/<file>`` for the package's, else its path (a user's)."""
    return f"conf/{path.parent.name}/{path.name}" if path.parent.parent == conf_dir else str(path)
