"""What both players share (:mod:`lightning_genenv.policy`): the frozen anchor, log-probs, the optimizer,
skipped non-finite steps and their counters in checkpoints. Small cases on a ``torch.nn.Linear``
(no model needed), log-probs on the tiny model."""

from types import SimpleNamespace

import pytest
import torch

from lightning_genenv.config import compose
from lightning_genenv.epoch_values import pad_batch
from lightning_genenv.models import load_causal_lm
from lightning_genenv.policy import NonFiniteError, PolicyModule, is_peft, off_target_rate
from tests.fakes import DEFAULTS, agent_module, simulator_module

LORA = {"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}


@pytest.fixture(scope="module")
def tiny(tiny_dir):
    torch.manual_seed(0)
    return load_causal_lm(tiny_dir)


@pytest.mark.parametrize("off_target, rate", [(0.0, 0.0), (0.025, 1e-4), (0.1, 4e-4), (0.35, 4e-4), (None, 4e-4)])
def test_the_off_target_rate_is_proportional_to_the_distance_from_alpha_up_to_the_scale(off_target, rate):
    """4e-4 * min(1, |p̄ - α| / 0.1), worked by hand; unmeasured (None): the full rate."""
    assert off_target_rate(4e-4, off_target, 0.1) == pytest.approx(rate)


class _Policy(PolicyModule):
    log_prefix = "test"  # the agent and simulator modules name theirs


def _policy(model, tokenizer, **kwargs) -> _Policy:
    """A policy with an anchor and the schema's defaults for what ``kwargs`` leaves out."""
    kwargs = {"learning_rate": 0.1, "weight_decay": DEFAULTS.agent.weight_decay, "needs_anchor": True,
              "cpu_offload": DEFAULTS.strategy.cpu_offload,
              "max_nonfinite_steps": DEFAULTS.trainer.max_nonfinite_steps, **kwargs}
    return _Policy(model, tokenizer, **kwargs)


def _linear_policy(**kwargs) -> _Policy:
    torch.manual_seed(0)
    return _policy(torch.nn.Linear(3, 2), None, **kwargs)


class _Trainer:
    """What ``optimizer_step`` asks of the trainer: a strategy that reduces a decision across ranks."""

    strategy = SimpleNamespace(reduce_boolean_decision=lambda decision, all=True: decision)


def _step(policy: _Policy, grad: float, logged: list) -> torch.Tensor:
    """One ``optimizer_step`` whose closure sets every gradient to ``grad``; returns the new weight."""
    opt = policy.configure_optimizers()
    policy.log = lambda name, value, **kwargs: logged.append((name, value))

    def closure():
        for p in policy.trainable_parameters():
            p.grad = torch.full_like(p, grad)

    policy.optimizer_step(0, 0, opt, closure)
    return policy.model.weight.detach().clone()


def test_is_peft_tells_a_lora_model_from_a_plain_one(tiny_dir):
    plain, _ = load_causal_lm(tiny_dir)
    lora, _ = load_causal_lm(tiny_dir, lora=LORA)
    assert is_peft(lora) and not is_peft(plain) and not is_peft(torch.nn.Linear(2, 2))


def test_the_anchor_is_a_frozen_copy_and_none_without_one():
    policy = _linear_policy()
    assert policy.anchor is not None and policy.anchor is not policy.model and not policy.anchor.training
    assert torch.equal(policy.anchor.weight, policy.model.weight)
    assert policy.anchor.weight.data_ptr() != policy.model.weight.data_ptr()  # a copy, not shared storage
    assert not any(p.requires_grad for p in policy.anchor.parameters()) and policy.model.training
    assert policy.trainable_parameters() == [policy.model.weight, policy.model.bias]
    bare = _linear_policy(needs_anchor=False)
    assert bare.anchor is None and not bare.has_anchor
    assert bare.anchor_logprobs({}) is None  # no forward at all (an empty batch would fail one)


def test_logprobs_are_the_temperature_scaled_log_softmax_of_the_completion_tokens(tiny):
    model, tok = tiny
    policy = _policy(model, tok, learning_rate=1e-3)
    prompt, completion = [5, 6, 7], [8, 9, 10]
    batch = pad_batch([prompt], [completion], tok.pad_token_id)
    with torch.no_grad():  # the reference by hand: one forward of prompt + completion
        logits = model(torch.tensor([prompt + completion])).logits[0]
        for temperature in (1.0, 0.7):
            want = [torch.log_softmax(logits[len(prompt) - 1 + i] / temperature, -1)[t].item()
                    for i, t in enumerate(completion)]
            assert policy.logprobs(batch, temperature)[0].tolist() == pytest.approx(want, abs=1e-5)
            assert policy.anchor_logprobs(batch, temperature)[0].tolist() == pytest.approx(want, abs=1e-5)
        for p in model.parameters():
            p.add_(0.01)  # the policy moves; its anchor stays where it was built
        assert policy.logprobs(batch)[0].tolist() != pytest.approx(policy.anchor_logprobs(batch)[0].tolist())
        assert policy.anchor_logprobs(batch)[0].tolist() == pytest.approx(
            [torch.log_softmax(logits[len(prompt) - 1 + i], -1)[t].item() for i, t in enumerate(completion)],
            abs=1e-5)


def test_the_optimizer_is_adamw_over_trainable_parameters_built_once():
    policy = _policy(torch.nn.Linear(3, 2), None, learning_rate=0.25, weight_decay=0.5)
    policy.model.bias.requires_grad_(False)
    opt = policy.configure_optimizers()
    assert isinstance(opt, torch.optim.AdamW) and policy.configure_optimizers() is opt
    (group,) = opt.param_groups
    assert group["lr"] == 0.25 and group["weight_decay"] == 0.5 and group["params"] == [policy.model.weight]


def test_a_finite_step_applies_and_resets_the_streak():
    policy = _linear_policy()
    policy.trainer = _Trainer()
    policy.nonfinite_streak = 2
    before = policy.model.weight.detach().clone()
    logged = []
    after = _step(policy, 1.0, logged)
    # AdamW's first step moves every weight by lr (sign of the gradient) after lr * wd decay (wd 0 here)
    assert torch.allclose(after, before - 0.1, atol=1e-6)
    assert policy.nonfinite_streak == 0 and policy.nonfinite_steps == 0 and logged == []


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_nonfinite_gradients_skip_the_step_count_and_stop_after_the_limit(bad):
    policy = _linear_policy(max_nonfinite_steps=3)
    policy.trainer = _Trainer()
    before = policy.model.weight.detach().clone()
    logged = []
    assert torch.equal(_step(policy, bad, logged), before)  # skipped: the weights are unchanged
    assert all(p.grad is None or not p.grad.any() for p in policy.trainable_parameters())  # zeroed
    assert (policy.nonfinite_steps, policy.nonfinite_streak) == (1, 1)
    assert logged == [("test/nonfinite_steps", 1.0)]
    _step(policy, 1.0, logged)  # a good step resets the streak, not the total
    assert (policy.nonfinite_steps, policy.nonfinite_streak) == (1, 0)
    _step(policy, bad, logged)
    _step(policy, bad, logged)
    with pytest.raises(NonFiniteError, match="^3 test steps in a row .*max_nonfinite_steps=3"):
        _step(policy, bad, logged)
    assert (policy.nonfinite_steps, policy.nonfinite_streak) == (4, 3)


def test_nonfinite_counters_round_trip_through_a_checkpoint():
    policy = _linear_policy()
    policy.nonfinite_steps, policy.nonfinite_streak = 5, 2
    checkpoint = {}
    policy.on_save_checkpoint(checkpoint)
    assert checkpoint == {"nonfinite": {"steps": 5, "streak": 2}}
    fresh = _linear_policy()
    fresh.on_load_checkpoint(checkpoint)
    assert (fresh.nonfinite_steps, fresh.nonfinite_streak) == (5, 2)
    policy.on_load_checkpoint({})  # a checkpoint from before the counters existed
    assert (policy.nonfinite_steps, policy.nonfinite_streak) == (0, 0)


def test_configure_model_does_nothing_without_a_device_mesh():
    policy = _linear_policy()
    policy.configure_model()
    assert not policy.sharded and type(policy.model) is torch.nn.Linear


def test_lora_anchor_is_the_base_model(tiny_dir, agent_batch):
    lora = {"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}
    model, tok = load_causal_lm(tiny_dir, lora=lora)
    sim = simulator_module(model, tok, compose(["model=tiny"]).simulator)
    assert sim.anchor is None  # no second copy with LoRA
    batch = agent_batch(tok)
    with torch.no_grad():
        for p in model.parameters():
            if p.requires_grad:
                p.add_(0.5)  # move the adapters away from zero
        base = model.get_base_model()
        with model.disable_adapter():
            from lightning_genenv.losses import sequence_logprobs
            ref = sequence_logprobs(base, batch)
        assert torch.allclose(sim.anchor_logprobs(batch), ref)
        assert not torch.allclose(sim.logprobs(batch), ref)


def test_nonfinite_steps_are_skipped_then_stop_the_run(tiny_dir, agent_batch):
    import lightning as L

    from lightning_genenv.policy import NonFiniteError

    torch.manual_seed(0)
    model, tok = load_causal_lm(tiny_dir)
    agent = agent_module(model, tok, compose(["model=tiny", "agent.beta=0.0"]).agent, max_nonfinite_steps=2)
    good, bad = agent_batch(tok, sampler=agent), agent_batch(tok, sampler=agent)
    bad["advantages"] = torch.tensor([float("nan"), 1.0, -1.0, 0.0])
    trainer = L.Trainer(max_epochs=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        accelerator="cpu", enable_model_summary=False)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    trainer.fit(agent, train_dataloaders=torch.utils.data.DataLoader([bad, good, bad], batch_size=None))
    assert agent.nonfinite_steps == 2 and agent.nonfinite_streak == 1  # the good step reset the streak
    assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())  # the good step applied
    assert all(torch.isfinite(v).all() for v in model.state_dict().values())
    trainer = L.Trainer(max_epochs=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        accelerator="cpu", enable_model_summary=False)
    agent.nonfinite_streak = 0
    with pytest.raises(NonFiniteError, match="2 agent steps in a row"):
        trainer.fit(agent, train_dataloaders=torch.utils.data.DataLoader([bad, bad, good], batch_size=None))

