"""Writing files so that a kill never leaves a partial one: the package's one home for fsync and atomic rename.

* :func:`atomic_writer` / :func:`write_atomic`: a file that a reader sees whole or not at all: a temp file of its
  own next to the target, fsynced, then renamed over it (``os.replace`` is atomic on POSIX). Used for
  ``config.yaml``, ``run_record.json``, every JSONL file the run writes, the pool manifest and the TensorBoard
  files a resume trims.
* :func:`write_durable`: bytes written (or appended, as the pool log appends an epoch) and fsynced before it returns.
* :func:`fsync_file` / :func:`fsync_dir`: a file already written, and a directory's renames, made durable (the
  checkpoints' two-file commit: the checkpoint and its checksum sidecar, :mod:`.coevolution.checkpoint`).
* :func:`sha256_file`: a file's hash read in blocks (checkpoints' sidecars, ``bench/archive_run.py``), here so
  that a caller need not import torch for it.

Deliberately left out: fsyncing the directory after :func:`atomic_writer`'s rename (a power cut may keep the old
file, never a partial one; a caller that orders several renames calls :func:`fsync_dir`) and locking (concurrent
writers each rename a whole file; the last one wins).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator


@contextmanager
def atomic_writer(path: str | Path, binary: bool = False) -> Iterator[IO]:
    """A file (text, or bytes with ``binary``) to write ``path`` through; it replaces ``path`` only when the
    block ends without an exception (the temp file is removed otherwise)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # as open() would make it (mkstemp's file is private to its owner)
    try:
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: str | Path, data: bytes) -> None:
    """``data`` as the whole of ``path``, through :func:`atomic_writer`."""
    with atomic_writer(path, binary=True) as f:
        f.write(data)


def write_durable(path: str | Path, data: bytes, append: bool = False) -> None:
    """``data`` written to ``path`` (appended with ``append``, else the file is truncated first) and fsynced."""
    with open(path, "ab" if append else "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def fsync_file(path: str | Path) -> None:
    """Flush a file already written (by another library: ``torch.save``) to the disk."""
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def fsync_dir(path: str | Path) -> None:
    """Make the renames inside directory ``path`` durable."""
    dir_fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def sha256_file(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, read 1 MiB at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
