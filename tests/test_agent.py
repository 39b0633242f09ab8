"""The HF rollout engine and both LightningModules on the tiny model."""

import pytest
import torch

from lightning_genenv.agent import AgentModule
from lightning_genenv.config import compose
from lightning_genenv.data import Group, SimRecord, collate_generations, collate_groups
from lightning_genenv.models import load_causal_lm
from lightning_genenv.rollout import HFEngine, SamplingParams
from lightning_genenv.simulator import SimulatorModule


@pytest.fixture(scope="module")
def tiny(tiny_dir):
    torch.manual_seed(0)
    return load_causal_lm(tiny_dir)


def test_engine_groups_logprobs_and_truncation(tiny):
    model, tok = tiny
    engine = HFEngine(model, tok, batch_size=2)
    texts = ("hello world", "a", "the weather in paris")
    prompts = [tok(text, add_special_tokens=False)["input_ids"] for text in texts]
    groups = engine.generate(prompts, SamplingParams(n=3, max_new_tokens=6, temperature=0.9))
    assert [len(g) for g in groups] == [3, 3, 3]
    for prompt, group in zip(prompts, groups):
        for s in group:
            assert s.prompt_ids == prompt and len(s.logprobs) == len(s.completion_ids) <= 6
            assert s.truncated == (len(s.completion_ids) == 6 and s.completion_ids[-1] not in engine.eos_ids)
    # sampling log-probs equal the trainer's log-probs of the same tokens at the same temperature
    s = groups[2][0]
    batch = collate_groups([Group(task=None, prompt_ids=s.prompt_ids, completion_ids=[s.completion_ids],
                                  rewards=[0.0], logprobs=[s.logprobs], truncated=[s.truncated], texts=[s.text],
                                  advantages=[0.0])], tok.pad_token_id)
    from lightning_genenv.losses import sequence_logprobs
    with torch.no_grad():
        lp = sequence_logprobs(model, batch, 0.9)
    assert lp[0, :len(s.logprobs)].tolist() == pytest.approx(s.logprobs, abs=1e-4)


def test_engine_greedy_is_deterministic_and_batch_independent(tiny):
    model, tok = tiny
    prompts = [tok(text, add_special_tokens=False)["input_ids"] for text in ("one two", "three four five six")]
    p = SamplingParams(n=1, greedy=True, max_new_tokens=5)
    together = HFEngine(model, tok, batch_size=2).generate(prompts, p)
    alone = HFEngine(model, tok, batch_size=1).generate(prompts, p)
    assert [g[0].completion_ids for g in together] == [g[0].completion_ids for g in alone]


def _agent_batch(tok, n=4, sampler=None):
    """One group of ``n`` completions; with ``sampler``, its log-probs are that policy's own, as an
    engine returns them (they are the old policy of the PPO ratio)."""
    g = Group(task=None, prompt_ids=[5, 6, 7], completion_ids=[[8, 9, 10], [11, 12], [13], [8, 8, 8]][:n],
              rewards=[1.0, 0.0, 0.0, 1.0][:n], logprobs=[[-1.0] * 3, [-1.0] * 2, [-1.0], [-1.0] * 3][:n],
              truncated=[False] * n, texts=[""] * n, advantages=[1.0, -1.0, -1.0, 1.0][:n], num_items_in_batch=9.0)
    batch = collate_groups([g], tok.pad_token_id)
    if sampler is not None:
        with torch.no_grad():
            batch["sampling_logprobs"] = sampler.logprobs(batch, sampler.cfg.temperature)
    return batch


@pytest.mark.parametrize("loss_type", ["grpo", "bnpo", "dr_grpo", "dapo"])
def test_agent_step_moves_weights_toward_positive_advantage(tiny_dir, loss_type):
    torch.manual_seed(0)
    model, tok = load_causal_lm(tiny_dir)
    cfg = compose(["model=tiny", f"agent.loss_type={loss_type}", "agent.learning_rate=1e-2", "agent.beta=0.01"]).agent
    agent = AgentModule(model, tok, cfg)
    assert agent.anchor is not None and not any(p.requires_grad for p in agent.anchor.parameters())
    batch = _agent_batch(tok, sampler=agent)
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


def test_stored_reference_logprobs_replace_the_anchor_forward(tiny_dir):
    """num_iterations > 1: the callback stores the reference log-probs once; the step reuses them."""
    torch.manual_seed(0)
    model, tok = load_causal_lm(tiny_dir)
    agent = AgentModule(model, tok, compose(["model=tiny", "agent.beta=0.5"]).agent)
    agent.log_dict = lambda *a, **k: None
    with torch.no_grad():
        for p in model.parameters():  # the policy away from its reference, so the KL is not 0
            p.add_(torch.randn_like(p) * 0.05)
    batch = _agent_batch(tok, sampler=agent)
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


def test_lora_anchor_is_the_base_model(tiny_dir):
    lora = {"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}
    model, tok = load_causal_lm(tiny_dir, lora=lora)
    sim = SimulatorModule(model, tok, compose(["model=tiny"]).simulator)
    assert sim.anchor is None  # no second copy with LoRA
    batch = _agent_batch(tok)
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


def test_simulator_kl_cap_skips_the_rest_of_the_epoch(tiny_dir):
    torch.manual_seed(0)
    model, tok = load_causal_lm(tiny_dir)
    cfg = compose(["model=tiny", "simulator.kl_max=0.01", "simulator.learning_rate=0.05"]).simulator
    sim = SimulatorModule(model, tok, cfg)
    sim.log_dict = lambda *a, **k: None
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


def test_nonfinite_steps_are_skipped_then_stop_the_run(tiny_dir):
    import lightning as L

    from lightning_genenv.policy import NonFiniteError

    torch.manual_seed(0)
    model, tok = load_causal_lm(tiny_dir)
    agent = AgentModule(model, tok, compose(["model=tiny", "agent.beta=0.0"]).agent, max_nonfinite_steps=2)
    good, bad = _agent_batch(tok, sampler=agent), _agent_batch(tok, sampler=agent)
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
