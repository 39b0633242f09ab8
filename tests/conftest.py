"""Shared pytest fixtures (the ``slow`` mark is registered in pyproject.toml; shrunk train.py arguments
are in ``tests/shrunk.py``).

The test models live in the model cache (``$LIGHTNING_GENENV_CACHE``, else ``~/.cache/lightning_genenv``)
under directories named by a hash of what built them (see :mod:`lightning_genenv.tiny_model` and
``tests/tiny_sft.py``): an empty cache builds them, a stale one is never used.
"""

import pytest

from lightning_genenv.models import resolve_model_path


@pytest.fixture(scope="session")
def tiny_dir() -> str:
    """The random-init tiny model. It gets no reward: assert nothing about learning with it."""
    return resolve_model_path("tiny")


@pytest.fixture(scope="session")
def tiny_sft_dir() -> str:
    """The tiny model after a short SFT on the output formats: it writes valid tasks and solves some."""
    from tests.tiny_sft import tiny_sft_model_dir

    return str(tiny_sft_model_dir())
