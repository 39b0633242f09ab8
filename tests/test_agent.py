"""The agent's LightningModule on the tiny model: a GRPO step per loss type, stored reference log-probs."""

import pytest
import torch

from lightning_genenv.config import compose
from lightning_genenv.epoch_values import Group, collate_groups
from lightning_genenv.models import load_causal_lm
from tests.fakes import agent_module


@pytest.mark.parametrize("loss_type", ["grpo", "bnpo", "dr_grpo", "dapo"])
def test_agent_step_moves_weights_toward_positive_advantage(tiny_dir, agent_batch, loss_type):
    torch.manual_seed(0)
    model, tok = load_causal_lm(tiny_dir)
    cfg = compose(["model=tiny", f"agent.loss_type={loss_type}", "agent.learning_rate=1e-2", "agent.beta=0.01"]).agent
    agent = agent_module(model, tok, cfg)
    assert agent.anchor is not None and not any(p.requires_grad for p in agent.anchor.parameters())
    batch = agent_batch(tok, sampler=agent)
    opt = agent.configure_optimizers()
    agent.log_dict = lambda *a, **k: None
    with torch.no_grad():
        before = agent.logprobs(batch)
    loss = agent.training_step(batch, 0)
    loss.backward()
    opt.step()
    with torch.no_grad():
        after = agent.logprobs(batch)
    mask = batch["completion_mask"]
    delta = ((after - before) * mask).sum(-1)
    assert delta[0] > 0 and delta[3] > 0 and delta[1] < 0  # positive advantage up, negative down


def test_stored_reference_logprobs_replace_the_anchor_forward(tiny_dir, agent_batch):
    """num_iterations > 1: the callback stores the reference log-probs once; the step reuses them."""
    torch.manual_seed(0)
    model, tok = load_causal_lm(tiny_dir)
    agent = agent_module(model, tok, compose(["model=tiny", "agent.beta=0.5"]).agent)
    agent.log_dict = lambda *a, **k: None
    with torch.no_grad():
        for p in model.parameters():  # the policy away from its reference, so the KL is not 0
            p.add_(torch.randn_like(p) * 0.05)
    batch = agent_batch(tok, sampler=agent)
    with torch.no_grad():
        ref = agent.anchor_logprobs(batch, agent.cfg.temperature)
    group = Group(task=None, prompt_ids=[5, 6, 7], completion_ids=[[8, 9, 10], [11, 12]], rewards=[1.0, 0.0],
                  logprobs=[[-1.0] * 3, [-1.0] * 2], truncated=[False] * 2, texts=[""] * 2, advantages=[1.0, -1.0],
                  ref_logprobs=[[0.5, 0.25, 0.125], [1.0, 2.0]])
    assert collate_groups([group], tok.pad_token_id)["ref_logprobs"].tolist() == [[0.5, 0.25, 0.125], [1.0, 2.0, 0.0]]
    calls = []
    anchor_logprobs = agent.anchor_logprobs
    agent.anchor_logprobs = lambda *a, **k: calls.append(1) or anchor_logprobs(*a, **k)
    fresh = agent.training_step(batch, 0)
    stored = agent.training_step({**batch, "ref_logprobs": ref}, 0)
    assert len(calls) == 1 and fresh.item() != 0
    assert stored.item() == pytest.approx(fresh.item(), rel=1e-6)


@pytest.mark.parametrize("offset,weight", [(1.0, 2.0), (0.2, 1.2214)])
def test_an_external_samplers_gap_becomes_a_capped_is_weight_and_the_ratio_starts_at_1(tiny_dir, offset, weight):
    """vLLM's log-probs with a known offset below the trainer's: prepare_groups recomputes the old log-probs
    with the trainer (num_iterations = 1 too), so the PPO ratio is 1 at the first step and the gap is the
    importance weight exp(offset), truncated at the cap (2)."""
    from lightning_genenv.batch_layout import BatchLayout

    torch.manual_seed(0)
    model, tok = load_causal_lm(tiny_dir)
    agent = agent_module(model, tok, compose(["model=tiny", "agent.beta=0.0", "agent.num_generations=4"]).agent,
                        is_cap=2.0)
    completions = [[8, 9, 10], [11, 12], [13], [8, 8, 8]]
    group = Group(task=None, prompt_ids=[5, 6, 7], completion_ids=completions, rewards=[1.0, 0.0, 0.0, 1.0],
                  logprobs=[[0.0] * len(c) for c in completions], truncated=[False] * 4, texts=[""] * 4)
    with torch.no_grad():
        trainer_logp = agent.logprobs(collate_groups([group], tok.pad_token_id), agent.cfg.temperature)
    sampler = [row[:len(c)].add(-offset).tolist() for row, c in zip(trainer_logp, completions)]
    group.logprobs = sampler
    layout = BatchLayout(tasks_per_epoch=1, groups_per_step=1, accumulate_grad_batches=1, num_iterations=1)
    prepared, = agent.prepare_groups([group], layout)
    for old, row, c in zip(prepared.old_logprobs, trainer_logp, completions):
        assert old == pytest.approx(row[:len(c)].tolist(), abs=1e-5)
    logged = {}
    agent.log_dict = lambda d, **k: logged.update(d)
    agent.training_step(collate_groups([prepared], tok.pad_token_id), 0)
    assert float(logged["agent/clip_ratio/region"]) == 0.0  # the ratio is 1: the gap is not policy drift
    assert float(logged["agent/is_weight_mean"]) == pytest.approx(weight, rel=1e-3)
    assert float(logged["agent/is_capped_fraction"]) == (1.0 if weight == 2.0 else 0.0)


def test_a_frozen_agent_prepares_groups_without_forward_passes(tiny_dir):
    """experiment=frozen_agent: the old and reference log-probs are never read, so they are not computed
    (with vLLM's correction on they cost a policy and a reference forward per group every epoch)."""
    from lightning_genenv.batch_layout import BatchLayout

    model, tok = load_causal_lm(tiny_dir)
    cfg = compose(["model=tiny", "agent.beta=0.5", "agent.num_iterations=2", "agent.num_generations=2"]).agent
    group = lambda: Group(task=None, prompt_ids=[5, 6, 7], completion_ids=[[8, 9], [10]], rewards=[1.0, 0.0],  # noqa: E731
                          logprobs=[[-1.0] * 2, [-1.0]], truncated=[False] * 2, texts=[""] * 2)
    layout = BatchLayout(tasks_per_epoch=1, groups_per_step=1, accumulate_grad_batches=1, num_iterations=2)
    frozen, = agent_module(model, tok, cfg, is_cap=2.0, trainable=False).prepare_groups([group()], layout)
    trained, = agent_module(model, tok, cfg, is_cap=2.0, trainable=True).prepare_groups([group()], layout)
    assert frozen.old_logprobs is None and frozen.ref_logprobs is None
    assert frozen.advantages == pytest.approx(trained.advantages)
    assert trained.old_logprobs is not None and trained.ref_logprobs is not None and trained.advantages[0] > 0
