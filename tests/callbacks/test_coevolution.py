"""The co-evolution callback's data flow with scripted engines: bad generations are counted, the
attempts are the GRPO groups, p-hat / R_env / filter / RWR weights land in the pools."""

import json
import math

import pytest
from lightning.pytorch.plugins import Precision

from lightning_genenv.callbacks.coevolution import CoEvolutionCallback
from lightning_genenv.config import compose
from lightning_genenv.data import GenEnvDataModule
from lightning_genenv.prompts import gold_completion
from lightning_genenv.rollout.players import Rollouts
from tests.fakes import FakePolicy, RecordingTrainer, ScriptedEngine


def _setup(tmp_path, sim_texts, agent_engine, extra=()):
    cfg = compose(["model=tiny", "data.families=[weather]", "data.seeds_per_epoch=2",
                   "simulator.num_variations=3", "data.tasks_per_epoch=6", "agent.groups_per_step=2",
                   "agent.num_generations=4", f"run_dir={tmp_path}", *extra])
    dm = GenEnvDataModule(cfg.data, cfg.agent, pad_id=0)
    dm.setup()
    rollouts = Rollouts.of(agent_engine, ScriptedEngine(sim_texts))
    cb = CoEvolutionCallback(cfg, dm, rollouts, FakePolicy(), sim_trainer=None)
    agent = FakePolicy(cfg)
    if dm.layout().problem(cfg.data.seeds_per_epoch, len(dm.base)) is None:
        cb.setup(FakeTrainer(), agent, "fit")
    return cfg, dm, cb, agent


class FakeTrainer:
    current_epoch = 0
    global_step = 0
    is_global_zero = True
    accumulate_grad_batches = 1
    logger = None
    precision_plugin = Precision()  # 32-true: the engines generate in its (empty) forward context


def test_malformed_generations_are_counted_not_fatal(tmp_path):
    bad = ['not json at all', 'question": 1}', '', 'x' * 100_000, 'Paris", "call": {"name": "rm", "arguments": {}}}',
           'What is it?", "call": {"name": "get_current_weather", "arguments": {"city": 3}}}']
    cfg, dm, cb, agent = _setup(tmp_path, lambda i, n: bad[i * n:(i + 1) * n],
                                ScriptedEngine(lambda i, n: ["nope"] * n))
    cb.on_train_epoch_start(FakeTrainer(), agent)
    # each by its reason ('' and the two broken objects are not JSON once the prefix is prepended)
    assert dict(cb.run.state.invalid) == {"not_json": 3, "too_long": 1, "unknown_tool": 1, "argument_type_mismatch": 1}
    assert len(dm.epoch_groups) == 6  # filled with replayed and base tasks
    env = [json.loads(line) for line in (tmp_path / "pools" / "d_env.jsonl").read_text().splitlines()]
    assert len(env) == 6 and all(r["task"] is None and r["reason"] and r["r_env"] == 0.0 for r in env)
    assert cb.epoch.sim_records == []


def test_p_hat_renv_filter_and_weights(tmp_path):
    """Valid new tasks that the agent solves k of 4 times: p-hat = k/4, R_env, k_min, RWR weights."""

    def sim_texts(i, n):
        return [f'What is the weather in Town{i}{j}?", "call": {{"name": "get_current_weather", '
                f'"arguments": {{"city": "Town{i}{j}"}}}}}}' for j in range(n)]

    ks = [0, 1, 2, 4, 3, 2]  # successes per task, in rollout order (the 6 generated tasks come first)

    def agent_texts(i, n):  # the policy's prompts so far are the tasks of this call
        return [gold_completion(policy.tasks[i]) if j < ks[i] else "wrong" for j in range(n)]

    cfg, dm, cb, policy = _setup(tmp_path, sim_texts, ScriptedEngine(agent_texts), ["data.generated_fraction=1.0"])
    cb.on_train_epoch_start(FakeTrainer(), policy)
    env = [json.loads(line) for line in (tmp_path / "pools" / "d_env.jsonl").read_text().splitlines()]
    assert [r["p_hat"] for r in env] == [0.0, 0.25, 0.5, 1.0, 0.75, 0.5]
    for r in env:
        assert r["r_env"] == pytest.approx(math.exp(-10 * (r["p_hat"] - 0.5) ** 2))
        assert r["trained_on"] == (r["p_hat"] >= 0.1)
    assert len(cb.epoch.sim_records) == 5
    w = [r.weight for r in cb.epoch.sim_records]
    assert sum(w) == pytest.approx(5.0)
    kept = [r["r_env"] for r in env if r["trained_on"]]
    expected = [math.exp(r) / sum(math.exp(x) for x in kept) * 5 for r in kept]
    assert w == pytest.approx(expected)
    generated = [r for r in cb.run.state.pools.d_train if r.source == "generated"]
    assert len(generated) == 5
    # the p-hat attempts are the GRPO groups (nothing rolled out twice): every valid generated task is
    # attempted once, the 5 that passed the filter join the batch nearest to α first, and one base task
    # (no replay: D_train has no earlier epoch yet) fills the sixth slot
    assert [(len(prompts), params.n) for prompts, params, _ in cb.run.rollouts.agent.calls] == [(6, 4), (1, 4)]
    assert [g.rewards.count(1.0) for g in dm.epoch_groups[:5]] == [2, 2, 1, 3, 4]
    assert dm.epoch_groups[5].task.source == "seed"
    g = dm.epoch_groups[2]
    assert g.rewards == [1.0, 0.0, 0.0, 0.0] and g.advantages[0] > 0 > g.advantages[1]
    assert dm.epoch_groups[4].advantages == [0.0] * 4  # solved 4 of 4: no signal
    assert g.num_items_in_batch == sum(len(c) for gr in dm.epoch_groups[2:4] for c in gr.completion_ids)


def test_replay_comes_from_earlier_epochs_and_generated_fraction_caps_the_share(tmp_path):
    """Epoch 1 replays epoch 0's kept tasks; generated_fraction=0.5 of 6 slots leaves 3 to base tasks."""

    def sim_texts(i, n):
        return [f'What is the weather in Town{i}{j}?", "call": {{"name": "get_current_weather", '
                f'"arguments": {{"city": "Town{i}{j}"}}}}}}' for j in range(n)]

    class OneInFour(ScriptedEngine):  # each task solved once in 4: p̂ = 0.25, kept
        def generate(self, prompts, params, desc=None):
            tasks = policy.tasks[-len(prompts):]
            self.script = lambda i, n: [gold_completion(tasks[i])] + ["x"] * (n - 1)
            return super().generate(prompts, params, desc)

    cfg, dm, cb, policy = _setup(tmp_path, sim_texts, OneInFour(None),
                                 ["data.generated_fraction=0.5", "data.replay_per_epoch=2"])
    trainer = FakeTrainer()
    cb.on_train_epoch_start(trainer, policy)
    epoch0 = {r.task.id for r in cb.run.state.pools.d_train if r.source == "generated"}
    assert epoch0 and all(g.task.source != "seed" for g in dm.epoch_groups[:3])
    assert [g.task.source for g in dm.epoch_groups[3:]] == ["seed"] * 3
    trainer.current_epoch = 1
    cb.on_train_epoch_start(trainer, policy)
    generated = [g for g in dm.epoch_groups if g.task.source != "seed"]
    assert len(generated) <= 3 and len(dm.epoch_groups) == 6
    replayed = [g.task.id for g in generated if g.task.epoch == 0]
    assert set(replayed) <= epoch0


def test_simulator_checkpoint_is_restored_at_train_start_after_the_callback_state(tmp_path):
    """Under FSDP2 (``ModelParallelStrategy.restore_checkpoint_after_setup``) Lightning loads the
    callback states after ``on_fit_start``: the simulator's checkpoint they name must still be restored
    before the first rollout."""
    import torch

    from lightning_genenv.coevolution.checkpoint import rng_state

    cfg = compose(["model=tiny", f"run_dir={tmp_path}"])
    sim_trainer = RecordingTrainer()
    cb = CoEvolutionCallback(cfg, None, Rollouts.of(None, None), FakePolicy(), sim_trainer=sim_trainer)
    (tmp_path / "checkpoints").mkdir()
    torch.save({}, tmp_path / "checkpoints" / "simulator-1.ckpt")  # a whole archive (a damaged one is refused)
    cb.load_state_dict({"sim_epochs": 1, "invalid": {}, "num_generated_used": 0, "rng": rng_state(),
                        "pools": cb.run.state.pools.state_dict(), "results": {}})
    trainer = FakeTrainer()
    trainer.global_step, trainer.strategy = 2, type("Strategy", (), {"root_device": "cpu"})()
    cb.on_train_start(trainer, FakePolicy(cfg))
    assert sim_trainer.fits == [(tmp_path / "checkpoints" / "simulator-1.ckpt", [])]


def test_setup_refuses_a_base_set_smaller_than_tasks_per_epoch(tmp_path):
    """An epoch with no valid generated task is filled from the base set: one too small for
    ``data.tasks_per_epoch`` is refused at setup, in one line, not after the first rollouts."""
    from lightning_genenv.config import ConfigError

    cfg, dm, cb, agent = _setup(tmp_path, lambda i, n: [""] * n, ScriptedEngine(lambda i, n: [""] * n),
                                ["data.tasks_per_epoch=64"])
    assert len(dm.base) < 64
    with pytest.raises(ConfigError, match=f"the base set has {len(dm.base)} tasks, fewer than "
                                          "data.tasks_per_epoch=64") as e:
        cb.setup(FakeTrainer(), agent, "fit")
    assert "\n" not in str(e.value)
    cfg, dm, cb, agent = _setup(tmp_path, lambda i, n: [""] * n, ScriptedEngine(lambda i, n: [""] * n),
                                [f"data.tasks_per_epoch={len(dm.base) // 2 * 2}"])
    cb.setup(FakeTrainer(), agent, "fit")  # exactly enough (rounded to the step size): accepted


def test_epochs_without_a_valid_generated_task_are_warned_about_then_reported(tmp_path, capsys):
    """Each empty epoch: a warning with the simulator's rejections by reason; from the
    ``curriculum.max_empty_epochs_warning``-th in a row, a console line; a valid task resets the streak,
    and the streak survives a checkpoint."""
    bad = ["not json at all", 'Paris", "call": {"name": "rm", "arguments": {}}}', "not json either"]
    good = ('What is the weather in Oslo?", "call": {"name": "get_current_weather", '
            '"arguments": {"city": "Oslo"}}}')
    script = {"texts": bad}
    cfg, dm, cb, agent = _setup(tmp_path, lambda i, n: [script["texts"][(i * n + j) % 3] for j in range(n)],
                                ScriptedEngine(lambda i, n: ["nope"] * n), ["curriculum.max_empty_epochs_warning=2"])
    trainer = FakeTrainer()
    for epoch in range(3):
        trainer.current_epoch = epoch
        with pytest.warns(UserWarning, match=rf"epoch {epoch + 1}: none of the simulator's 6 generated tasks was valid "
                                             r"\(rejected: not_json 4, unknown_tool 2\)"):
            cb.on_train_epoch_start(trainer, agent)
        out = capsys.readouterr().out
        if epoch == 0:
            assert "WARNING" not in out
        else:
            assert f"WARNING: {epoch + 1} epochs in a row (epochs 1-{epoch + 1}) without a single valid generated " \
                   f"task: " \
                   f"the run is plain GRPO on the base set. The simulator's rejections over them: " \
                   f"not_json {4 * (epoch + 1)}, unknown_tool {2 * (epoch + 1)}" in out, out
    state = cb.state_dict()
    cb.run.state.empty.streak = 0
    cb.load_state_dict(state)
    assert cb.run.state.empty.streak == 3
    script["texts"] = [good] * 3
    trainer.current_epoch = 3
    cb.on_train_epoch_start(trainer, agent)
    assert "WARNING" not in capsys.readouterr().out and cb.run.state.empty.streak == 0
    cb.load_state_dict({k: v for k, v in state.items() if k != "empty"})
    assert cb.run.state.empty.streak == 0  # a checkpoint from before the counter
