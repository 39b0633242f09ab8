"""The model cache: a directory per built model, published atomically and marked when complete.

``$LIGHTNING_GENENV_CACHE`` or ``~/.cache/lightning_genenv`` holds the embedded model's fp32
conversion, the tiny test models and their SFT'd variants. Each build fills a fresh directory that
gets a marker file last, whose text says what was built; :func:`build_once` reuses a directory only
when its marker reads the expected spec, so a stale or half-written build is never used. A build runs
under :func:`rng_untouched`: building draws from (or reseeds) torch's global RNG, and a run seeded before its
first, cache-filling load must draw what a run with a warm cache draws.

Deliberately left out: cache locking (two concurrent first builds both work, the first atomic
rename wins) and eviction.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable


class ModelUnavailable(RuntimeError):
    """The embedded model could not be fetched or converted; the message says what to do."""


MARKER = ".lightning_genenv_complete"  # written last; its text identifies what was built
REQUIRED_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")


def default_cache_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """``cache_dir``, else ``$LIGHTNING_GENENV_CACHE``, else ``~/.cache/lightning_genenv``."""
    if cache_dir is None:
        cache_dir = os.environ.get("LIGHTNING_GENENV_CACHE") or Path.home() / ".cache/lightning_genenv"
    return Path(cache_dir).expanduser()


def _is_complete(path: Path, spec: str) -> bool:
    marker = path / MARKER
    return (
        marker.is_file()
        and marker.read_text() == spec
        and all((path / name).is_file() for name in REQUIRED_FILES)
    )


def _publish(built: Path, final: Path) -> None:
    """Atomically move a finished build into place, replacing an empty or stale dir of ours."""
    if final.exists():
        if not (final / MARKER).exists() and any(final.iterdir()):
            raise ModelUnavailable(f"{final} exists and was not built by lightning_genenv; remove it")
        trash = final.with_name(f".{final.name}.old-{os.getpid()}")
        os.rename(final, trash)
        shutil.rmtree(trash, ignore_errors=True)
    try:
        os.rename(built, final)
    except OSError:  # another process published first
        if not (final / MARKER).exists():
            raise


@contextmanager
def rng_untouched():
    """torch's global (CPU) RNG leaves as it came: the block's draws and reseeds are undone."""
    import torch

    with torch.random.fork_rng(devices=[]):
        yield


def build_once(final: Path, spec: str, build: Callable[[Path], None]) -> Path:
    """``final`` if it holds a finished build whose marker reads ``spec``; else ``build(dir)`` fills a
    fresh directory, which gets the marker and is published at ``final`` (replacing a stale build)."""
    if _is_complete(final, spec):
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))  # same filesystem
    work.chmod(0o755)  # mkdtemp makes it private; the published dir should not be
    try:
        with rng_untouched():
            build(work)
        (work / MARKER).write_text(spec)
        _publish(work, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final
