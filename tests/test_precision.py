"""``trainer.precision``: one optimizer step moves the weights under every value the schema accepts that a CPU
runs; ``16-mixed`` steps through Lightning's gradient scaler (run here with fp16 autocast on the CPU, a plugin
Lightning only builds for GPUs) and is refused on a CPU before any model loads; under ``bf16-mixed`` the old
log-probs come from the same precision context as the step, so the first pass's ratio is exactly 1.

``LIGHTNING_GENENV_TEST_ACCELERATOR=gpu`` runs the same tests on a CUDA device (``bench/gpu_check.sh``), where every
value steps, ``16-mixed`` through the trainer's own flag."""

import os
import typing

import lightning as L
import pytest
import torch
from lightning.pytorch.plugins import MixedPrecision

from lightning_genenv.batch_layout import BatchLayout
from lightning_genenv.config import ConfigError, TrainerConfig, compose
from lightning_genenv.epoch_values import Group, collate_groups
from lightning_genenv.models import load_causal_lm
from lightning_genenv.rollout import HFEngine, SamplingParams
from tests.fakes import agent_module

ON_CPU = ["32-true", "32", "bf16-mixed", "bf16-true"]  # what a CPU runs
GPU_ONLY = ["16-mixed"]  # refused on a CPU (precision_problem); its step is run below through the CPU plugin
ACCELERATOR = os.environ.get("LIGHTNING_GENENV_TEST_ACCELERATOR", "cpu")  # cpu | gpu
DEVICE = "cuda" if ACCELERATOR == "gpu" else "cpu"
STEPPED = ON_CPU + (GPU_ONLY if ACCELERATOR == "gpu" else [])


def test_every_accepted_precision_has_a_step_test_or_a_refusal():
    accepted = typing.get_args(typing.get_type_hints(TrainerConfig)["precision"])
    assert sorted(accepted) == sorted(ON_CPU + GPU_ONLY)


class _Weights(L.Callback):
    """The trainable weights when training starts (after the precision plugin converted the model) and the
    optimizer steps taken."""

    def on_train_start(self, trainer, module):
        self.before = [p.detach().clone() for p in module.trainable_parameters()]


def _fit(agent, batches: list[dict], **trainer_kwargs) -> tuple[L.Trainer, _Weights]:
    weights = _Weights()
    trainer = L.Trainer(max_epochs=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        accelerator=ACCELERATOR, devices=1, enable_model_summary=False, callbacks=[weights],
                        **trainer_kwargs)
    trainer.fit(agent, train_dataloaders=torch.utils.data.DataLoader(batches, batch_size=None))
    return trainer, weights


def _moved(agent, weights: _Weights) -> bool:
    after = agent.trainable_parameters()
    assert all(torch.isfinite(p).all() for p in after)
    return any(not torch.equal(b, a.detach()) for b, a in zip(weights.before, after))


def _agent(tiny_dir, *overrides, **kwargs):
    torch.manual_seed(0)
    model, tok = load_causal_lm(tiny_dir)
    cfg = compose(["model=tiny", "agent.learning_rate=1e-2", "agent.beta=0.01", *overrides]).agent
    return agent_module(model, tok, cfg, **kwargs), tok


@pytest.mark.parametrize("precision", STEPPED)
def test_one_step_moves_the_weights_under_each_precision(tiny_dir, agent_batch, precision):
    agent, tok = _agent(tiny_dir)
    trainer, weights = _fit(agent, [agent_batch(tok, sampler=agent)], precision=precision)
    assert trainer.global_step == 1 and agent.nonfinite_steps == 0
    assert _moved(agent, weights), f"precision={precision}: the step left the weights as they were"


def test_16_mixed_steps_through_the_gradient_scaler(tiny_dir, agent_batch):
    """The closure's loss goes back to the plugin: it unscales, clips, steps and updates its scale (its growth
    tracker counts the steps it took)."""
    agent, tok = _agent(tiny_dir)
    plugin = MixedPrecision("16-mixed", DEVICE)
    trainer, weights = _fit(agent, [agent_batch(tok, sampler=agent)], plugins=[plugin])
    assert trainer.global_step == 1 and agent.nonfinite_steps == 0
    assert _moved(agent, weights), "16-mixed: the scaler never stepped"
    assert plugin.scaler._growth_tracker.item() == 1  # scaler.step then scaler.update, once


def test_16_mixed_counts_a_non_finite_loss_and_stops_after_the_limit(tiny_dir, agent_batch):
    from lightning_genenv.policy import NonFiniteError

    agent, tok = _agent(tiny_dir, "agent.beta=0.0", max_nonfinite_steps=2)
    good, bad = agent_batch(tok, sampler=agent), agent_batch(tok, sampler=agent)
    bad["advantages"] = torch.tensor([float("nan"), 1.0, -1.0, 0.0])
    _, weights = _fit(agent, [bad, good], plugins=[MixedPrecision("16-mixed", DEVICE)])
    assert (agent.nonfinite_steps, agent.nonfinite_streak) == (1, 0) and _moved(agent, weights)
    with pytest.raises(NonFiniteError, match="2 agent steps in a row"):
        _fit(agent, [bad, bad, good], plugins=[MixedPrecision("16-mixed", DEVICE)])


def test_precisions_a_cpu_cannot_run_are_named():
    from lightning_genenv.trainers import precision_problem

    for precision in ON_CPU + GPU_ONLY:
        assert precision_problem(precision, gpu=True) is None
        assert (precision_problem(precision, gpu=False) is None) == (precision in ON_CPU)
    assert "16-mixed needs a GPU" in precision_problem("16-mixed", gpu=False)


def test_16_mixed_is_refused_on_a_cpu_before_any_model_loads(monkeypatch, tmp_path):
    import lightning_genenv.assemble as assemble
    import lightning_genenv.train as train

    def load(*args, **kwargs):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(assemble, "load_from_config", load)
    with pytest.raises(SystemExit) as e:
        train.main(["trainer.precision=16-mixed", "strategy.accelerator=cpu", f"run_dir={tmp_path / 'run'}"])
    assert str(e.value).startswith("error: trainer.precision=16-mixed needs a GPU") and "\n" not in str(e.value)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("override,reason", [("strategy=fsdp", "does not support it"),
                                             ("model.dtype=float16", "cannot unscale float16 gradients")])
def test_16_mixed_combinations_that_cannot_run_are_refused_by_the_schema(override, reason):
    with pytest.raises(ConfigError, match=reason):
        compose(["trainer.precision=16-mixed", override])
    compose(["trainer.precision=bf16-mixed", override])  # the other mixed precision composes


def test_bf16_mixed_first_pass_ratio_is_exactly_1(tiny_dir, monkeypatch):
    """rollout=hf, num_iterations=1: the sampler's log-probs (transformers generate, fp32 here) are not the
    step's bf16 forward; below 32 bits prepare_groups recomputes the old log-probs in the trainer's precision
    context, so the ratio of the first pass is 1 to the bit and nothing is clipped, with a clip range (1e-6)
    that any precision noise would leave."""
    import lightning_genenv.agent as agent_mod

    agent, tok = _agent(tiny_dir, "agent.beta=0.0", "agent.epsilon=1e-6", "agent.num_generations=4")
    trainer = L.Trainer(max_epochs=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        accelerator=ACCELERATOR, devices=1, enable_model_summary=False, precision="bf16-mixed")
    agent.to(DEVICE)  # where the trainer will train it: generation and prepare_groups run there too
    agent.trainer = trainer  # prepare_groups runs at the epoch's start, with the trainer attached
    (samples,) = HFEngine(agent.model, tok, batch_size=1, progress=False).generate(
        [[5, 6, 7]], SamplingParams(n=4, temperature=1.0, max_new_tokens=6))
    group = Group(task=None, prompt_ids=[5, 6, 7], completion_ids=[s.completion_ids for s in samples],
                  rewards=[1.0, 0.0, 0.0, 1.0], logprobs=[s.logprobs for s in samples],
                  truncated=[s.truncated for s in samples], texts=[s.text for s in samples])
    layout = BatchLayout(tasks_per_epoch=1, groups_per_step=1, accumulate_grad_batches=1, num_iterations=1)
    (prepared,) = agent.prepare_groups([group], layout)
    assert prepared.old_logprobs is not None, "below 32 bits the old log-probs are recomputed"
    seen = []
    grpo_loss = agent_mod.grpo_loss

    def recording(logp, old_logp, *args, **kwargs):
        loss, metrics = grpo_loss(logp, old_logp, *args, **kwargs)
        seen.append((logp.detach(), old_logp, args[1], metrics))
        return loss, metrics

    monkeypatch.setattr(agent_mod, "grpo_loss", recording)
    trainer.fit(agent, train_dataloaders=torch.utils.data.DataLoader([collate_groups([prepared], tok.pad_token_id)],
                                                                      batch_size=None))
    ((logp, old, mask, metrics),) = seen
    assert logp.dtype == torch.float32 and mask.sum() > 0
    assert torch.equal(logp * mask, old * mask), (logp - old).abs().max()
    assert float(metrics["clip_ratio/region"]) == 0.0


def test_the_transformers_engine_generates_in_its_forward_context(tiny_dir):
    """The trainer's precision context (agent.precision_context under train.py) wraps every generation."""
    from contextlib import contextmanager

    model, tok = load_causal_lm(tiny_dir)
    entered = []

    @contextmanager
    def context():
        entered.append(torch.is_autocast_enabled("cpu"))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            yield

    engine = HFEngine(model, tok, batch_size=1, progress=False, forward_context=context)
    (group,) = engine.generate([[5, 6, 7]], SamplingParams(n=2, max_new_tokens=3))
    assert entered == [False] and len(group) == 2
