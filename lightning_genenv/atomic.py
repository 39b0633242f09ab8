"""Files that a reader sees whole or not at all: a temp file of its own next to the target, fsynced, then
renamed over it (``os.replace`` is atomic on POSIX). Used for ``config.yaml``, ``run_record.json``, every
JSONL file the run writes and the TensorBoard files a resume trims; and :func:`sha256_file`, a file's hash read
in blocks (checkpoints' sidecars, ``bench/archive_run.py``), here so that a caller need not import torch for it.

Deliberately left out: fsyncing the directory after the rename (a power cut may keep the old file, never
a partial one) and locking (concurrent writers each rename a whole file; the last one wins).
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


def sha256_file(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, read 1 MiB at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
