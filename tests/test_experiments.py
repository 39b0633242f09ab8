"""Every experiment preset composes and runs one tiny epoch; the static-augmentation script works."""

import json

import pytest
import yaml

import train
from lightning_genenv import static_augment
from lightning_genenv.config import CONF_DIR, ConfigError, compose
from lightning_genenv.seeds import embedded_seeds
from lightning_genenv.tasks import read_tasks, write_jsonl_atomic
from tests.shrunk import TINY_ARGS

EXPERIMENTS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
# one CPU process, whatever a preset picks
CPU = ["strategy=single", "strategy.accelerator=cpu", "strategy.devices=1", "rollout=hf",
       "trainer.precision=32-true", "model.dtype=float32",
       "agent.max_completion_length=40", "simulator.max_completion_length=48", "simulator.num_variations=2",
       "data.seeds_per_epoch=4", "data.tasks_per_epoch=8", "data.replay_per_epoch=2", "agent.groups_per_step=2",
       "data.num_val=4", "rollout.batch_size=16"]


def test_the_paper_settings_are_presets():
    assert {"genenv", "genenv_random", "genenv_static", "base_grpo", "offline_teacher", "paper_7b"} <= set(EXPERIMENTS)
    cfg = compose(["experiment=paper_7b"])
    assert (cfg.agent.learning_rate, cfg.simulator.learning_rate, cfg.data.tasks_per_epoch) == (1e-6, 5e-7, 64)
    assert (cfg.trainer.max_epochs, cfg.curriculum.alpha, cfg.curriculum.k_min) == (10, 0.5, 0.1)
    assert cfg.model.agent == "Qwen/Qwen2.5-7B-Instruct"
    # the paper's values that are also the schema's defaults (so paper_7b.yaml does not restate them)
    assert (cfg.agent.epsilon, cfg.agent.num_generations, cfg.simulator.lam) == (0.2, 8, 1.0)
    # and the paper's that differ from the schema's defaults (m = 4 variations per seed, 2 seeds per GPU, beta)
    assert (cfg.simulator.num_variations, cfg.data.seeds_per_epoch, cfg.agent.beta) == (4, 16, 0.001)
    assert compose([]).agent.beta == 0.0


def test_offline_teacher_requires_its_tasks():
    with pytest.raises(ConfigError, match="required config key not set: curriculum.static_path"):
        compose(["experiment=offline_teacher"])


@pytest.fixture(scope="module")
def teacher_file(tmp_path_factory):
    train_seeds, _ = embedded_seeds(seed=0, val_fraction=0.15, num_held_out=0)
    path = tmp_path_factory.mktemp("teacher") / "teacher.jsonl"
    tasks = [t for t in train_seeds if t.family in ("weather", "qa_arith")][:12]
    write_jsonl_atomic(path, [{**t.to_dict(), "id": f"teacher-{t.id}", "source": "import"} for t in tasks])
    return path


@pytest.mark.slow
@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_experiment_runs_one_tiny_epoch(experiment, tiny_sft_dir, teacher_file, tmp_path):
    out = tmp_path / "run"
    args = [f"experiment={experiment}", f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}",
            f"run_dir={out}", *TINY_ARGS, *CPU, "trainer.max_epochs=1", "model.gradient_checkpointing=false"]
    if experiment == "offline_teacher":
        args.append(f"curriculum.static_path={teacher_file}")
    train.main(args)
    summary = json.loads((out / "summary.json").read_text())
    cfg = compose(args)
    if cfg.solver.name == "calibrated":  # no agent: the calibrated solver's epoch (tests/test_solver.py)
        assert summary["epochs"] == 1 and len((out / "calibration.jsonl").read_text().splitlines()) == 1
        return
    assert summary["epochs"] == 1 and summary["agent_steps"] == (4 if cfg.curriculum.train_agent else 0)
    # a frozen agent's end is its start: the whole held-out set is not validated again
    assert ("end" in summary["held_out"]) == cfg.curriculum.train_agent
    source = cfg.curriculum.task_source
    assert (out / "final" / "simulator").exists() == (source == "simulator" and cfg.trainer.save_hf)
    if experiment == "genenv_static":
        assert read_tasks(out / "static_tasks.jsonl"), "GenEnv-Static wrote no static task set"
        chosen = json.loads((out / "run_choices.json").read_text())["curriculum"]["static_path"]
        assert chosen == str(out / "static_tasks.jsonl")  # where a resume finds it; config.yaml keeps null
        assert yaml.safe_load((out / "config.yaml").read_text())["curriculum"]["static_path"] is None
    if source == "static":
        env = [json.loads(line) for line in (out / "pools" / "d_env.jsonl").read_text().splitlines()]
        assert env and all(r["source"] == "static" and r["task"] is not None for r in env)


@pytest.mark.slow
def test_static_augment_script(tiny_sft_dir, tmp_path):
    out = tmp_path / "static.jsonl"
    static_augment.main([f"out={out}", "variations=3", f"model.simulator={tiny_sft_dir}",
                         "simulator.reject_near_duplicates=false",
                         "data.families=[weather]", "trainer.enable_progress_bar=false"])
    tasks = read_tasks(out)
    assert tasks and all(t.source == "generated" and t.family == "weather" and t.tools for t in tasks)


def test_static_augment_bad_arguments_are_one_line(tmp_path):
    with pytest.raises(SystemExit, match=r"required config key not set: out \(pass out=...\)"):
        static_augment.main(["variations=3"])
    with pytest.raises(SystemExit, match="variations='x' .*wrong type, expected int"):
        static_augment.main([f"out={tmp_path}/x.jsonl", "variations=x"])
    with pytest.raises(SystemExit, match="variations=0 must be >= 1"):
        static_augment.main([f"out={tmp_path}/x.jsonl", "variations=0"])
