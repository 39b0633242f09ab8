"""bench/trl_grpo.py: TRL's GRPOTrainer trains on our base tasks with our settings.

On the tiny model (the second test, slow): two optimizer steps of TRL's own training loop (generation, our reward, loss,
AdamW), held-out evaluation through our ``AgentModule.validate`` before and after, and the JSON it
writes; its step count is ours, taken from our data module's batches.
"""

from __future__ import annotations

import importlib.util
import json
import zlib
from pathlib import Path

import pytest

pytest.importorskip("trl", reason="trl not installed (pip install -e '.[bench]')")

from lightning_genenv.config import compose  # noqa: E402
from lightning_genenv.data import GenEnvDataModule  # noqa: E402
from lightning_genenv.models import load_causal_lm  # noqa: E402
from lightning_genenv.rollout import encode_chat  # noqa: E402

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "trl_grpo.py"
TINY = ["model=tiny", "trainer.max_epochs=1", "data.tasks_per_epoch=4", "agent.groups_per_step=2",
        "agent.num_generations=2", "agent.max_completion_length=8", "agent.val_num_generations=1", "data.num_val=3"]


FINGERPRINT = "agent.reward_funcs=[lightning_genenv.rewards:task_check,tests.reward_plugins:text_fingerprint]"


def load_script():
    spec = importlib.util.spec_from_file_location("trl_grpo", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def our_optimizer_steps(cfg) -> int:
    """What train.py runs: max_epochs x (our training batches per epoch) / accumulation."""
    dm = GenEnvDataModule(cfg.data, cfg.agent, 0, cfg.trainer.accumulate_grad_batches)
    return cfg.trainer.max_epochs * len(dm.train_dataloader()) // cfg.trainer.accumulate_grad_batches


def test_settings_and_prompts_are_ours(tiny_dir, tmp_path):
    bench = load_script()
    cfg = compose([bench.EXPERIMENT, "model=tiny", "trainer.accumulate_grad_batches=2", "agent.beta=0.04",
                   "agent.epsilon_high=0.28", "agent.loss_type=grpo", "agent.num_iterations=2"])
    args = bench.grpo_config(cfg, tmp_path)
    a = cfg.agent
    assert (args.learning_rate, args.beta, args.epsilon, args.epsilon_high, args.loss_type, args.num_generations,
            args.num_iterations, args.temperature, args.max_completion_length) == (
        a.learning_rate, a.beta, a.epsilon, a.epsilon_high, a.loss_type, a.num_generations, a.num_iterations,
        a.temperature, a.max_completion_length)
    assert args.max_steps == our_optimizer_steps(cfg) == 6 * 2 * 16 // (2 * 2)
    assert args.generation_batch_size == cfg.data.tasks_per_epoch * a.num_generations  # one of our epochs
    assert args.per_device_train_batch_size == a.groups_per_step * a.num_generations
    per_step = bench.grpo_config(cfg, tmp_path, steps_per_generation=1)  # TRL samples before every step
    assert per_step.generation_batch_size == a.groups_per_step * a.num_generations  # one micro-batch
    assert per_step.max_steps == args.max_steps

    _, tok = load_causal_lm(tiny_dir)
    dm = bench.data_module(cfg, tok)
    data = bench.prompt_dataset(dm, tok, a.num_shots)  # raises if TRL would tokenize differently
    assert data["task_id"] == [t.id for t in dm.base]
    task = dm.base[0]
    from lightning_genenv.prompts import agent_messages

    ours = encode_chat(tok, agent_messages(task, dm.family_examples(task, a.num_shots)))
    assert tok(text=data["prompt"][0])["input_ids"] == ours
    reward = bench.reward_function(dm.base, a.subset_match)
    from lightning_genenv.prompts import gold_completion

    assert reward([gold_completion(task), "no"], [task.id, task.id]) == [1.0, 0.0]


@pytest.mark.slow  # about 40 s of CPU: imports, two evaluations, TRL's trainer
def test_trl_trains_and_reports(tmp_path, monkeypatch):
    bench = load_script()
    cfg = compose([bench.EXPERIMENT, *TINY, FINGERPRINT])
    # The random tiny model never earns R_agent, so every advantage would be 0 and nothing would move:
    # for training only, a reward that differs between completions (the held-out scores stay R_agent).
    monkeypatch.setattr(bench, "agent_reward", lambda task, text, subset: (zlib.crc32(text.encode()) % 997 / 997, None))
    result = bench.run(cfg, tmp_path)
    written = json.loads((tmp_path / "trl_grpo.json").read_text())
    assert written == json.loads(json.dumps(result))
    steps = our_optimizer_steps(cfg)
    assert steps == 2
    assert result["optimizer_steps"] == {"expected": steps, "trl": steps}
    history = json.loads((tmp_path / "trl_log_history.json").read_text())
    assert len([h for h in history if "loss" in h]) == steps
    assert history[0]["grad_norm"] > 0 and history[0]["reward_std"] > 0  # TRL's update did something
    assert [p["step"] for p in result["reward_curve"]] == [1]  # one generation batch: our one epoch
    # before training: our own seeded validation of the initial weights, recomputed here; the held-out rewards
    # carry a fingerprint of each sampled text (under 1e-3), so equal means are equal texts
    model, tok = load_causal_lm(cfg.model.agent)
    fresh = bench.evaluator(model, tok, cfg, bench.data_module(cfg, tok), result["eval_backend"])()
    assert result["held_out"]["before"] == fresh
    for when in ("before", "after"):  # pass or fail on each of the 3 held-out tasks, plus the fingerprints
        passed = result["held_out"][when]["val/score"] * 3
        assert 0 < passed - round(passed) < 3e-3
    assert set(result["wall_time_s"]) == {"eval_before", "train", "eval_after", "total"}
    assert result["held_out_tasks"] == 3
    assert result["eval_backend"] == "hf"  # the tiny model's head size is under vLLM's CPU minimum

    fake_ours = {"reward_by_epoch": [0.5], "steps": steps, "held_out": {"val/score": {"before": 0.0, "after": 0.5}},
                 "wall_time_s": 10.0}
    table = bench.markdown(result, fake_ours, 1)
    assert "| 0 | 1–2 |" in table and "ours / TRL" in table
    per_step = {**result, "reward_curve": [{"step": 1, "reward": 0.25}, {"step": 2, "reward": 0.75}]}
    assert "| 0 | 1–2 | 0.500 | 0.500 |" in bench.markdown(per_step, fake_ours, 1)  # the epoch's mean
