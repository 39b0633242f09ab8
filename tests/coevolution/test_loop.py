"""A run's epochs without Lightning: the first half returns the agent's batches and what to log, the second
the simulator's update and the epoch's timers; the state travels through a checkpoint."""

import pytest

from lightning_genenv.coevolution.loop import CoEvolution
from lightning_genenv.config import compose
from lightning_genenv.data import GenEnvDataModule
from lightning_genenv.rollout.players import Rollouts
from tests.fakes import FakePolicy, RecordingTrainer, ScriptedEngine

# two seeds x three variations: the first of each seed's three is a valid weather task, the rest are not JSON
CITIES = ["Ouagadougou", "Ulaanbaatar"]


def _valid(i):
    return (f'What is the weather in {CITIES[i]}?", "call": {{"name": "get_current_weather", '
            f'"arguments": {{"city": "{CITIES[i]}"}}}}}}')


def _run(tmp_path, sim_trainer=None, extra=()):
    cfg = compose(["model=tiny", "data.families=[weather]", "data.seeds_per_epoch=2", "simulator.num_variations=3",
                   "data.tasks_per_epoch=6", "agent.groups_per_step=2", "agent.num_generations=4",
                   "agent.max_completion_length=128",  # CharTok: one token a character
                   f"run_dir={tmp_path}", *extra])
    dm = GenEnvDataModule(cfg.data, cfg.agent, pad_id=0)
    dm.setup()
    run = CoEvolution(cfg, Rollouts.of(ScriptedEngine(lambda i, n: ["nope"] * n),
                                       ScriptedEngine(lambda i, n: [_valid(i), "x", "y"][:n])),
                      FakePolicy(), sim_trainer)
    assert run.setup(dm, FakePolicy.tokenizer, progress=False) is None
    return cfg, dm, run


def test_begin_epoch_returns_the_batches_and_the_metrics(tmp_path):
    cfg, dm, run = _run(tmp_path)
    start = run.begin_epoch(0, dm, FakePolicy(cfg), write=True)

    assert len(start.groups) == cfg.data.tasks_per_epoch and start.groups == start.result.groups
    assert start.metrics["sim/valid_rate"] == pytest.approx(2 / 6)
    assert start.metrics["pools/d_env"] == 6.0 and "time/checkpoint" not in start.metrics
    assert start.warning is None and start.console is None
    tokens = sum(len(g.prompt_ids) + sum(len(c) for c in g.completion_ids) for g in start.groups)
    assert start.progress.train_tokens == tokens > 0  # one rank: every group is local
    assert start.progress.epoch == 0 and start.progress.sim_records == start.result.curriculum.sim_records
    assert (tmp_path / "pools" / "d_env.jsonl").read_text().count("\n") == 6  # written where write=True


def test_end_epoch_reports_the_timers_and_the_tokens_per_second(tmp_path):
    cfg, dm, run = _run(tmp_path)
    progress = run.begin_epoch(0, dm, FakePolicy(cfg), write=False).progress
    progress.timers.add("agent_update", 2.0)  # as the callback's batch and validation hooks time it
    metrics = run.end_epoch(progress)

    assert metrics["train/tokens_per_second"] == pytest.approx(progress.train_tokens / 2.0)
    assert metrics["rollout/weight_syncs"] == 0.0 and metrics["time/weight_sync"] == 0.0
    assert {"time/generate_tasks", "time/agent_rollouts", "time/prepare_groups", "time/pool_write",
            "time/simulator_update"} <= set(metrics)
    assert metrics["sim/invalid/not_json"] == 4.0
    assert "sim/steps" not in metrics  # no simulator trainer: no update


def test_the_simulator_is_fitted_on_the_epochs_set_and_its_count_is_checkpointed(tmp_path):
    trainer = RecordingTrainer()
    cfg, dm, run = _run(tmp_path, sim_trainer=trainer, extra=["curriculum.k_min=0.0"])  # unsolved tasks fitted too
    (tmp_path / "checkpoints").mkdir()  # train.py makes it with the run directory
    sim = run.simulator_updates.sim
    sim.steps_this_epoch, sim.last_kl, sim.kl_exceeded, sim.learning_rate_now = 1, 0.0, False, 5e-4
    progress = run.begin_epoch(0, dm, FakePolicy(cfg), write=True).progress
    fitted = list(progress.sim_records)
    run.end_epoch(progress)
    # the epoch's |p̄ - α| reaches the simulator before its update (lr_scheduler_type=off_target follows it)
    assert sim.aimed == [(progress.off_target, progress.epoch)] and progress.off_target is not None

    assert len(fitted) == 2 and len(trainer.fits) == 1  # one fit, on the epoch's two valid tasks
    assert sum(len(batch["completion_ids"]) for batch in trainer.fits[0][1]) == len(fitted)
    state = run.state_dict()
    assert state["sim_epochs"] == 1
    # the callback's save, logged with the next epoch
    assert run.begin_epoch(1, dm, FakePolicy(cfg), write=True, checkpoint_s=1.5).metrics["time/checkpoint"] == 1.5

    _, _, again = _run(tmp_path / "again", sim_trainer=RecordingTrainer())
    (tmp_path / "again" / "checkpoints").mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match="simulator-1.ckpt"):  # the checkpoint it names must exist
        again.load_state_dict(state, repair=False)


def test_the_agent_update_ends_once_where_the_validation_or_the_epoch_ends(tmp_path, monkeypatch):
    """The phases the callback times between hooks run one at a time: starting the validation ends the agent's
    update, and the epoch's end ends whichever still runs; each is recorded once per epoch."""
    from lightning_genenv.coevolution import telemetry

    now = iter(range(100))
    monkeypatch.setattr(telemetry, "clock", lambda: float(next(now)))
    validated = telemetry.Timers()
    validated.start("agent_update")  # 0
    validated.start("validation")  # 1: the update ends, the validation starts (2)
    validated.stop()  # 3
    validated.stop()  # nothing runs: nothing recorded
    assert validated.times == {"agent_update": 1.0, "validation": 1.0}
    cfg, dm, run = _run(tmp_path)
    progress = run.begin_epoch(0, dm, FakePolicy(cfg), write=False).progress
    progress.timers.start("agent_update")
    metrics = run.end_epoch(progress)  # no validation this epoch: the epoch's end ends the update
    assert metrics["time/agent_update"] > 0 and "time/validation" not in metrics
