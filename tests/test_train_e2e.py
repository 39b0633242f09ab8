"""The real entry point, end to end, on a shrunk config with the tiny models.

Runs ``train.main`` for 2 co-evolution epochs and checks what a user gets: both players trained,
pools written, TensorBoard curves, a checkpoint, Hugging Face exports that reload, and a saved
config that composes back.
"""

import json
from pathlib import Path

import pytest
import torch
import yaml
from omegaconf import OmegaConf
from safetensors.torch import load_file
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from transformers import AutoModelForCausalLM

import train
from lightning_genenv.config import Config
from tests.shrunk import TINY_ARGS

# The built-in check plus a tie-breaking noise under 1e-3 (tests/reward_plugins.py): every group has a nonzero
# advantage whichever tasks are drawn, so the checks that the agent moved never depend on the draw (which base
# tasks an epoch draws changed once already and left a tiny run without any gradient).
NO_TIES = "agent.reward_funcs=[lightning_genenv.rewards:task_check,tests.reward_plugins:tie_breaker]"


@pytest.fixture(scope="module")
def run_dir(tiny_sft_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "run"
    # 6 held-out tasks, of which a fixed subset of 2 (one per family) is validated after epoch 0
    args = [f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}", f"run_dir={out}", *TINY_ARGS, NO_TIES,
            "data.num_val=6", "data.num_val_subset=2"]
    assert train.main(args) == out
    return out


def _scalars(path: Path) -> dict:
    acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "histograms": 0, "tensors": 0})
    acc.Reload()
    return acc


@pytest.mark.slow
def test_both_players_changed(run_dir, tiny_sft_dir):
    start = load_file(Path(tiny_sft_dir) / "model.safetensors")
    for player in ("agent", "simulator"):
        final = load_file(run_dir / "final" / player / "model.safetensors")
        changed = [k for k in start if not torch.equal(start[k], final[k])]
        assert len(changed) > len(start) // 2, f"{player}: only {len(changed)} tensors changed"


@pytest.mark.slow
def test_pools_written_and_consistent(run_dir):
    d_env = [json.loads(line) for line in (run_dir / "pools" / "d_env.jsonl").read_text().splitlines()]
    d_train = [json.loads(line) for line in (run_dir / "pools" / "d_train.jsonl").read_text().splitlines()]
    assert len(d_env) == 2 * 4 * 2  # epochs x seeds x variations: every generation is kept
    assert {r["epoch"] for r in d_env} == {0, 1}
    valid = [r for r in d_env if r["task"] is not None]
    assert valid, "the format-trained simulator wrote no valid task"
    assert all(r["reason"] is None for r in valid) and all(r["reason"] for r in d_env if r["task"] is None)
    for r in valid:
        assert 0.0 <= r["p_hat"] <= 1.0 and 0.0 < r["r_env"] <= 1.0
    trained = [r for r in d_env if r["trained_on"]]
    generated = [r for r in d_train if r["source"] == "generated"]
    assert len(generated) == len(trained) > 0
    k_min = yaml.safe_load((run_dir / "config.yaml").read_text())["curriculum"]["k_min"]
    assert all(r["p_hat"] >= k_min for r in generated)
    assert all(r["attempted"] == (r["p_hat"] is not None) for r in d_env)


@pytest.mark.slow
def test_tensorboard_has_every_curve(run_dir):
    agent = _scalars(run_dir / "tb" / "agent")
    tags = set(agent.Tags()["scalars"])
    trl_names = ["agent/reward", "agent/reward_std", "agent/frac_reward_zero_std", "agent/entropy",
                 "agent/completions/min_length", "agent/completions/mean_length", "agent/completions/max_length",
                 "agent/completions/clipped_ratio", "agent/kl", "agent/clip_ratio/low", "agent/clip_ratio/high",
                 "agent/clip_ratio/region", "agent/learning_rate", "agent/grad_norm"]
    for key in ["agent/loss", *trl_names,
                "rollout/reward/generated", "rollout/response_length", "rollout/frac_reward_zero_std",
                "curriculum/p_hat_mean", "curriculum/attempted_tasks",
                "curriculum/in_band_fraction", "curriculum/r_env_mean", "sim/valid_rate",
                "time/generate_tasks", "time/agent_rollouts", "time/agent_update", "time/simulator_update",
                "rollout/tokens_per_second/agent", "rollout/tokens_per_second/simulator", "train/tokens_per_second",
                "time/validation", "val/score", "val/reward_mean", "val/score/weather", "val/reward_mean/qa_arith",
                "sim/kl_to_initial"]:
        assert key in tags, key
    assert any(t.startswith("sim/invalid/") for t in tags) or agent.Scalars("sim/valid_rate")[-1].value == 1.0
    # before the first update (step 0), then after each of the 2 epochs
    for key in ("val/score", "val/reward_mean"):
        steps = [e.step for e in agent.Scalars(key)]
        assert len(steps) == 3 and steps[0] == 0 < steps[1] < steps[2], (key, steps)
    assert "curriculum/p_hat" in agent.Tags()["histograms"]
    assert {"samples/simulator/text_summary", "samples/agent/text_summary"} <= set(agent.Tags()["tensors"])
    sim = _scalars(run_dir / "tb" / "simulator")
    assert {"sim/loss", "sim/kl", "sim/nll"} <= set(sim.Tags()["scalars"])
    _check_curve_values(run_dir, agent, sim)


def _check_curve_values(run_dir: Path, agent, sim) -> None:
    """The curves' values, not only their names: every value finite; one training point per optimizer step;
    times, throughputs and the gradient norm positive; the learning rate the configured one; fractions in
    [0, 1]; the per-epoch task counts and the valid rate those of the pool files."""
    import math

    summary = json.loads((run_dir / "summary.json").read_text())
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    for acc in (agent, sim):
        for tag in acc.Tags()["scalars"]:
            values = [e.value for e in acc.Scalars(tag)]
            assert values and all(math.isfinite(v) for v in values), tag
    values = {tag: [e.value for e in agent.Scalars(tag)] for tag in agent.Tags()["scalars"]}
    for tag in ("agent/loss", "agent/grad_norm", "agent/learning_rate", "agent/reward"):
        assert len(values[tag]) == summary["agent_steps"] > 0, tag
    for tag in ("time/generate_tasks", "time/agent_rollouts", "time/agent_update", "time/simulator_update",
                "time/validation", "rollout/tokens_per_second/agent", "rollout/tokens_per_second/simulator",
                "train/tokens_per_second", "agent/grad_norm"):
        assert all(v > 0 for v in values[tag]), tag
    assert values["agent/learning_rate"][0] == pytest.approx(config["agent"]["learning_rate"])
    for tag in ("agent/frac_reward_zero_std", "agent/clip_ratio/region", "agent/completions/clipped_ratio",
                "curriculum/in_band_fraction", "sim/valid_rate", "val/score", "val/reward_mean"):
        assert all(0.0 <= v <= 1.0 for v in values[tag]), tag
    d_env = [json.loads(line) for line in (run_dir / "pools" / "d_env.jsonl").read_text().splitlines()]
    epochs = sorted({r["epoch"] for r in d_env})
    assert values["curriculum/attempted_tasks"] == [sum(r["attempted"] for r in d_env if r["epoch"] == e)
                                                    for e in epochs]
    assert values["sim/valid_rate"] == pytest.approx(
        [sum(r["task"] is not None for r in d_env if r["epoch"] == e) / sum(r["epoch"] == e for r in d_env)
         for e in epochs])


@pytest.mark.slow
def test_run_directory_reloads(run_dir, tiny_sft_dir):
    cfg = OmegaConf.merge(OmegaConf.structured(Config), OmegaConf.create((run_dir / "config.yaml").read_text()))
    assert cfg.run_dir == str(run_dir) and cfg.trainer.max_epochs == 2
    ckpt = torch.load(run_dir / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=True)
    # written at the end of the last epoch (index 1), after the simulator's update
    assert ckpt["epoch"] == 1 and len(ckpt["callbacks"]["CoEvolutionCallback"]["pools"]["d_env"]) == 2 * 4 * 2
    sim_epochs = ckpt["callbacks"]["CoEvolutionCallback"]["sim_epochs"]
    sim = torch.load(run_dir / "checkpoints" / f"simulator-{sim_epochs}.ckpt", map_location="cpu", weights_only=True)
    assert sim["optimizer_states"] and sim["global_step"] > 0
    for player in ("agent", "simulator"):  # each export reloads with exactly the weights it saved
        state = AutoModelForCausalLM.from_pretrained(run_dir / "final" / player).state_dict()
        saved = load_file(run_dir / "final" / player / "model.safetensors")
        assert saved and all(torch.equal(state[k], v) for k, v in saved.items())
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["epochs"] == 2 and summary["simulator_epochs"] >= 1
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["model"]["agent"] == tiny_sft_dir


@pytest.mark.slow
def test_random_curriculum_with_num_iterations(tmp_path, tiny_sft_dir):
    """GenEnv-Random (simulator never trained) and num_iterations=2 (old log-probs stored once). The
    tie-breaking reward (NO_TIES) gives every group an advantage, so the agent's change does not depend on
    which tasks are drawn (the tiny model often scores alike on every attempt: no advantage, no update)."""
    out = tmp_path / "run"
    args = [f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}", f"run_dir={out}", "curriculum=random",
            "agent.num_iterations=2", "agent.loss_type=grpo", "agent.mask_truncated_completions=true",
            "trainer.accumulate_grad_batches=2", *TINY_ARGS, NO_TIES]
    args = [a for a in args if not a.startswith("trainer.max_epochs")] + ["trainer.max_epochs=1"]
    train.main(args)
    start = load_file(Path(tiny_sft_dir) / "model.safetensors")
    sim = load_file(out / "final" / "simulator" / "model.safetensors")
    assert all(torch.equal(start[k], sim[k]) for k in start), "the GenEnv-Random simulator must not change"
    agent = load_file(out / "final" / "agent" / "model.safetensors")
    assert any(not torch.equal(start[k], agent[k]) for k in start)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["simulator_epochs"] == 0
    assert summary["agent_steps"] == 8 * 2 // (2 * 2)  # groups x iterations / (groups per step x accumulation)
    assert not (out / "tb" / "simulator").exists()


@pytest.mark.slow
@pytest.mark.parametrize("fraction", [0.0, 0.5])
def test_generated_fraction_sets_the_batch_mix(tmp_path, tiny_sft_dir, fraction):
    """data.generated_fraction caps the generated (and replayed) share of the agent's batch; base
    tasks fill the rest; every valid generated task is still attempted (its p̂ trains the simulator)."""
    out = tmp_path / "run"
    args = [f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}", f"run_dir={out}", *TINY_ARGS,
            f"data.generated_fraction={fraction}", "trainer.save_hf=false", "trainer.val_before_training=false"]
    train.main(args)
    agent = _scalars(out / "tb" / "agent")
    per_epoch = {k: [e.value for e in agent.Scalars(f"rollout/num_tasks/{k}")] for k in ("generated", "replay", "base")}
    attempted = [e.value for e in agent.Scalars("curriculum/attempted_tasks")]
    share = round(fraction * 8)
    for gen, rep, base, att in zip(per_epoch["generated"], per_epoch["replay"], per_epoch["base"], attempted):
        assert gen + rep <= share and gen + rep + base == 8 and gen <= att
    if fraction == 0.0:
        assert per_epoch["base"] == [8.0, 8.0] and sum(attempted) > 0
    else:
        assert sum(per_epoch["generated"]) > 0, "the format-trained simulator's tasks never reached the batch"
    assert "val/score" in agent.Tags()["scalars"]
    assert all(e.step > 0 for e in agent.Scalars("val/score")), "val_before_training=false must skip step 0"


@pytest.mark.slow
def test_a_frozen_agent_never_changes_while_the_simulator_learns(tiny_sft_dir, tmp_path):
    """experiment=frozen_agent: the agent's weights stay the initial ones, the simulator's move, and the
    curriculum is still measured every epoch (how the simulator is tested on its own)."""
    out = tmp_path / "frozen"
    args = [f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}", f"run_dir={out}", *TINY_ARGS,
            "experiment=frozen_agent", "trainer.max_epochs=2", "trainer.save_hf=true"]
    assert train.main(args) == out
    start = load_file(Path(tiny_sft_dir) / "model.safetensors")
    agent = load_file(out / "final" / "agent" / "model.safetensors")
    simulator = load_file(out / "final" / "simulator" / "model.safetensors")
    assert all(torch.equal(start[k], agent[k]) for k in start)
    assert any(not torch.equal(start[k], simulator[k]) for k in start)
    acc = _scalars(out / "tb" / "agent")
    tags = acc.Tags()["scalars"]
    assert not [t for t in tags if t.startswith("agent/")]  # no GRPO step was taken
    # the agent's step never moves, so the curves are per epoch
    for tag in ("curriculum/attempted_tasks", "sim/near_duplicate_rate", "sim/copy_of_seed_rate", "sim/valid_rate"):
        assert [e.step for e in acc.Scalars(tag)] == [0, 1], tag


@pytest.mark.slow
def test_every_validation_writes_its_per_task_scores(run_dir):
    """validation/step0.jsonl and one file per epoch: a record per task validated, its greedy score and completion,
    its sampled rewards and whether it is in the per-epoch subset. Step 0 and the last epoch take the whole set (6
    tasks: val_full/*, and val/* on its subset), epoch 0 the subset alone (2 tasks, one per family: val/*); the
    logged curves are the records' means, and summary.json's held_out start and end are the whole set's."""
    files = sorted(p.name for p in (run_dir / "validation").iterdir())
    assert files == ["epoch-0.jsonl", "epoch-1.jsonl", "step0.jsonl"]
    agent = _scalars(run_dir / "tb" / "agent")
    steps = [e.step for e in agent.Scalars("val/score")]
    assert [e.step for e in agent.Scalars("val_full/score")] == [steps[0], steps[-1]]
    summary = json.loads((run_dir / "summary.json").read_text())["held_out"]
    assert summary["tasks"] == 6 and summary["subset_tasks"] == 2
    subset = None
    for name, step, count in (("step0.jsonl", steps[0], 6), ("epoch-0.jsonl", steps[1], 2),
                              ("epoch-1.jsonl", steps[-1], 6)):
        records = [json.loads(line) for line in (run_dir / "validation" / name).read_text().splitlines()]
        assert len(records) == count and len({r["task"] for r in records}) == count
        # pass (1) or fail (0), plus the tie-breaking reward's noise under 1e-3 (NO_TIES above)
        assert all(round(r["score"]) in (0, 1) and abs(r["score"] - round(r["score"])) < 1e-3
                   and isinstance(r["completion"], str) for r in records)
        inside = [r for r in records if r["in_subset"]]
        assert len(inside) == 2 and {r["family"] for r in inside} == {"weather", "qa_arith"}
        assert subset is None or {r["task"] for r in inside} == subset  # the same subset every time
        subset = {r["task"] for r in inside}
        for prefix, recs in (("val", inside), ("val_full", records if count == 6 else None)):
            if recs is None:
                continue
            greedy = [e.value for e in agent.Scalars(f"{prefix}/score") if e.step == step][-1]
            assert sum(r["score"] for r in recs) / len(recs) == pytest.approx(greedy, abs=1e-6)
            sampled = [x for r in recs for x in r["sampled_rewards"]]
            assert len(sampled) == len(recs) * 8  # agent.val_num_generations
            reward_mean = [e.value for e in agent.Scalars(f"{prefix}/reward_mean") if e.step == step][-1]
            assert sum(sampled) / len(sampled) == pytest.approx(reward_mean, abs=1e-6)
            if prefix == "val_full":
                end = summary["start" if name == "step0.jsonl" else "end"]
                assert end["reward_mean"] == pytest.approx(reward_mean, abs=1e-6)


@pytest.mark.slow
def test_how_often_a_run_validates_does_not_change_what_it_trains(run_dir, tiny_sft_dir, tmp_path):
    """Validation samples from a seeded stream of its own (rollout=hf here: torch's global generator, which the
    training rollouts and the simulator's writing draw from): the fixture's run validates at step 0, after
    epoch 0 and at the end; the same run validating at the end only trains exactly the same way: the same
    pools, the same per-step training curves and the same final weights, and the same end validation."""
    out = tmp_path / "end-only"
    args = [f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}", f"run_dir={out}", *TINY_ARGS, NO_TIES,
            "data.num_val=6", "data.num_val_subset=2", "trainer.val_every_n_epochs=1000",
            "trainer.val_before_training=false"]
    assert train.main(args) == out
    assert sorted(p.name for p in (out / "validation").iterdir()) == ["end.jsonl"]
    for pool in ("d_env.jsonl", "d_train.jsonl"):
        assert (out / "pools" / pool).read_text() == (run_dir / "pools" / pool).read_text(), pool
    for player in ("agent", "simulator"):
        final, reference = (load_file(d / "final" / player / "model.safetensors") for d in (out, run_dir))
        assert all(torch.equal(final[k], reference[k]) for k in reference), player
    ours, theirs = _scalars(out / "tb" / "agent"), _scalars(run_dir / "tb" / "agent")
    for tag in ("agent/loss", "agent/reward", "agent/grad_norm", "rollout/reward"):
        assert [(e.step, e.value) for e in ours.Scalars(tag)] == [(e.step, e.value) for e in theirs.Scalars(tag)], tag
    end = [json.loads(line) for line in (run_dir / "validation" / "epoch-1.jsonl").read_text().splitlines()]
    assert [json.loads(line) for line in (out / "validation" / "end.jsonl").read_text().splitlines()] == end
