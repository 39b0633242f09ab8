"""What a run carries across epochs: an epoch's result committed to the pools, counts and results; the state
through a checkpoint; the setup checks."""

import dataclasses
import random

import pytest

from lightning_genenv.coevolution.epoch import run_epoch
from lightning_genenv.coevolution.run_state import RunState, check_setup
from lightning_genenv.coevolution.sources import StaticSource
from lightning_genenv.config import ConfigError, compose
from lightning_genenv.data import GenEnvDataModule
from tests.coevolution.test_epoch import Agent, Engine, _task
from tests.fakes import CharTok

CFG = compose(["model=tiny", "data.tasks_per_epoch=4", "data.seeds_per_epoch=2", "data.replay_per_epoch=1",
               "data.generated_fraction=0.5", "agent.num_generations=2", "simulator.num_variations=2",
               "curriculum=static", "curriculum.band=0.5", "curriculum.k_min=0.0"])


def _epoch(epoch, solve):
    """A static set of 4 generated tasks, those in ``solve`` solved on every sample."""
    base = [_task(i) for i in range(10)]
    static = [_task(i, "generated") for i in range(100, 104)]
    encoded = []
    return run_epoch(epoch, CFG, StaticSource(static, 4), Engine(encoded, solve), Agent(encoded), None, base, [], [],
                     random.Random(epoch), random.Random(1))


def test_commit_joins_the_epoch_to_the_pools_and_counts(tmp_path):
    state = RunState(tmp_path / "pools", max_empty_epochs_warning=3)
    state.pools.start([_task(i) for i in range(10)])
    result = _epoch(0, solve=set())
    kept = result.curriculum.num_trained_on
    done = state.commit(0, result, CFG.agent.num_generations, write=True, from_simulator=False)

    assert len(state.pools.d_env) == 4 and len(state.pools.d_train) == 10 + kept
    assert done.metrics["curriculum/synthetic_tasks_used"] == float(kept)
    assert done.metrics["pools/d_env"] == 4.0 and done.metrics["pools/d_train"] == 10.0 + kept
    assert done.metrics["rollout/num_tasks/base"] == float(result.plan.base)
    assert done.warning is None and done.console is None
    assert state.results.get("qa").attempts == result.results["qa"].attempts

    again = state.commit(1, _epoch(1, solve=set()), CFG.agent.num_generations, write=False, from_simulator=False)
    assert state.num_generated_used == 2 * kept and len(state.pools.d_env) == 8
    assert not any(k.startswith("pools/") for k in again.metrics)  # not rank 0: no log written


def test_the_state_survives_a_checkpoint(tmp_path):
    state = RunState(tmp_path / "pools", max_empty_epochs_warning=3)
    state.pools.start([_task(i) for i in range(10)])
    state.invalid.update({"not_json": 2})
    state.commit(0, _epoch(0, solve={"t100"}), CFG.agent.num_generations, write=True, from_simulator=False)
    saved = state.state_dict()

    restored = RunState(tmp_path / "pools", max_empty_epochs_warning=3)
    assert restored.load_state_dict(saved, repair=True) == []  # the log matches the checkpoint: nothing cut
    assert restored.state_dict() == saved
    assert restored.invalid_metrics() == {"sim/invalid/not_json": 2.0}


def test_check_setup_refuses_custom_checks_without_reward_funcs():
    cfg = compose(["model=tiny", "data.families=[weather]"])
    dm = GenEnvDataModule(cfg.data, cfg.agent, pad_id=0)
    dm.setup()
    check_setup(cfg, dm, CharTok())  # accepted
    dm.base[0] = dataclasses.replace(dm.base[0], check="custom")
    with pytest.raises(ConfigError, match="1 tasks have check=custom, which only agent.reward_funcs score"):
        check_setup(cfg, dm, CharTok())
