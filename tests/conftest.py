"""Shared pytest configuration."""


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: slow tests (e.g. the embedded 135M model); deselect with -m 'not slow'")


import pytest  # noqa: E402

from lightning_genenv.models import default_cache_dir, resolve_model_path  # noqa: E402


@pytest.fixture(scope="session")
def tiny_dir() -> str:
    """The random-init tiny model (built once, cached)."""
    return resolve_model_path("tiny")


@pytest.fixture(scope="session")
def tiny_sft_dir() -> str:
    """The tiny model after a short SFT on the output formats (built once, cached)."""
    from tests.tiny_sft import build_tiny_sft

    return str(build_tiny_sft(default_cache_dir() / "tiny-sft-v1"))
