"""The pools' records as values: one frozen dataclass per pool, from where ``p̂`` is computed to the pool files
and back.

* :class:`TaskScore`: one attempted task's ``p̂``, ``R_env`` and filter outcome
  (:func:`~lightning_genenv.coevolution.curriculum.score_tasks` makes them);
* :class:`TrainRecord`: a ``D_train`` line (``pools/d_train.jsonl``): a base seed task, or a generated task that
  passed the filter with its ``p̂``, rewards and completions;
* :class:`EnvRecord`: a ``D_env`` line (``pools/d_env.jsonl``): every new task of an epoch (the generation, valid
  or not), with its score where it was attempted;
* :func:`read_records` (lenient: a malformed line is counted by reason and skipped) and :func:`read_pool`
  (strict: a :class:`~lightning_genenv.jsonl.DataError` naming the bad lines): a pool file read back through them.

Each record has ``to_json`` (the pool line's object: its keys in the order of the fields) and ``from_json``.
:data:`SCHEMA_VERSION` is the records' format. Version 1 lines carry no version key, so the files are those
written before it existed; a later version writes ``schema_version`` as its last key. A reader accepts a line
without it (version 1) or with a version up to its own, and refuses a newer one (:class:`NewerSchemaError`):
its fields may mean something this code does not know. Adding a field: the dataclass, its ``to_json`` order and
its constructor from the epoch's values (:meth:`TrainRecord.generated`, :meth:`EnvRecord.scored`), with a
default where files without it must still read.

Deliberately left out: the log's segments and checksums (:mod:`lightning_genenv.pools`) and what the records
are used for (the replay, the simulator's fit set, the reports).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, TypeVar

from lightning_genenv.jsonl import DataError, Skipped, count_bad, numbered_objects
from lightning_genenv.tasks import Task

if TYPE_CHECKING:  # annotations only: task_writing.py and epoch_values.py import the rollout engines and torch
    from lightning_genenv.epoch_values import Group
    from lightning_genenv.task_writing import GeneratedTask

SCHEMA_VERSION = 1
VERSION_KEY = "schema_version"


class NewerSchemaError(DataError):
    """A pool line written by a newer version of the records than this code reads."""


class RecordError(ValueError):
    """A pool line that is JSON but not a record of its pool (a missing key, a wrong type)."""


@dataclass(frozen=True)
class TaskScore:
    """One attempted new task's score."""

    p_hat: float
    r_env: float
    trained_on: bool  # passed the filter: joined D_train (and, with the rwr objective, the simulator's fit set)
    attempts: int = 0  # n, the attempts p̂ = k/n is measured over


def _version(d: dict, pool: str) -> int:
    version = d.get(VERSION_KEY, 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RecordError(f"bad {VERSION_KEY} {version!r}")
    if version > SCHEMA_VERSION:
        raise NewerSchemaError(f"a {pool} record of {VERSION_KEY} {version}: this lightning_genenv reads versions "
                               f"up to {SCHEMA_VERSION}; read the file with the version that wrote it")
    return version


def _fields(cls, d: dict, pool: str) -> dict:
    """``d``'s values of ``cls``'s fields (a missing one takes its default; keys of no field are ignored)."""
    _version(d, pool)
    out = {}
    for f in fields(cls):
        if f.name in d:
            out[f.name] = d[f.name]
        elif f.default is MISSING:
            raise RecordError(f"no {f.name!r}")
    return out


def _task(d) -> Task | None:
    if d is None:
        return None
    if not isinstance(d, dict):
        raise RecordError("'task' is not an object")
    try:
        return Task(**d)
    except TypeError as e:
        raise RecordError(f"'task': {e}") from None


@dataclass(frozen=True)
class TrainRecord:
    """A ``D_train`` record: a base seed (``source="seed"``: the task alone) or a generated task that passed the
    filter (``source="generated"``: the epoch it was written in, its ``p̂``, the agent's rewards and completions)."""

    pool = "d_train"

    task: Task
    source: str  # "seed" or "generated"
    epoch: int | None = None
    p_hat: float | None = None
    rewards: list[float] | None = None
    completions: list[str] | None = None

    @classmethod
    def seed(cls, task: Task) -> TrainRecord:
        return cls(task, "seed")

    @classmethod
    def generated(cls, record: GeneratedTask, score: TaskScore, group: Group) -> TrainRecord:
        return cls(record.task, "generated", record.epoch, score.p_hat, group.rewards, group.texts)

    def to_json(self) -> dict:
        """The pool line's object: the task and source, then the fields that are set (a seed's are not)."""
        out = {"task": self.task.to_dict(), "source": self.source}
        out.update({f.name: getattr(self, f.name) for f in fields(self)[2:] if getattr(self, f.name) is not None})
        return out

    @classmethod
    def from_json(cls, d: dict) -> TrainRecord:
        values = _fields(cls, d, cls.pool)
        task = _task(values["task"])
        if task is None:
            raise RecordError("'task' is null")
        return cls(**{**values, "task": task})


@dataclass(frozen=True)
class EnvRecord:
    """A ``D_env`` record: one new task of an epoch as the source made it (the simulator's generation, valid or
    not, or a task of a fixed set), and its score where it was attempted."""

    pool = "d_env"

    epoch: int
    seed_id: str | None
    source: str  # "simulator" or "static"
    prompt_ids: list[int] | None
    completion_ids: list[int] | None
    text: str | None
    task: Task | None  # None: invalid
    reason: str | None  # why it is invalid
    novelty: float | None = None  # 1.0 new, near 0 a reworded copy; None: not parsed
    attempted: bool = False
    p_hat: float | None = None  # None: not attempted
    r_env: float = 0.0
    trained_on: bool = False

    @classmethod
    def scored(cls, record: GeneratedTask, score: TaskScore | None) -> EnvRecord:
        """``record``, and ``score`` when it was attempted (None: it was not)."""
        return cls(record.epoch, record.seed_id, record.source, record.prompt_ids, record.completion_ids, record.text,
                   record.task, record.reason, record.novelty, attempted=score is not None,
                   p_hat=score.p_hat if score is not None else None,
                   r_env=score.r_env if score is not None else 0.0,
                   trained_on=score.trained_on if score is not None else False)

    def to_json(self) -> dict:
        """The pool line's object: every field, in order, the task as its own object."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["task"] = self.task.to_dict() if self.task is not None else None
        return out

    @classmethod
    def from_json(cls, d: dict) -> EnvRecord:
        values = _fields(cls, d, cls.pool)
        if not isinstance(values["epoch"], int):
            raise RecordError("'epoch' is not an integer")
        return cls(**{**values, "task": _task(values["task"])})


Record = TypeVar("Record", TrainRecord, EnvRecord)
RECORDS = {TrainRecord.pool: TrainRecord, EnvRecord.pool: EnvRecord}  # pool name -> its record


def read_records(path: str | Path, record: type[Record], skipped: Counter) -> Iterator[Record]:
    """``path``'s lines as ``record``s; a malformed line (not JSON, not an object, not a record: ``bad_record``) is
    counted in ``skipped`` by reason and skipped. A line of a newer schema raises :class:`NewerSchemaError`."""
    for lineno, obj in numbered_objects(path, skipped):
        try:
            yield record.from_json(obj)
        except NewerSchemaError as e:
            raise NewerSchemaError(f"{path}:{lineno}: {e}") from None
        except (RecordError, TypeError):
            count_bad(skipped, "bad_record", path, lineno)


def read_pool(path: str | Path, record: type[Record]) -> list[Record]:
    """Every record of a pool file; a :class:`~lightning_genenv.jsonl.DataError` naming the bad lines if any is
    malformed."""
    skipped = Skipped()
    records = list(read_records(path, record, skipped))
    if skipped:
        raise DataError(f"{path}: " + "; ".join(f"{n} {reason}{skipped.lines(reason, with_file=False)}"
                                                for reason, n in skipped.items()))
    return records
