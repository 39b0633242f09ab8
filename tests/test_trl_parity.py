"""Our GRPO loss against TRL's GRPOTrainer, on identical inputs.

TRL's own code path is called: a ``GRPOTrainer`` is built around the tiny model with a tiny
in-memory dataset, and its ``compute_loss(model, inputs)`` gets the same tensors we use.

* ``test_loss_matches_trl``: the per-token log-probs are fixed tensors (TRL's log-prob function is
  replaced by one returning them), so the loss and its gradient with respect to the log-probs
  are compared exactly, for every shared ``loss_type``, with ``beta > 0`` and ratios far enough
  from 1 that both ``epsilon`` and ``epsilon_high`` clip, with and without TRL's
  ``use_bias_correction_kl`` (its default), and under gradient accumulation.
* ``test_agent_step_matches_trl``: end to end on the tiny model: ``AgentModule.training_step``
  (shared-prefix log-probs, reference from the frozen anchor) against TRL's ``compute_loss``
  (its fused LM head, reference log-probs from its ``ref_model``), same loss and same gradients.

Skipped when trl is not installed (``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import copy

import pytest
import torch

trl = pytest.importorskip("trl", reason="trl not installed (pip install -e '.[bench]')")

from lightning_genenv import losses  # noqa: E402
from lightning_genenv.config import compose  # noqa: E402
from lightning_genenv.epoch_values import pad_batch  # noqa: E402
from lightning_genenv.models import load_causal_lm  # noqa: E402
from tests.fakes import agent_module  # noqa: E402

EPS, EPS_HIGH, BETA = 0.2, 0.28, 0.04


def trl_trainer(model, tok, tmp_path, loss_type: str, max_completion_length: int, beta: float = BETA,
                accumulation: int = 1, bias_correction: bool = True):
    """A GRPOTrainer around ``model`` whose ``compute_loss`` we call directly (no generation)."""
    from datasets import Dataset

    args = trl.GRPOConfig(output_dir=str(tmp_path / "trl"), per_device_train_batch_size=4, num_generations=4,
                          gradient_accumulation_steps=accumulation, steps_per_generation=accumulation,
                          beta=beta, epsilon=EPS, epsilon_high=EPS_HIGH, loss_type=loss_type,
                          max_completion_length=max_completion_length, report_to="none", use_cpu=True,
                          save_strategy="no", bf16=False, temperature=1.0,
                          use_bias_correction_kl=bias_correction)
    trainer = trl.GRPOTrainer(model=model, reward_funcs=lambda completions, **_: [0.0] * len(completions),
                              args=args, train_dataset=Dataset.from_dict({"prompt": ["x"] * 4}), processing_class=tok)
    trainer.current_gradient_accumulation_steps = accumulation  # set by Trainer's loop, which we do not run
    trainer.model.train()
    return trainer


def synthetic(rows: int = 8, width: int = 6, seed: int = 0) -> dict:
    """Log-probs whose ratios to the old ones spread over [0.5, 1.6] (both clip sides), ragged masks."""
    g = torch.Generator().manual_seed(seed)
    old = -torch.rand(rows, width, generator=g) * 3 - 0.1
    logp = old + (torch.rand(rows, width, generator=g) - 0.45) * 1.2
    ref = old + torch.randn(rows, width, generator=g) * 0.3
    lengths = torch.randint(1, width + 1, (rows,), generator=g)
    mask = (torch.arange(width)[None] < lengths[:, None]).long()
    adv = torch.randn(rows, generator=g)
    return {"logp": logp, "old": old, "ref": ref, "mask": mask, "adv": adv}


@pytest.mark.parametrize("loss_type", losses.LOSS_TYPES)
@pytest.mark.parametrize("accumulation,bias_correction,is_correction", [(1, True, False), (2, True, False),
                                                                        (1, False, False), (1, True, True)])
def test_loss_matches_trl(tiny_dir, tmp_path, loss_type, accumulation, bias_correction, is_correction):
    """``is_correction``: vLLM's truncated importance weights (TRL's ``importance_sampling_ratio``) on the
    policy term, with the KL added after them."""
    model, tok = load_causal_lm(tiny_dir)
    s = synthetic()
    rows, width = s["logp"].shape
    trainer = trl_trainer(model, tok, tmp_path, loss_type, max_completion_length=width + 2, accumulation=accumulation,
                          bias_correction=bias_correction)

    trl_logp = s["logp"].clone().requires_grad_(True)
    trainer._get_per_token_logps_and_entropies = lambda *a, **k: (trl_logp, torch.zeros_like(trl_logp), None)
    # dapo normalizes by the tokens of the whole optimizer step (all accumulation micro-batches)
    step_tokens = s["mask"].sum() * accumulation + 3
    inputs = {"prompt_ids": torch.ones(rows, 2, dtype=torch.long), "prompt_mask": torch.ones(rows, 2, dtype=torch.long),
              "completion_ids": torch.ones(rows, width, dtype=torch.long), "completion_mask": s["mask"],
              "advantages": s["adv"], "old_per_token_logps": s["old"], "ref_per_token_logps": s["ref"],
              "num_items_in_batch": step_tokens.float()}
    is_weights = None
    if is_correction:  # weights on both sides of the cap (2), as truncated_is_weights makes them
        sampler = s["old"] + torch.linspace(-1.0, 1.0, s["old"].numel()).reshape(s["old"].shape)
        is_weights = losses.truncated_is_weights(s["old"], sampler, cap=2.0)
        assert (is_weights == 2.0).any() and (is_weights < 1.0).any()
        trainer.use_vllm, trainer.vllm_importance_sampling_correction = True, True
        inputs["importance_sampling_ratio"] = is_weights
    trl_loss = trainer.compute_loss(trainer.model, inputs)
    trl_loss.backward()

    ours_logp = s["logp"].clone().requires_grad_(True)
    ours_loss, metrics = losses.grpo_loss(
        ours_logp, s["old"], s["adv"], s["mask"], ref_logp=s["ref"], beta=BETA, epsilon=EPS, epsilon_high=EPS_HIGH,
        loss_type=loss_type, max_completion_length=width + 2, num_items_in_batch=float(step_tokens),
        use_bias_correction_kl=bias_correction, is_weights=is_weights)
    # Lightning divides every micro-batch loss by accumulate_grad_batches; TRL does it inside the loss
    # for grpo/bnpo/dr_grpo and through its dapo normalizer.
    if loss_type != "dapo":
        ours_loss = ours_loss / accumulation
    ours_loss.backward()

    assert metrics["clip_ratio/low"] > 0 and metrics["clip_ratio/high"] > 0, "both clip sides must be exercised"
    torch.testing.assert_close(ours_loss, trl_loss, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(ours_logp.grad, trl_logp.grad, rtol=1e-6, atol=1e-7)
    trl_metrics = trainer._metrics["train"]
    assert float(metrics["kl"]) == pytest.approx(trl_metrics["kl"][-1], rel=1e-5)
    assert float(metrics["clip_ratio/low"]) == pytest.approx(trl_metrics["clip_ratio/low_mean"][-1], rel=1e-5)
    assert float(metrics["clip_ratio/high"]) == pytest.approx(trl_metrics["clip_ratio/high_mean"][-1], rel=1e-5)


@pytest.mark.parametrize("loss_type", losses.LOSS_TYPES)
def test_agent_step_matches_trl(tiny_dir, tmp_path, loss_type):
    """AgentModule's training step and TRL's compute_loss: same loss, same parameter gradients."""
    torch.manual_seed(0)
    ours_model, tok = load_causal_lm(tiny_dir)
    cfg = compose(["model=tiny", f"agent.loss_type={loss_type}", f"agent.beta={BETA}", f"agent.epsilon={EPS}",
                   f"agent.epsilon_high={EPS_HIGH}", "agent.max_completion_length=8",
                   "agent.temperature=1.0"]).agent  # trl_trainer keeps TRL's default temperature
    module = agent_module(ours_model, tok, cfg)  # its anchor (reference) is a copy of the initial weights
    module.log_dict = lambda *a, **k: None
    trl_model = copy.deepcopy(ours_model)
    trainer = trl_trainer(trl_model, tok, tmp_path, loss_type, max_completion_length=8)
    with torch.no_grad():  # move both policies away from the reference, identically, so the KL is not 0
        for p_ours, p_trl in zip(ours_model.parameters(), trl_model.parameters()):
            noise = torch.randn_like(p_ours) * 0.02
            p_ours.add_(noise)
            p_trl.add_(noise)

    groups, n, vocab = 2, 4, ours_model.config.vocab_size
    prompts = [torch.randint(3, vocab, (length,)).tolist() for length in (7, 5)]  # left padding exercised
    completions = [torch.randint(3, vocab, (int(torch.randint(2, 9, ())),)).tolist() for _ in range(groups * n)]
    batch = pad_batch(prompts, completions, tok.pad_token_id)
    rows, width = batch["completion_ids"].shape
    batch["advantages"] = losses.group_advantages(torch.rand(rows), n)
    batch["rewards"] = torch.rand(rows)
    batch["sampling_logprobs"] = torch.zeros(rows, width)
    with torch.no_grad():
        sampled = module.logprobs(batch)
    batch["old_logprobs"] = sampled + (torch.rand(rows, width) - 0.45) * 1.2  # ratios on both sides of the clip
    batch["num_items_in_batch"] = float(batch["completion_mask"].sum())

    ours_loss = module.training_step(batch, 0)
    ours_loss.backward()

    with torch.no_grad():
        ref, _, _ = trainer._get_per_token_logps_and_entropies(
            trainer.ref_model, torch.cat([batch["prompt_ids"].repeat_interleave(n, 0), batch["completion_ids"]], 1),
            torch.cat([batch["prompt_mask"].repeat_interleave(n, 0), batch["completion_mask"].long()], 1), width)
    inputs = {"prompt_ids": batch["prompt_ids"].repeat_interleave(n, 0),
              "prompt_mask": batch["prompt_mask"].repeat_interleave(n, 0),
              "completion_ids": batch["completion_ids"], "completion_mask": batch["completion_mask"].long(),
              "advantages": batch["advantages"], "old_per_token_logps": batch["old_logprobs"],
              "ref_per_token_logps": ref, "num_items_in_batch": torch.tensor(batch["num_items_in_batch"])}
    trl_loss = trainer.compute_loss(trainer.model, inputs)
    trl_loss.backward()

    torch.testing.assert_close(ours_loss, trl_loss, rtol=1e-4, atol=1e-6)
    for (name, p_ours), p_trl in zip(ours_model.named_parameters(), trl_model.parameters()):
        torch.testing.assert_close(p_ours.grad, p_trl.grad, rtol=1e-3, atol=1e-6,
                                   msg=lambda m, name=name: f"{name}: {m}")
