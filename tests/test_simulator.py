"""The simulator's LightningModule on the tiny model: the KL cap, before and after each step."""

from types import SimpleNamespace

import lightning as L
import pytest
import torch
from torch.utils.data import DataLoader

from lightning_genenv.config import compose
from lightning_genenv.epoch_values import SimRecord, collate_generations
from lightning_genenv.models import load_causal_lm
from tests.fakes import simulator_module


def _one_process():
    """A stand-in trainer for calling the hooks directly: one process, so its own flag decides."""
    return SimpleNamespace(strategy=SimpleNamespace(reduce_boolean_decision=lambda flag, all: flag))


def test_simulator_kl_cap_skips_the_rest_of_the_epoch(tiny_dir):
    torch.manual_seed(0)
    model, tok = load_causal_lm(tiny_dir)
    cfg = compose(["model=tiny", "simulator.kl_max=0.01", "simulator.learning_rate=0.05"]).simulator
    sim = simulator_module(model, tok, cfg)
    sim.log_dict = lambda *a, **k: None
    sim.trainer = _one_process()
    batch = collate_generations([SimRecord([5, 6], [7, 8, 9], 1.5), SimRecord([5], [10], 0.5)], tok.pad_token_id)
    opt = sim.configure_optimizers()
    sim.on_train_epoch_start()
    loss = sim.training_step(batch, 0)  # KL is 0 at the start: a real step
    assert loss is not None and sim.last_kl == pytest.approx(0.0, abs=1e-6)
    loss.backward()
    opt.step()
    assert sim.training_step(batch, 1) is None  # now beyond kl_max: skipped
    assert sim.kl_exceeded and sim.on_train_batch_start(batch, 2) == -1
    sim.on_train_epoch_start()
    assert sim.on_train_batch_start(batch, 0) is None


def test_a_cap_crossed_on_another_rank_skips_the_step_here(tiny_dir):
    """The pre-step decision is taken on all ranks together: local KL 0, another rank over the cap."""
    model, tok = load_causal_lm(tiny_dir)
    sim = simulator_module(model, tok, compose(["model=tiny"]).simulator)
    sim.log_dict = lambda *a, **k: None
    asked = []
    strategy = SimpleNamespace(reduce_boolean_decision=lambda flag, all: asked.append((flag, all)) or True)
    sim.trainer = SimpleNamespace(strategy=strategy)
    batch = collate_generations([SimRecord([5, 6], [7, 8, 9], 1.0)], tok.pad_token_id)
    sim.on_train_epoch_start()
    assert sim.training_step(batch, 0) is None and sim.kl_exceeded
    assert asked == [(False, False)]  # this rank was under the cap and asked whether any rank is over
    assert sim.steps_this_epoch == 0 and sim._step is None  # no weights copied for a step not taken


def _fit_one_epoch(tiny_dir, kl_max: float, *overrides: str):
    """One epoch of RWR (two steps on the same batch, lr 0.05) through a real Lightning trainer."""
    torch.manual_seed(0)
    model, tok = load_causal_lm(tiny_dir)
    cfg = compose(["model=tiny", f"simulator.kl_max={kl_max}", "simulator.learning_rate=0.05", *overrides]).simulator
    sim = simulator_module(model, tok, cfg)
    records = [SimRecord([5, 6], [7, 8, 9], 1.5), SimRecord([5], [10], 0.5)]
    loader = DataLoader([records, records], batch_size=None,
                        collate_fn=lambda r: collate_generations(r, tok.pad_token_id))
    initial = [p.detach().clone() for p in sim.trainable_parameters()]
    trainer = L.Trainer(max_epochs=1, accelerator="cpu", logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(sim, loader)
    moved = any(not torch.equal(a, b) for a, b in zip(initial, sim.trainable_parameters()))
    return sim, moved, trainer


def test_a_step_that_crosses_kl_max_is_undone(tiny_dir):
    sim, moved, trainer = _fit_one_epoch(tiny_dir, kl_max=1e-4)
    # the first step starts at KL 0 and ends over the cap: undone, the epoch's second step skipped
    assert not moved and sim.steps_undone == 1 and sim.steps_this_epoch == 0 and sim.kl_exceeded
    assert sim.last_kl == pytest.approx(0.0, abs=1e-6)  # the weights the epoch ends with: the initial ones
    assert trainer.callback_metrics["sim/kl_after_step"] > 1e-4


def test_steps_under_kl_max_are_kept(tiny_dir):
    sim, moved, trainer = _fit_one_epoch(tiny_dir, kl_max=100.0)
    assert moved and sim.steps_undone == 0 and sim.steps_this_epoch == 2 and not sim.kl_exceeded
    # last_kl is measured after the last step, on its batch: the KL the epoch ends with
    assert sim.last_kl == pytest.approx(float(trainer.callback_metrics["sim/kl_after_step"]), rel=1e-5)
    assert 0.0 < sim.last_kl < 100.0


def test_a_step_that_crosses_kl_step_max_alone_is_undone_and_the_epoch_goes_on(tiny_dir):
    """The paper's per-step cap: each step's KL to the weights before it. Both steps of the epoch change the weights
    by more than the cap: each is undone, neither ends the epoch (kl_max, far away, is never crossed)."""
    sim, moved, trainer = _fit_one_epoch(tiny_dir, 100.0, "simulator.kl_step_max=1e-4")
    assert not moved and sim.step_caps_hit == 2 and sim.steps_undone == 0 and not sim.kl_exceeded
    assert sim.steps_this_epoch == 0 and trainer.callback_metrics["sim/kl_step"] > 1e-4


def test_steps_under_kl_step_max_are_kept_and_measured(tiny_dir):
    sim, moved, trainer = _fit_one_epoch(tiny_dir, 100.0, "simulator.kl_step_max=100.0")
    assert moved and sim.step_caps_hit == 0 and sim.steps_this_epoch == 2
    assert 0.0 < float(trainer.callback_metrics["sim/kl_step"]) < 100.0


@pytest.mark.parametrize("objective", ["rwr", "grpo"])
def test_a_seeds_candidates_share_their_prompt_and_give_the_same_loss(tiny_dir, objective):
    """Four candidates of one prompt are collated with the prompt once; the loss and its metrics are those of the
    four prompts collated separately."""
    model, tok = load_causal_lm(tiny_dir)
    sim = simulator_module(model, tok, compose(["model=tiny", f"simulator.objective={objective}",
                                                              "simulator.num_variations=4"]).simulator)
    records = [SimRecord([5, 6, 7], [8 + i, 9], w) for i, w in enumerate([1.5, -0.5, 0.5, -1.5])]
    shared = collate_generations(records, tok.pad_token_id)
    separate = collate_generations(records[:1], tok.pad_token_id)
    separate = {k: torch.cat([collate_generations([r], tok.pad_token_id)[k] for r in records]) for k in separate}
    assert shared["prompt_ids"].shape[0] == 1 and separate["prompt_ids"].shape[0] == 4
    losses = []
    for batch in (shared, separate):
        logp = sim.logprobs(batch, sim.fit_temperature)
        losses.append(sim.objective.loss(logp, batch["completion_mask"], batch["weights"],
                                         sim.anchor_logprobs(batch, sim.fit_temperature))[0])
    assert float(losses[0]) == pytest.approx(float(losses[1]), rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("overrides,epoch,expected", [([], 9, 0.7), (["simulator.temperature=0.5"], 0, 0.5),
                                                      (["simulator.fit_temperature=1.0"], 3, 1.0),
                                                      (["simulator.temperature_end=0.5"], 0, 0.7),
                                                      (["simulator.temperature_end=1.0"], 9, 1.0)])
def test_rwr_fits_at_the_sampling_temperature(tiny_dir, overrides, epoch, expected):
    """The loss's NLL is the sampling policy's (T = simulator.temperature, or the epoch's of 10 with
    temperature_end) unless fit_temperature says otherwise."""
    from lightning_genenv.losses import sequence_logprobs

    model, tok = load_causal_lm(tiny_dir)
    cfg = compose(["model=tiny", *overrides]).simulator
    sim = simulator_module(model, tok, cfg, total_updates=10)
    sim.aim(None, epoch)
    logged = {}
    sim.log_dict = lambda d, **k: logged.update(d)
    sim.trainer = _one_process()
    batch = collate_generations([SimRecord([5, 6], [7, 8, 9], 1.0)], tok.pad_token_id)
    sim.training_step(batch, 0)
    assert sim.fit_temperature == expected
    with torch.no_grad():
        for t in (0.5, 0.7, 1.0):
            nll = float(-sequence_logprobs(model, batch, t).mean())
            assert (float(logged["sim/nll"]) == pytest.approx(nll, rel=1e-5)) == (t == expected)


@pytest.mark.parametrize("schedule, expected", [("linear", [0.05, 0.0375, 0.025]), ("constant", [0.05] * 3),
                                               ("off_target", [0.02, 0.05, 0.05])])
def test_the_learning_rate_falls_by_update_with_the_linear_schedule(tiny_dir, simulator_trainer, schedule,
                                                                    expected):
    """The simulator's trainer is re-entered for each update (one ``fit``, one epoch): with ``linear`` and a
    horizon of 4 updates the k-th update's learning rate is 0.05 * (1 - k / 4), and the optimizer takes it. With
    ``off_target`` (scale 0.1) it is 0.05 * min(1, |p̄ - α| / 0.1) for the |p̄ - α| of 0.04, 0.3 and None (the full
    rate) the updates are given."""
    torch.manual_seed(0)
    model, tok = load_causal_lm(tiny_dir)
    cfg = compose(["model=tiny", "simulator.kl_max=100", "simulator.learning_rate=0.05",
                   f"simulator.lr_scheduler_type={schedule}", "simulator.lr_off_target_scale=0.1"]).simulator
    sim = simulator_module(model, tok, cfg, total_updates=4)
    records = [SimRecord([5, 6], [7, 8, 9], 1.5), SimRecord([5], [10], 0.5)]
    trainer = simulator_trainer()
    seen = []
    for off_target in (0.04, 0.3, None):
        sim.aim(off_target)
        trainer.fit(sim, DataLoader([records], batch_size=None,
                                    collate_fn=lambda r: collate_generations(r, tok.pad_token_id)))
        seen.append((sim.learning_rate_now, sim.steps_this_epoch))
    assert seen == [(pytest.approx(lr), 1) for lr in expected]


def test_a_restored_simulator_goes_on_with_the_linear_schedule_where_it_stopped(tiny_dir, simulator_trainer,
                                                                                 tmp_path):
    """The schedule's state is in the simulator trainer's checkpoint: a fresh module and trainer restored after
    2 of 4 updates (a fit on no batches, as a resume does) take the third update at 0.05 * (1 - 2/4), as the
    uninterrupted run does."""
    cfg = compose(["model=tiny", "simulator.kl_max=100", "simulator.learning_rate=0.05",
                   "simulator.lr_scheduler_type=linear"]).simulator
    records = [SimRecord([5, 6], [7, 8, 9], 1.5), SimRecord([5], [10], 0.5)]

    def loader(batches):
        return DataLoader(batches, batch_size=None, collate_fn=lambda r: collate_generations(r, 0))

    torch.manual_seed(0)
    first, first_trainer = simulator_module(*load_causal_lm(tiny_dir), cfg, total_updates=4), simulator_trainer()
    for _ in range(2):
        first_trainer.fit(first, loader([records]))
    first_trainer.save_checkpoint(tmp_path / "simulator-2.ckpt", weights_only=False)

    restored, again = simulator_module(*load_causal_lm(tiny_dir), cfg, total_updates=4), simulator_trainer()
    again.fit(restored, loader([]), ckpt_path=tmp_path / "simulator-2.ckpt", weights_only=True)
    again.fit(restored, loader([records]))
    first_trainer.fit(first, loader([records]))
    assert restored.learning_rate_now == first.learning_rate_now == pytest.approx(0.025)
    assert restored.steps_this_epoch == 1
