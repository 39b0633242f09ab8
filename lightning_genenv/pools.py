"""Crash-safe pool log: append-only JSONL files plus a manifest of committed epochs.

``<run_dir>/pools/`` holds ``d_train.jsonl`` and ``d_env.jsonl`` (one JSON record per line) and
``manifest.json``. Once per epoch the new records of both pools are appended and fsynced, and only
then the manifest is replaced atomically (temp file, fsync, rename) with one more *segment*: the
epoch, and for each pool the segment's byte range, record count and SHA-256. An epoch is committed
when the manifest names it, so a kill at any moment leaves committed segments intact and at most
an uncommitted tail (a torn line, or a whole epoch that the checkpoint does not cover).

:meth:`PoolLog.recover` checks the files against the manifest, segment by segment, and repairs them
to the last consistent state: the first ``keep`` segments (the checkpoint's epochs). What is cut
off is never deleted: it is moved to ``pools/quarantine/`` and reported. When a committed segment
is damaged (flipped bytes, a truncated file), the pool is rewritten from the checkpoint's copy of
the records if the caller has one, and otherwise cut back to the last segment that verifies.

``python -m lightning_genenv.pools run_dir=<run_dir> [repair=true]`` verifies (and repairs) a run's pools.

:class:`Pools` holds both pools in memory with their log: what an epoch adds, committed once per epoch. In memory
the records are typed (:mod:`lightning_genenv.pool_records`: ``TrainRecord``, ``EnvRecord``); the log and the
checkpoint hold their JSON objects (``to_json``), read back with ``from_json``.

Deliberately left out: the records' fields (:mod:`lightning_genenv.pool_records`, which also reads a pool file
back), sharded pool files (rank 0 writes both whole pools) and compaction.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from omegaconf import MISSING

from lightning_genenv.atomic import write_atomic, write_durable
from lightning_genenv.config import ConfigError, parse_cli
from lightning_genenv.pool_records import RECORDS, EnvRecord, TrainRecord

POOLS = tuple(RECORDS)  # "d_train", "d_env"


def encode(record: dict) -> bytes:
    """One pool line. The same bytes for the same record, so a rewrite reproduces the checksums."""
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


class PoolLog:
    def __init__(self, pool_dir: str | Path):
        self.dir = Path(pool_dir)
        self.manifest_path = self.dir / "manifest.json"
        self.segments: list[dict] = self._read_manifest()

    def _read_manifest(self) -> list[dict]:
        if not self.manifest_path.exists():
            return []
        try:
            manifest = json.loads(self.manifest_path.read_text())
            segments = manifest["segments"]
            assert isinstance(segments, list) and all(set(POOLS) <= set(s["pools"]) for s in segments)
            return segments
        except (ValueError, KeyError, TypeError, AssertionError, UnicodeDecodeError):
            raise PoolError(f"{self.manifest_path}: unreadable manifest (it is replaced atomically, so this "
                            f"file was changed outside the trainer); move the pools/ folder away to start over")

    def path(self, pool: str) -> Path:
        return self.dir / f"{pool}.jsonl"

    def exists(self) -> bool:
        return bool(self.segments) or any(self.path(p).exists() for p in POOLS)

    def counts(self) -> dict[str, int]:
        return {p: sum(s["pools"][p]["records"] for s in self.segments) for p in POOLS}

    def append(self, epoch: int, new: dict[str, list[dict]]) -> dict[str, int]:
        """Append one epoch's new records to each pool and commit them. Returns the pool sizes."""
        self.dir.mkdir(parents=True, exist_ok=True)
        segment = {"epoch": epoch, "committed_at": time.time(), "pools": {}}
        for pool in POOLS:
            data = b"".join(encode(r) for r in new.get(pool, []))
            start = _end(self.segments, pool)
            path = self.path(pool)
            size = path.stat().st_size if path.exists() else 0
            if size < start:
                raise PoolError(f"{path} is shorter than its manifest says; run "
                                f"'python -m lightning_genenv.pools run_dir={self.dir.parent} repair=true'")
            if size > start:  # a torn tail left by a kill: set it aside
                self._quarantine(pool, start, "an uncommitted tail")
            write_durable(path, data, append=True)
            segment["pools"][pool] = {"start": start, "end": start + len(data), "records": len(new.get(pool, [])),
                                      "sha256": hashlib.sha256(data).hexdigest()}
        self._commit([*self.segments, segment])
        return self.counts()

    def _commit(self, segments: list[dict]) -> None:
        write_atomic(self.manifest_path, json.dumps({"version": 1, "segments": segments}, indent=1).encode())
        self.segments = segments

    def _quarantine(self, pool: str, offset: int, why: str) -> dict:
        """Move the bytes of ``pool`` from ``offset`` on into ``quarantine/`` and cut the file there."""
        path = self.path(pool)
        with open(path, "rb") as f:
            f.seek(offset)
            tail = f.read()
        qdir = self.dir / "quarantine"
        qdir.mkdir(exist_ok=True)
        target = qdir / f"{pool}.{time.strftime('%Y%m%d-%H%M%S')}.{offset}.jsonl"
        write_durable(target, tail)
        with open(path, "r+b") as f:
            f.truncate(offset)
            f.flush()
            os.fsync(f.fileno())
        lines = tail.count(b"\n") + (not tail.endswith(b"\n") and len(tail) > 0)
        return {"pool": pool, "action": f"moved {len(tail)} bytes ({lines} lines) of {why} to {target}",
                "bytes": len(tail)}

    def verify(self, pool: str, segments: list[dict] | None = None) -> int:
        """How many leading segments of ``pool`` are intact on disk (length and checksum)."""
        segments = self.segments if segments is None else segments
        path = self.path(pool)
        data = path.read_bytes() if path.exists() else b""
        for i, s in enumerate(segments):
            info = s["pools"][pool]
            chunk = data[info["start"]:info["end"]]
            if len(chunk) != info["end"] - info["start"] or hashlib.sha256(chunk).hexdigest() != info["sha256"]:
                return i
        return len(segments)

    def recover(self, keep: int | None = None, records: dict[str, list[dict]] | None = None) -> list[dict]:
        """Repair the files to the first ``keep`` committed segments (all by default).

        ``records``, when given, are the pools as the checkpoint holds them; a damaged segment is
        then rebuilt from them. Returns what was done, one entry per repair (empty when all was
        consistent)."""
        keep = len(self.segments) if keep is None else keep
        if keep > len(self.segments):
            raise PoolError(f"{self.manifest_path} commits {len(self.segments)} epochs but the checkpoint "
                            f"expects {keep}: the pools folder is older than the checkpoint")
        segments, actions = self.segments[:keep], []
        for pool in POOLS:  # verify; rebuild a damaged pool from the checkpoint, or cut back to what verifies
            path = self.path(pool)
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.touch()
            good = self.verify(pool, segments)
            if good < keep and records is not None:
                data = b"".join(encode(r) for r in records[pool])
                expected = _end(segments, pool)
                if len(data) != expected:
                    raise PoolError(f"{path}: the checkpoint's {len(records[pool])} records do not match "
                                    f"the manifest ({expected} bytes); cannot repair")
                actions.append(self._quarantine(pool, 0, f"a damaged file (segment {good} failed its checksum)"))
                write_durable(path, data)
                actions[-1]["action"] += f"; rebuilt {len(records[pool])} records from the checkpoint"
            elif good < len(segments):
                segments = segments[:good]
                actions.append({"pool": pool, "action": f"segment {good} (epoch {self.segments[good]['epoch']}) "
                                                        f"failed its checksum; cut back to {good} epochs"})
        for pool in POOLS:  # both pools end at the same, last consistent epoch
            if self.path(pool).stat().st_size > _end(segments, pool):
                actions.append(self._quarantine(pool, _end(segments, pool), "records past the last consistent epoch"))
        if len(segments) < len(self.segments):
            self._commit(segments)
        return actions

    def load(self, pool: str) -> list[dict]:
        """The committed records of ``pool`` (call :meth:`recover` first)."""
        with open(self.path(pool), "rb") as f:
            data = f.read(_end(self.segments, pool))
        return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def _end(segments: list[dict], pool: str) -> int:
    """The byte offset where ``pool``'s last segment in ``segments`` ends (0 for none)."""
    return segments[-1]["pools"][pool]["end"] if segments else 0


class PoolError(RuntimeError):
    """A pool log that cannot be made consistent automatically."""


class Pools:
    """``D_train`` and ``D_env`` in memory, and their log (``<run_dir>/pools/``; none without a run directory).

    ``D_train`` starts as the base seed tasks (:meth:`start`); each epoch :meth:`add` appends its new
    records to both pools and :meth:`commit` (rank 0) appends them to the log as one segment. The
    pools travel whole in the co-evolution callback's checkpoint state, as JSON objects; :meth:`load_state_dict`
    restores them and repairs the log to the checkpoint's epochs."""

    def __init__(self, pool_dir: str | Path | None):
        self.log = PoolLog(pool_dir) if pool_dir is not None else None
        self.d_train: list[TrainRecord] = []
        self.d_env: list[EnvRecord] = []
        self.committed = {p: 0 for p in POOLS}  # records of each pool already in the log
        self.repairs: list[dict] = []  # what restoring did to the log

    def start(self, base: list) -> None:
        """``D_train`` is the base seed tasks (``Task``s); ``D_env`` is empty."""
        self.d_train = [TrainRecord.seed(t) for t in base]
        self.d_env = []

    def replayable(self, before_epoch: int) -> list[TrainRecord]:
        """The generated records of ``D_train`` from epochs before ``before_epoch``, in the pool's order."""
        return [r for r in self.d_train if r.source == "generated" and r.epoch < before_epoch]

    def add(self, train_records: list[TrainRecord], env_records: list[EnvRecord]) -> None:
        self.d_train.extend(train_records)
        self.d_env.extend(env_records)

    def commit(self, epoch: int) -> dict[str, int]:
        """Append the records added since the last commit to the log, as epoch ``epoch``'s segment;
        returns the pool sizes (``{}`` without a log). Rank 0 only."""
        if self.log is None:
            return {}
        new = {p: [r.to_json() for r in getattr(self, p)[self.committed[p]:]] for p in POOLS}
        self.committed = dict(self.log.append(epoch, new))
        return dict(self.committed)

    def as_json(self, pool: str) -> list[dict]:
        """``pool``'s records as the JSON objects of its lines."""
        return [r.to_json() for r in getattr(self, pool)]

    def state_dict(self) -> dict:
        return {"d_train": self.as_json("d_train"), "d_env": self.as_json("d_env"), "committed": dict(self.committed),
                "segments": len(self.log.segments) if self.log else 0}

    def load_state_dict(self, state: dict, repair: bool) -> None:
        """Restore both pools from a checkpoint; with ``repair`` (rank 0), cut the log back to the
        checkpoint's epochs (what :attr:`repairs` then lists)."""
        self.d_train = [TrainRecord.from_json(r) for r in state["d_train"]]
        self.d_env = [EnvRecord.from_json(r) for r in state["d_env"]]
        self.committed = dict(state["committed"])
        if self.log is not None and repair:
            self.repairs = self.log.recover(state["segments"], {p: state[p] for p in POOLS})


@dataclass
class PoolsConfig:
    run_dir: str = MISSING  # the run directory whose pools/ to verify
    repair: bool = False  # cut back to the last consistent epoch (what is cut goes to pools/quarantine/)


def main(argv: list[str] | None = None) -> int:
    """0: consistent (or repaired), 1: inconsistent, 2: an error."""
    try:
        cfg = parse_cli(sys.argv[1:] if argv is None else argv, __doc__, PoolsConfig, conf_dir=None)
        if cfg is None:
            return 0
        log = PoolLog(Path(cfg.run_dir) / "pools")
        bad = {p: log.verify(p) for p in POOLS}
        sizes = {p: log.path(p).stat().st_size if log.path(p).exists() else 0 for p in POOLS}
        end = {p: _end(log.segments, p) for p in POOLS}
        ok = all(bad[p] == len(log.segments) and sizes[p] == end[p] for p in POOLS)
        print(f"{len(log.segments)} committed epochs; {log.counts()} records; "
              + ("consistent" if ok else f"intact segments {bad}, bytes on disk {sizes} vs committed {end}"))
        if not ok and cfg.repair:
            for a in log.recover():
                print(f"{a['pool']}: {a['action']}")
        return 0 if ok or cfg.repair else 1
    except (PoolError, ConfigError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
