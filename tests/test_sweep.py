"""Multi-run (``train.py -m``: the product of swept values, one run directory each under one sweep directory,
``report`` on the sweep directory) and user presets (``--config-dir``)."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import train
from lightning_genenv.config import ConfigError, compose, parse_cli
from lightning_genenv.report.cli import _positional, expand_sweeps
from lightning_genenv.sweep import expand, plan, split_values

ROOT = Path(__file__).resolve().parent.parent


def test_values_split_on_top_level_commas_only():
    assert split_values("0,1,2") == ["0", "1", "2"]
    assert split_values("[a,b],[c]") == ["[a,b]", "[c]"] and split_values("[a,b]") == ["[a,b]"]


def test_the_product_varies_the_first_key_slowest_and_keeps_the_rest():
    runs = expand(["seed=0,1", "experiment=genenv,base_grpo", "data.families=[weather,qa_arith]", "--config-dir=x"])
    assert runs == [["seed=0", "experiment=genenv", "data.families=[weather,qa_arith]", "--config-dir=x"],
                    ["seed=0", "experiment=base_grpo", "data.families=[weather,qa_arith]", "--config-dir=x"],
                    ["seed=1", "experiment=genenv", "data.families=[weather,qa_arith]", "--config-dir=x"],
                    ["seed=1", "experiment=base_grpo", "data.families=[weather,qa_arith]", "--config-dir=x"]]


def test_a_sweep_runs_each_combination_in_its_own_directory(tmp_path):
    from lightning_genenv import sweep as sweep_module

    launched = []
    sweep = tmp_path / "sweep"
    out = sweep_module.multirun(["seed=0,1", "experiment=genenv,base_grpo", "model=tiny", f"sweep_dir={sweep}"],
                                launch=lambda argv: launched.append(argv) or 0)
    assert out == sweep
    names = ["0-seed=0,experiment=genenv", "1-seed=0,experiment=base_grpo", "2-seed=1,experiment=genenv",
             "3-seed=1,experiment=base_grpo"]
    assert [a[-1] for a in launched] == [f"run_dir={sweep / n}" for n in names]
    listing = yaml.safe_load((sweep / "multirun.yaml").read_text())["runs"]
    assert [r["run_dir"] for r in listing] == [str(sweep / n) for n in names]
    assert listing[3]["command"].startswith("python train.py seed=1 experiment=base_grpo model=tiny")
    for argv in launched:  # each composes to its own run directory, seed and experiment
        cfg = compose(argv)
        assert cfg.run_dir == argv[-1].split("=", 1)[1] and str(cfg.seed) == argv[0][-1]
        assert cfg.curriculum.task_source == ("none" if "base_grpo" in argv[1] else "simulator")


def test_a_failed_run_stops_the_sweep(tmp_path):
    from lightning_genenv import sweep as sweep_module

    launched = []
    with pytest.raises(ConfigError, match="run 0 .* failed with exit status 3"):
        sweep_module.multirun(["seed=0,1", f"sweep_dir={tmp_path}"], launch=lambda argv: launched.append(argv) or 3)
    assert len(launched) == 1


def test_every_combination_is_checked_before_any_run(tmp_path):
    with pytest.raises(ConfigError, match=r"run 1 \(agent.beta=high\): agent.beta='high'"):
        plan(["agent.beta=0.1,high", f"sweep_dir={tmp_path}"])
    with pytest.raises(ConfigError, match="set sweep_dir= instead"):
        plan(["seed=0,1", "run_dir=x"])
    assert not any(tmp_path.iterdir())


def test_train_m_goes_through_the_sweep_and_errors_are_one_line(tmp_path, monkeypatch):
    from lightning_genenv import sweep as sweep_module

    launched = []
    monkeypatch.setattr(sweep_module, "launch_process", lambda argv: launched.append(argv) or 0)
    assert train.main(["-m", "seed=0,1", f"sweep_dir={tmp_path}"]) == tmp_path and len(launched) == 2
    assert train.main(["--multirun", "seed=4", f"sweep_dir={tmp_path / 'one'}"]) == tmp_path / "one"
    assert launched[-1] == ["seed=4", f"sweep_dir={tmp_path / 'one'}", f"run_dir={tmp_path / 'one' / '0'}"]
    with pytest.raises(SystemExit) as e:
        train.main(["-m", "seed=0,1", "agent.bta=0.1", f"sweep_dir={tmp_path}"])
    assert str(e.value) == ("error: run 0 (seed=0): unknown config key 'agent.bta' (from the command line); "
                            "did you mean 'agent.beta'?")


@pytest.mark.slow
def test_a_sweep_of_two_seeds_and_two_experiments_trains_and_reports(tiny_dir, tmp_path):
    from tests.shrunk import TINY_ARGS

    sweep = tmp_path / "sweep"
    args = [a for a in TINY_ARGS if not a.startswith("trainer.max_epochs")]
    result = subprocess.run([sys.executable, "train.py", "-m", "seed=0,1", "experiment=genenv,base_grpo",
                             f"model.agent={tiny_dir}", f"model.simulator={tiny_dir}", *args, "trainer.max_epochs=1",
                             "trainer.val_before_training=false", "agent.val_num_generations=2",
                             "trainer.save_hf=false", f"sweep_dir={sweep}"],
                            capture_output=True, text=True, cwd=ROOT, timeout=3600)
    assert result.returncode == 0, result.stderr[-3000:]
    runs = sorted(p for p in sweep.iterdir() if p.is_dir())
    assert len(runs) == 4 and all((p / "summary.json").is_file() for p in runs)
    report = subprocess.run([sys.executable, "-m", "lightning_genenv.report", str(sweep), f"out={tmp_path / 'r'}"],
                            capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert report.returncode == 0, report.stderr[-3000:]
    text = (tmp_path / "r" / "report.md").read_text()
    assert "genenv" in text and "none" in text


def test_report_takes_a_sweep_directory(tmp_path):
    for name in ("10-seed=1", "2-seed=0", "not-a-run"):
        (tmp_path / name).mkdir()
    for name in ("10-seed=1", "2-seed=0"):
        (tmp_path / name / "config.yaml").write_text("seed: 0\n")
    assert expand_sweeps([tmp_path]) == [tmp_path / "2-seed=0", tmp_path / "10-seed=1"]
    assert expand_sweeps([tmp_path / "2-seed=0"]) == [tmp_path / "2-seed=0"]
    assert _positional([str(tmp_path), "out=r"]) == ["out=r", f"runs=[{tmp_path}]"]


# ----------------------------------------------------------------------------- --config-dir

def _user_dir(tmp_path, name="my_exp", text="defaults:\n  curriculum: random\nagent:\n  beta: 0.5\n"):
    (tmp_path / "experiment").mkdir(parents=True, exist_ok=True)
    (tmp_path / "experiment" / f"{name}.yaml").write_text(text)
    return tmp_path


def test_a_config_dir_adds_options_to_the_groups(tmp_path, capsys):
    user = _user_dir(tmp_path)
    cfg = parse_cli(["--config-dir", str(user), "experiment=my_exp"], "doc")
    assert cfg.agent.beta == 0.5 and cfg.curriculum.train_simulator is False
    assert parse_cli([f"--config-dir={user}", "experiment=my_exp", "agent.beta=0.2"], "doc").agent.beta == 0.2
    parse_cli(["--config-dir", str(user), "--help"], "doc")
    assert "my_exp" in capsys.readouterr().out
    assert compose([f"experiment={user / 'experiment' / 'my_exp.yaml'}"]).agent.beta == 0.5  # a file, directly


@pytest.mark.parametrize("files, message", [
    ({"experiment/bad.yaml": "agent:\n  bta: 1\n"}, r"unknown config key 'agent.bta' \(from .*bad.yaml\)"),
    ({"experiment/genenv.yaml": "{}\n"}, "genenv.yaml has the name of an option that exists"),
    ({"experment/x.yaml": "{}\n"}, "experment/ is not a config group; did you mean 'experiment'"),
])
def test_a_config_dir_gets_the_same_checks(tmp_path, files, message):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    option = Path(next(iter(files))).stem
    with pytest.raises(ConfigError, match=message):
        parse_cli(["--config-dir", str(tmp_path), f"experiment={option}"], "doc")
    with pytest.raises(ConfigError, match="not a directory"):
        parse_cli(["--config-dir", str(tmp_path / "nope")], "doc")
