"""What the run's files must hold, checked before any model loads and before the run directory is made.

:func:`data_problems` loads what the data module will load (the seed file or the benchmarks' train splits, the
validation tasks, ``curriculum.static_path``) and checks it against the configured counts, as the trainer's setup
does once the models are loaded (:func:`~lightning_genenv.coevolution.run_state.check_setup`): an empty or
unreadable file, a file with no valid task (lines too long, not JSON, not a task), fewer base tasks than
``data.tasks_per_epoch``, counts the ranks cannot share, ``check=custom`` tasks with no ``agent.reward_funcs``.
``train.py`` refuses the first problem in one line (:func:`check_files`); ``python -m lightning_genenv.tasks check
[FILE] [key=value ...]`` composes the same config (``FILE`` as ``data.train_path``) and prints every problem
(:func:`config_report`).

Deliberately left out: what needs the tokenizer (a prompt too long for the completion, a warning at setup) and
anything that needs a model.
"""

from __future__ import annotations

import logging
import sys
import warnings
from contextlib import contextmanager

from lightning_genenv.tasks import DataError, Skipped


@contextmanager
def _quiet():
    level = logging.root.manager.disable
    logging.disable(logging.INFO)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(level)


def data_problems(cfg) -> tuple[list[str], Skipped]:
    """Every problem the composed config's data files and counts have (``[]``: none), and the lines they skip."""
    from lightning_genenv.config import ConfigError
    from lightning_genenv.data import GenEnvDataModule
    from lightning_genenv.trainers import processes

    problems: list[str] = []
    dm = GenEnvDataModule(cfg.data, cfg.agent, 0, cfg.trainer.accumulate_grad_batches, cfg.trainer.benchmarks_root)
    try:
        with _quiet():  # the data module says the same again when the run loads it
            dm.setup()
    except (DataError, FileNotFoundError, ConfigError) as e:
        return [str(e)], dm.skipped
    if cfg.curriculum.get("static_path"):
        try:
            dm.load_static(cfg.curriculum.static_path)
        except (DataError, FileNotFoundError) as e:
            problems.append(str(e))
    from lightning_genenv.layout import BatchLayout

    layout = BatchLayout.from_config(cfg.data, cfg.agent, cfg.trainer.accumulate_grad_batches, processes(cfg.strategy))
    if problem := layout.problem(cfg.data.seeds_per_epoch, len(dm.base)):
        problems.append(problem)
    custom = sum(t.check == "custom" for t in dm.base + dm.val)
    if custom and not cfg.agent.reward_funcs:
        problems.append(f"{custom} tasks have check=custom, which only agent.reward_funcs score; "
                        "set agent.reward_funcs=[package.module:function] (docs/GUIDE.md: reward functions)")
    return problems, dm.skipped


def check_files(cfg) -> None:
    """Refuse the config's first data problem (:class:`~lightning_genenv.tasks.DataError`, one line)."""
    if cfg.solver.name == "calibrated":  # the simulator alone reads the seeds; the solver reads no task file
        return
    problems, _ = data_problems(cfg)
    if problems:
        raise DataError(problems[0])


def config_report(path: str | None, overrides: list[str]) -> int:
    """``tasks check``'s second part: the data problems of the config composed from ``overrides`` (with
    ``data.train_path=path`` when a file is given), one line each. Returns 0 with none, 1 with some, 2 for a
    config error."""
    from lightning_genenv.config import ConfigError, parse_cli

    try:
        cfg = parse_cli([*([f"data.train_path={path}"] if path else []), *overrides], __doc__)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if cfg is None:
        return 2
    problems, _ = data_problems(cfg)
    for problem in problems:
        print(f"error: {problem}")
    if not problems:
        print(f"the config's data is usable: {cfg.data.tasks_per_epoch} tasks per epoch "
              f"(data.tasks_per_epoch), {cfg.data.seeds_per_epoch} seeds per epoch (data.seeds_per_epoch)")
    return 1 if problems else 0
