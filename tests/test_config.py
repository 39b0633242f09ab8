"""Config composition, overrides and one-line errors; the schema and conf/ cannot drift."""

import importlib
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from omegaconf import OmegaConf

import train
from lightning_genenv.config import (
    CONF_DIR,
    NO_TRAIN_SPLIT,
    Config,
    ConfigError,
    compose,
    groups,
    option_mapping,
    schema_keys,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("group,option", [(g, o) for g, opts in groups().items() for o in opts])
def test_every_option_composes(group, option):
    required = [f"curriculum.static_path={__file__}"] if option == "offline_teacher" else []
    if group == "data" and option in NO_TRAIN_SPLIT:  # kept to refuse with a reason
        with pytest.raises(ConfigError, match=f"data={option}: .*no .*train split") as e:
            compose([f"{group}={option}"])
        assert "\n" not in str(e.value)
        return
    cfg = compose([f"{group}={option}", *required])
    assert isinstance(cfg.agent.beta, float)


def test_required_groups_exist():
    assert {"model", "rollout", "strategy", "curriculum", "data", "trainer", "logger"} <= set(groups())


def _leaves(data: dict, prefix: str = ""):
    for k, v in data.items():
        if isinstance(v, dict) and v:
            yield from _leaves(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def _yaml_files():
    return sorted(CONF_DIR.glob("*/*.yaml"))


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_yaml_file_restates_a_default(path):
    """Every default is written once, in the schema: a group option holds only the keys it changes
    from the schema; an experiment only those it changes from its groups' composition."""
    data = yaml.safe_load(path.read_text()) or {}
    group = path.parent.name
    if group == "experiment":
        base = compose([f"{g}={o}" for g, o in (data.pop("defaults", None) or {}).items()]
                       + ([f"curriculum.static_path={__file__}"] if path.stem == "offline_teacher" else []))
    else:
        base, data = OmegaConf.structured(Config), option_mapping(path, group)
    restated = [k for k, v in _leaves(data) if v != "???" and OmegaConf.select(base, k) == v]
    assert not restated, f"{path.relative_to(CONF_DIR)} restates {restated}: leave defaults to the schema"


def test_root_config_only_picks_groups():
    root = yaml.safe_load((CONF_DIR / "config.yaml").read_text())
    assert set(root) == {"defaults"} and set(root["defaults"]) <= set(groups())


def test_every_key_has_a_description():
    """``--help`` prints each key's one-line description: the schema's field comment."""
    keys = schema_keys(Config)
    assert len(keys) > 90
    assert [k.name for k in keys if not k.doc] == []
    docs = {k.name: k.doc for k in keys}
    assert docs["agent.beta"].startswith("KL coefficient") and docs["curriculum.task_source"].startswith("Where each")


def test_help_lists_groups_options_and_every_key(capsys):
    assert train.main(["--help"]) is None
    out = capsys.readouterr().out
    assert "model: embedded, embedded_full, tiny (default: embedded)" in out
    assert "experiment: base_grpo, calibrated, frozen_agent, genenv, genenv_group, genenv_random" in out
    assert "solver: agent, calibrated (default: agent)" in out
    for key in schema_keys(Config):
        assert f"  {key.name} " in out, key.name
    line = next(line for line in out.splitlines() if line.strip().startswith("agent.loss_type "))
    assert "grpo|bnpo|dr_grpo|dapo = dapo" in line


def test_cfg_prints_the_composed_config_without_running(capsys, tmp_path):
    assert train.main(["experiment=base_grpo", "agent.beta=0.5", f"run_dir={tmp_path}/run", "--cfg"]) is None
    printed = OmegaConf.create(capsys.readouterr().out)
    assert printed == compose(["experiment=base_grpo", "agent.beta=0.5", f"run_dir={tmp_path}/run"])
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("module,argv", [
    ("lightning_genenv.evaluate", ["benchmark=bfcl", "data_root=."]),
    ("lightning_genenv.static_augment", ["out=x.jsonl", "model=tiny"]),
    ("lightning_genenv.report", ["runs=[a,b]"]),
    ("lightning_genenv.pools", ["run_dir=a"]),
])
def test_every_command_shares_help_and_cfg(module, argv, capsys):
    main = importlib.import_module(module).main
    main(["--help"])
    assert "keys (key=value" in capsys.readouterr().out
    main([*argv, "--cfg"])
    printed = yaml.safe_load(capsys.readouterr().out)
    key, value = argv[0].split("=", 1)
    assert printed[key] == yaml.safe_load(value)


def test_dataclass_defaults_equal_the_default_yaml_files():
    """The schema's defaults and conf/'s defaults are one configuration: change both or neither."""
    assert compose([]) == OmegaConf.structured(Config)


def test_group_and_key_overrides():
    cfg = compose(["model=tiny", "curriculum=random", "agent.beta=0.04", "agent.epsilon_high=0.28",
                   "model.lora.target_modules=[q_proj]", "data.families=[weather]"])
    assert cfg.model.agent == "tiny" and cfg.curriculum.train_simulator is False
    assert cfg.agent.beta == 0.04 and cfg.agent.epsilon_high == 0.28
    assert list(cfg.model.lora.target_modules) == ["q_proj"]
    assert list(cfg.data.families) == ["weather"]


def test_trl_names_exist():
    names = {"beta", "epsilon", "epsilon_high", "loss_type", "num_generations", "scale_rewards",
             "mask_truncated_completions", "num_iterations", "temperature", "max_completion_length"}
    assert names <= set(compose([]).agent.keys())


@pytest.mark.parametrize("argv,expected", [
    (["agent.bta=0.1"], "unknown config key 'agent.bta' (from the command line); did you mean 'agent.beta'?"),
    (["agnt.beta=0.1"], "did you mean 'agent.beta'?"),
    (["agent.beta=high"], "agent.beta='high' (from the command line): wrong type, expected float"),
    (["agent.num_generations=1.5"], "wrong type, expected int"),
    (["model=tinyy"], "model=tinyy: no such option; did you mean 'tiny'?"),
    (["agent.loss_type=ppo"],
     "agent.loss_type='ppo' (from the command line): must be one of grpo, bnpo, dr_grpo, dapo"),
    (["agent.loss_type=dapp"], "did you mean 'dapo'?"),
    (["trainer.val_benchmarks=[api_bank,bfc]"],
     "trainer.val_benchmarks=['api_bank', 'bfc'] (from the command line): must be one of"),
    (["data.families=weather"],
     "data.families='weather' (from the command line): wrong type, expected list[str] or null"),
    (["experiment=offline_teacher"],
     "required config key not set: curriculum.static_path (pass curriculum.static_path=...)"),
    (["curriculum.alpha=1.5"], "curriculum.alpha=1.5 must be in [0, 1]"),
    (["agent.num_generations=1"], "must be >= 2"),
    (["data.tasks_per_epoch=7"], "must be divisible by agent.groups_per_step"),
    (["data.train_path=/nonexistent/x.jsonl"], "data.train_path=/nonexistent/x.jsonl: file not found"),
    (["noequals"], "expected key=value"),
])
def test_errors_are_one_line_and_name_the_key(argv, expected):
    with pytest.raises(ConfigError) as e:
        compose(argv)
    assert expected in str(e.value)
    assert "\n" not in str(e.value)


def test_malformed_yaml_file_gives_clear_error(tmp_path):
    conf = tmp_path / "conf"
    (conf / "model").mkdir(parents=True)
    (conf / "config.yaml").write_text("defaults:\n  model: broken\n")
    (conf / "model" / "broken.yaml").write_text("agent: [unclosed\n")
    with pytest.raises(ConfigError, match="broken.yaml: not valid YAML"):
        compose([], conf_dir=conf)


def test_unreadable_option_file_gives_clear_error(tmp_path):
    conf = tmp_path / "conf"
    (conf / "model").mkdir(parents=True)
    (conf / "config.yaml").write_text("defaults:\n  model: latin\n")
    (conf / "model" / "latin.yaml").write_bytes(b"name: caf\xe9\n")  # Latin-1, not UTF-8
    with pytest.raises(ConfigError, match=r"cannot read \S*latin.yaml \(UnicodeDecodeError") as e:
        compose([], conf_dir=conf)
    assert "\n" not in str(e.value)


def test_yaml_unknown_key_names_the_file(tmp_path):
    conf = tmp_path / "conf"
    (conf / "agent").mkdir(parents=True)
    (conf / "config.yaml").write_text("defaults:\n  agent: bad\n")
    (conf / "agent" / "bad.yaml").write_text("betta: 0.1\n")
    expected = r"unknown config key 'agent.betta' \(from conf/agent/bad.yaml\); did you mean 'agent.beta'"
    with pytest.raises(ConfigError, match=expected):
        compose([], conf_dir=conf)


def test_a_global_package_option_sets_other_groups_and_loses_to_the_command_line(tmp_path):
    """Hydra's ``# @package _global_`` header roots an option file at the whole config (an option of one
    group may set another group's keys, after that group's own option); without it, or written below the
    first key, the file is its group's."""
    conf = tmp_path / "conf"
    (conf / "data").mkdir(parents=True)
    (conf / "agent").mkdir()
    (conf / "config.yaml").write_text("defaults:\n  agent: short\n  data: long\n")
    (conf / "agent" / "short.yaml").write_text("max_completion_length: 32\n")
    (conf / "data" / "long.yaml").write_text("# a comment first\n# @package _global_\n\ndata:\n  name: long\n"
                                             "agent:\n  max_completion_length: 200\n")
    (conf / "data" / "plain.yaml").write_text("name: plain\n# @package _global_\n")
    cfg = compose([], conf_dir=conf)
    assert (cfg.data.name, cfg.agent.max_completion_length) == ("long", 200)
    assert compose(["agent.max_completion_length=48"], conf_dir=conf).agent.max_completion_length == 48
    plain = compose(["data=plain"], conf_dir=conf)
    assert (plain.data.name, plain.agent.max_completion_length) == ("plain", 32)
    assert option_mapping(conf / "data" / "plain.yaml", "data") == {"data": {"name": "plain"}}
    (conf / "data" / "bad.yaml").write_text("# @package _global_\nagnt:\n  beta: 0.1\n")
    with pytest.raises(ConfigError, match=r"unknown config key 'agnt.beta' \(from conf/data/bad.yaml\)"):
        compose(["data=bad"], conf_dir=conf)


def test_resolved_config_round_trips():
    cfg = compose(["model=tiny", "agent.beta=0.5"])
    text = OmegaConf.to_yaml(cfg)
    again = OmegaConf.merge(OmegaConf.structured(Config), OmegaConf.create(text))
    assert again == cfg


def test_cli_error_is_one_line_without_traceback():
    proc = subprocess.run([sys.executable, "train.py", "agent.bta=1"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode != 0
    assert proc.stderr.strip() == ("error: unknown config key 'agent.bta' (from the command line); "
                                   "did you mean 'agent.beta'?")


@pytest.mark.slow
def test_missing_model_path_is_clear(tmp_path):
    proc = subprocess.run([sys.executable, "train.py", f"model.agent={tmp_path}/nope", "model.lora.enabled=false",
                           f"run_dir={tmp_path}/run"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: Model ") and "nope" in last and "model.agent=" in last
    assert "Traceback" not in proc.stderr


def test_old_importance_sampling_key_is_an_alias(tmp_path):
    """TRL renamed vllm_importance_sampling_cap to ..._clip_max: the old name still works, with a note,
    on the command line and in a run's saved config.yaml (resume)."""
    with pytest.warns(FutureWarning, match="rollout.vllm_importance_sampling_clip_max"):
        cfg = compose(["rollout=vllm", "rollout.vllm_importance_sampling_cap=3.5"])
    assert cfg.rollout.vllm_importance_sampling_clip_max == 3.5 and "vllm_importance_sampling_cap" not in cfg.rollout
    saved = OmegaConf.to_container(compose(["rollout.vllm_importance_sampling_clip_max=1.5"]))
    del saved["rollout"]["vllm_importance_sampling_mode"]  # an old run has neither new key
    saved["rollout"]["vllm_importance_sampling_cap"] = saved["rollout"].pop("vllm_importance_sampling_clip_max")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(saved))
    with pytest.warns(FutureWarning, match="is deprecated"):
        resumed = compose([f"resume={tmp_path}"])
    assert resumed.rollout.vllm_importance_sampling_clip_max == 1.5
    assert resumed.rollout.vllm_importance_sampling_mode == "token_truncate"
    with pytest.raises(ConfigError, match="must be one of token_truncate"):
        compose(["rollout.vllm_importance_sampling_mode=sequence_mask"])


def test_a_target_gain_needs_a_reward_with_an_alpha():
    """curriculum.target_gain moves R_env's alpha; the rewards without one (rzero, absolute_zero) refuse it."""
    assert compose(["curriculum.target_gain=1"]).curriculum.target_gain == 1.0
    assert compose(["curriculum.target_gain=1", "curriculum.env_reward=band", "curriculum.band=0.1"])
    with pytest.raises(ConfigError, match="target_gain=1.0 moves R_env's alpha; curriculum.env_reward=rzero"):
        compose(["curriculum.target_gain=1", "curriculum.env_reward=rzero"])
    assert compose(["curriculum.target_gain=1", "curriculum.target_memory=0.5"]).curriculum.target_memory == 0.5
    with pytest.raises(ConfigError, match="target_memory=0.5 carries earlier epochs' error into R_env's alpha, which "
                                          "only curriculum.target_gain > 0 moves"):
        compose(["curriculum.target_memory=0.5"])


def test_a_moving_sampling_temperature():
    """simulator.temperature_end: a straight line from simulator.temperature at the first epoch to it at the last,
    held after; the fit follows it unless fit_temperature is fixed, which cannot go with it."""
    from lightning_genenv.config import fit_temperature, sampling_temperature

    sim = compose(["simulator.temperature=0.7", "simulator.temperature_end=0.5"]).simulator
    assert [sampling_temperature(sim, e, 10) for e in (0, 9, 12)] == pytest.approx([0.7, 0.5, 0.5])
    assert sampling_temperature(sim, 3, 10) == pytest.approx(0.7 - 0.2 / 3)
    assert sampling_temperature(sim, 0, 1) == pytest.approx(0.5)  # a one-epoch run samples at the end's
    assert fit_temperature(sim, 3, 10) == sampling_temperature(sim, 3, 10)
    fixed = compose(["simulator.temperature=0.6"]).simulator
    assert {sampling_temperature(fixed, e, 10) for e in range(12)} == {0.6} == {fit_temperature(fixed, 4, 10)}
    assert fit_temperature(compose(["simulator.fit_temperature=1.0"]).simulator, 4, 10) == 1.0
    with pytest.raises(ConfigError, match="temperature_end=0.5 moves the temperature the simulator samples and fits "
                                          "at; it cannot go with a fixed simulator.fit_temperature=1.0"):
        compose(["simulator.temperature_end=0.5", "simulator.fit_temperature=1.0"])
    with pytest.raises(ConfigError, match=r"temperature_end=0.0 must be in \(0, 10\]"):
        compose(["simulator.temperature_end=0"])
