"""Typed config schema and the one composer behind every command line.

``train.py``, ``evaluate.py``, ``static_augment``, ``report`` and ``pools`` all parse their arguments
here (:func:`parse_cli`), each with its own schema: ``--help`` lists groups, options and keys,
``--cfg`` prints the composed config. The package, by job (each module's docstring says what it
leaves out):

- ``schema.py``: the dataclasses (every key, its type, default, description and checks), the
  choice lists (``BENCHMARK_NAMES``, ``LOGGER_NAMES``, ``DTYPES``, ``NO_TRAIN_SPLIT``) and
  :class:`ConfigError`;
- ``describe.py``: a schema's leaf keys with the descriptions read from the dataclasses' comments;
- ``options.py``: ``conf/`` (:data:`CONF_DIR`), each group's option files, and Hydra's ``# @package _global_``
  header (an option that sets other groups' keys);
- ``composer.py``: group choices, experiments and ``key=value`` overrides merged onto the schema, with
  one-line errors that name the nearest valid key;
- ``cli.py``: ``--help`` (:func:`usage`) and ``--cfg`` around :func:`compose`;
- ``resume.py``: start or resume a run directory, what a resume may change (``SAFE_ON_RESUME``), and the
  TensorBoard events past the checkpoint set aside (imported by name, not re-exported here).

Every name is importable from ``lightning_genenv.config`` as before the split.
"""

from lightning_genenv.config.cli import parse_cli, usage
from lightning_genenv.config.composer import ALIASES, compose, parse_overrides, save_config, to_yaml
from lightning_genenv.config.describe import Key, schema_keys
from lightning_genenv.config.options import CONF_DIR, groups, load_yaml_mapping, option_mapping
from lightning_genenv.config.schema import (
    BENCHMARK_NAMES,
    DTYPES,
    LOGGER_NAMES,
    NO_TRAIN_SPLIT,
    PAPER_MIX,
    AgentConfig,
    Config,
    ConfigError,
    CurriculumConfig,
    DataConfig,
    LoggerConfig,
    LoraConfig,
    ModelConfig,
    RolloutConfig,
    SimulatorConfig,
    StrategyConfig,
    TrainerConfig,
    check,
    check_file,
    fit_temperature,
    sampling_temperature,
)

__all__ = ["ALIASES", "BENCHMARK_NAMES", "CONF_DIR", "DTYPES", "LOGGER_NAMES", "NO_TRAIN_SPLIT", "PAPER_MIX",
           "AgentConfig", "Config", "ConfigError", "CurriculumConfig", "DataConfig", "Key", "LoggerConfig",
           "LoraConfig", "ModelConfig", "RolloutConfig", "SimulatorConfig", "StrategyConfig", "TrainerConfig",
           "check", "check_file", "compose", "fit_temperature", "groups", "load_yaml_mapping", "option_mapping",
           "parse_cli", "parse_overrides", "sampling_temperature", "schema_keys", "save_config", "to_yaml", "usage"]
