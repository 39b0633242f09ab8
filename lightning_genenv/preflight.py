"""What the run's files must hold, checked before any model loads and before the run directory is made.

:func:`data_problems` loads what the data module will load (the seed file or the benchmarks' train splits, the
validation tasks, ``curriculum.static_path``, ``trainer.val_benchmarks`` under ``trainer.benchmarks_root``) and
checks it against the configured counts, as the trainer's setup does once the models are loaded
(:func:`~lightning_genenv.coevolution.run_state.check_setup`): an empty or unreadable file, a file with no valid
task (lines too long, not JSON, not a task), fewer base tasks than ``data.tasks_per_epoch``, counts the ranks cannot
share, ``check=custom`` tasks with no ``agent.reward_funcs``.
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
from collections import Counter
from contextlib import contextmanager

from lightning_genenv.tasks import DataError, Skipped, check_file

CHECK_USAGE = "usage: python -m lightning_genenv.tasks check [FILE.jsonl] [group=option ...] [key=value ...]"


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
    if cfg.trainer.val_benchmarks:  # their root and items, loaded as the run's benchmark validation loads them
        from lightning_genenv.callbacks.benchmarks import from_config

        try:
            from_config(cfg)
        except FileNotFoundError as e:  # BenchmarkDataError
            problems.append(str(e))
    if cfg.curriculum.get("static_path"):
        try:
            dm.load_static(cfg.curriculum.static_path)
        except (DataError, FileNotFoundError) as e:
            problems.append(str(e))
    from lightning_genenv.batch_layout import BatchLayout

    layout = BatchLayout.from_config(cfg.data, cfg.agent, cfg.trainer.accumulate_grad_batches, processes(cfg.strategy))
    if problem := layout.problem(cfg.data.seeds_per_epoch, len(dm.base)):
        problems.append(problem)
    if problem := custom_problem(dm.base + dm.val, cfg.agent.reward_funcs):
        problems.append(problem)
    return problems, dm.skipped


def custom_problem(tasks, reward_funcs) -> str | None:
    """Tasks with ``check=custom`` and no ``agent.reward_funcs`` to score them (no built-in check reads them)."""
    custom = sum(t.check == "custom" for t in tasks)
    if custom and not reward_funcs:
        return (f"{custom} tasks have check=custom, which only agent.reward_funcs score; "
                "set agent.reward_funcs=[package.module:function] (docs/GUIDE.md: reward functions)")
    return None


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


def check_command(argv: list[str]) -> int:
    """``check [FILE] [key=value ...]``: print the valid tasks' counts and the bad lines' counts by reason, then
    the problems of the run the config would make (``FILE`` as ``data.train_path``;
    :func:`lightning_genenv.preflight.config_report`).

    Exit status: 0 when every line is a valid task and the config has no data problem, 1 when some line
    is not (or none is valid, or the config has a problem), 2 for a usage error or an unreadable file."""
    files = [a for a in argv[1:] if "=" not in a]
    if len(argv) < 2 or argv[0] != "check" or len(files) > 1:
        print(CHECK_USAGE, file=sys.stderr)
        return 2
    overrides = [a for a in argv[1:] if "=" in a]
    if not files:
        return config_report(None, overrides)
    try:
        tasks, skipped = check_file(files[0])
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    bad = sum(skipped.values())
    print(f"{files[0]}: {len(tasks)} valid tasks, {bad} bad lines")
    for reason, n in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {reason}: {n}{skipped.lines(reason, with_file=False)}")
    for key in ("check", "family"):
        counts = Counter(getattr(t, key) for t in tasks)
        if counts:
            print(f"by {key}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return max(1 if bad or not tasks else 0, config_report(files[0], overrides))
