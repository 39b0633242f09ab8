"""Shared pytest fixtures (the ``slow`` mark is registered in pyproject.toml; shrunk train.py arguments
are in ``tests/shrunk.py``).

The test models live in the model cache (``$LIGHTNING_GENENV_CACHE``, else ``~/.cache/lightning_genenv``)
under directories named by a hash of what built them (see :mod:`lightning_genenv.models.tiny` and
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


@pytest.fixture
def simulator_trainer():
    """``simulator_trainer()``: a new trainer as train.py builds the simulator's, one epoch per ``fit``
    (:class:`OneEpochPerFit`, no epoch limit), without logger, checkpoints or progress bar."""
    import lightning as L

    from lightning_genenv.coevolution.simulator_updates import OneEpochPerFit

    def make() -> L.Trainer:
        return L.Trainer(accelerator="cpu", max_epochs=-1, callbacks=[OneEpochPerFit()], logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)

    return make


@pytest.fixture(scope="session")
def agent_batch():
    """``agent_batch(tok, n=4, sampler=None)``: a collated batch of one group of ``n`` completions of
    the prompt ``[5, 6, 7]`` (advantages ``+1, -1, -1, +1``); with ``sampler`` (an agent or simulator
    module), its sampling log-probs are that policy's own, as an engine returns them (the old policy
    of the PPO ratio). Shared by the agent, policy and simulator tests."""
    import torch

    from lightning_genenv.epoch_values import Group, collate_groups

    def make(tok, n: int = 4, sampler=None) -> dict:
        g = Group(task=None, prompt_ids=[5, 6, 7], completion_ids=[[8, 9, 10], [11, 12], [13], [8, 8, 8]][:n],
                  rewards=[1.0, 0.0, 0.0, 1.0][:n], logprobs=[[-1.0] * 3, [-1.0] * 2, [-1.0], [-1.0] * 3][:n],
                  truncated=[False] * n, texts=[""] * n, advantages=[1.0, -1.0, -1.0, 1.0][:n],
                  num_items_in_batch=9.0)
        batch = collate_groups([g], tok.pad_token_id)
        if sampler is not None:
            with torch.no_grad():
                batch["sampling_logprobs"] = sampler.logprobs(batch, sampler.cfg.temperature)
        return batch

    return make
