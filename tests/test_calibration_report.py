"""Calibrated-solver runs read back and summarized over seeds (lightning_genenv/report/calibrated_run.py and
calibration.py): the setting from config.yaml, the curves from calibration.jsonl, the grouping by setting and both
halves of the curriculum bar."""

import json
import math

import pytest
import yaml

from lightning_genenv.objectives.shaping import Shaping
from lightning_genenv.report.calibrated_run import read_run
from lightning_genenv.report.calibration import misses, reward_optimum, settings, summary_table


def _run(root, name, errors, *, trained=True, objective="grpo", alpha=0.5, d0=2.0, d0_step=0.0, seed=0,
         learning_rate=5e-4, shaping=None, unrated=None, tasks=()):
    run = root / name
    run.mkdir()
    config = {"seed": seed, "simulator": {"objective": objective, "learning_rate": learning_rate, **(shaping or {})},
              "curriculum": {"alpha": alpha, "train_simulator": trained, "env_reward": "genenv", "beta": 10.0},
              "solver": {"name": "calibrated", "d0": d0, "d0_step": d0_step, "slope": 2.0},
              "agent": {"num_generations": 8}}
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    (run / "calibration.jsonl").write_text(
        "".join(json.dumps({"epoch": i, "curriculum/p_hat_mean_error": e,
                            **({"solver/unrated_fraction": unrated} if unrated is not None else {})}) + "\n"
                for i, e in enumerate(errors)))
    (run / "calibration_tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return read_run(run)


def test_the_kl_weight_the_imitation_and_the_candidates_a_seed_make_their_own_settings(tmp_path):
    """A KL weight other than the schema's, an in-band imitation term, candidates a seed or generations a step
    other than the calibrated preset's (4 and 4), a writing temperature other than the schema's and a moving reward
    target (curriculum.target_gain, with or without curriculum.target_memory) are settings of their own, named by them
    (the seeds as many as were written from); the preset's candidates are one setting whatever the seed count."""
    errors = [0.4, 0.3, 0.2, 0.1, 0.1, 0.05]
    preset = _run(tmp_path, "preset", errors, shaping={"num_variations": 4})
    preset_other_count = _run(tmp_path, "preset5", errors, seed=1, shaping={"num_variations": 4})
    k8 = _run(tmp_path, "k8", errors, shaping={"num_variations": 8})
    (k8.path / "config.yaml").write_text(yaml.safe_dump({**yaml.safe_load((k8.path / "config.yaml").read_text()),
                                                         "data": {"seeds_per_epoch": 5}}))
    k8 = read_run(k8.path)
    weak_kl = _run(tmp_path, "kl", errors, shaping={"num_variations": 4, "kl_coef": 0.01})
    imitating = _run(tmp_path, "imit", errors, shaping={"num_variations": 4, "imitate_in_band": 0.5})
    # 8 candidates of every seed the family has (10 of the 32 asked for: 80 generations), 8 of them a step
    k8b8 = _run(tmp_path, "k8b8", errors, shaping={"num_variations": 8, "batch_size": 8})
    (k8b8.path / "calibration.jsonl").write_text("".join(
        json.dumps({"epoch": i, "curriculum/p_hat_mean_error": e, "sim/generations": 80.0}) + "\n"
        for i, e in enumerate(errors)))
    k8b8 = read_run(k8b8.path)
    cool = _run(tmp_path, "cool", errors, shaping={"num_variations": 4, "temperature": 0.5})
    aimed = _run(tmp_path, "aimed", errors, shaping={"num_variations": 4})
    config = yaml.safe_load((aimed.path / "config.yaml").read_text())
    config["curriculum"]["target_gain"] = 1.0
    (aimed.path / "config.yaml").write_text(yaml.safe_dump(config))
    aimed = read_run(aimed.path)
    remembering = _run(tmp_path, "remembering", errors, shaping={"num_variations": 4})
    config["curriculum"]["target_memory"] = 0.5
    (remembering.path / "config.yaml").write_text(yaml.safe_dump(config))
    remembering = read_run(remembering.path)
    runs = [preset, preset_other_count, k8, weak_kl, imitating, k8b8, cool, aimed, remembering]
    names = sorted(s.name for s in settings(runs))
    assert names == ["grpo (lr 0.0005), α = 0.5, d₀ = 2", "grpo (lr 0.0005), α = 0.5, d₀ = 2, 10 seeds × 8 candidates, "
                     "8 a step", "grpo (lr 0.0005), α = 0.5, d₀ = 2, 5 seeds × 8 candidates",
                     "grpo (lr 0.0005), α = 0.5, d₀ = 2, written at temperature 0.5",
                     "grpo (lr 0.0005, KL weight 0.01), α = 0.5, d₀ = 2",
                     "grpo (lr 0.0005, in-band imitation 0.5), α = 0.5, d₀ = 2",
                     "grpo (lr 0.0005, target gain 1 memory 0.5), α = 0.5, d₀ = 2",
                     "grpo (lr 0.0005, target gain 1), α = 0.5, d₀ = 2"]


def test_runs_of_one_setting_group_by_seed_and_the_trained_half_needs_every_seed(tmp_path):
    a = _run(tmp_path, "a", [0.4, 0.3, 0.2, 0.1, 0.1, 0.05], seed=1)
    b = _run(tmp_path, "b", [0.4, 0.3, 0.2, 0.2, 0.1, 0.08], seed=0)
    c = _run(tmp_path, "c", [0.4, 0.4, 0.3, 0.3, 0.3, 0.2], alpha=0.2, d0=3.5)
    (s05, s02) = sorted(settings([a, b, c]), key=lambda s: s.runs[0].alpha, reverse=True)
    assert [r.seed for r in s05.runs] == [0, 1] and s05.name == "grpo (lr 0.0005), α = 0.5, d₀ = 2"
    assert s05.first() == [0.4, 0.4] and s05.last() == [0.08, 0.05]
    assert s05.tail_mean() == pytest.approx([0.09, 0.075])  # epochs 5 and 6
    assert s05.later_mean() == pytest.approx([(0.3 + 0.2 + 0.2 + 0.1 + 0.08) / 5, (0.3 + 0.2 + 0.1 + 0.1 + 0.05) / 5])
    assert s05.meets() and not s02.meets()  # 0.2 at its last epoch
    assert settings([a, _run(tmp_path, "d", [0.4, 0.12], seed=2)])[0].meets() is False  # one seed outside the bar
    assert len(settings([a, _run(tmp_path, "e", [0.4, 0.1], learning_rate=2e-3)])) == 2  # another setting
    assert settings([_run(tmp_path, "f", [0.4, 0.8 - 0.7])])[0].meets()  # 0.10000000000000009: on the bar
    wider = _run(tmp_path, "g", [0.4, 0.1], shaping={"kl_max": 2.0})  # a wider trust region: another setting
    assert [s.name for s in settings([a, wider])] == ["grpo (lr 0.0005), α = 0.5, d₀ = 2",
                                                     "grpo (lr 0.0005, KL cap 2), α = 0.5, d₀ = 2"]
    replay = {"seed_replay": 0.75, "seed_replay_epochs": 2}  # seeds replayed: another setting, trained or not
    names = [s.name for s in settings([a, _run(tmp_path, "h", [0.4, 0.1], shaping=replay),
                                       _run(tmp_path, "i", [0.4, 0.3], trained=False, shaping=replay),
                                       _run(tmp_path, "j", [0.4, 0.3], trained=False, shaping={"seed_replay": 0.0})])]
    assert sorted(names) == ["grpo (lr 0.0005), seeds 0.75 replayed (last 2 epochs' in band), α = 0.5, d₀ = 2",
                             "grpo (lr 0.0005), α = 0.5, d₀ = 2",
                             "never trained, seeds 0.75 replayed (last 2 epochs' in band), α = 0.5, d₀ = 2",
                             "never trained, α = 0.5, d₀ = 2"]


def test_the_never_trained_half_reads_its_mean_distance_over_epochs_two_on(tmp_path):
    far = _run(tmp_path, "far", [0.34, 0.30, 0.26, 0.25], trained=False)
    near = _run(tmp_path, "near", [0.34, 0.30, 0.20, 0.22], trained=False, alpha=0.8)
    moving = _run(tmp_path, "moving", [0.3, 0.2], d0_step=0.2)
    by_name = {s.name: s for s in settings([far, near, moving])}
    assert by_name["never trained, α = 0.5, d₀ = 2"].meets()  # (0.30 + 0.26 + 0.25) / 3 = 0.27
    assert not by_name["never trained, α = 0.8, d₀ = 2"].meets()  # 0.24
    assert "grpo (lr 0.0005), α = 0.5, d₀ = 2, d₀ +0.2/epoch" in by_name
    table = summary_table([far, near, moving]).splitlines()
    trained_first = "| grpo (lr 0.0005), α = 0.5, d₀ = 2, d₀ +0.2/epoch | 0 | 2 | 0.300 | 0.200 | – |"
    assert table[2].startswith(trained_first)
    assert "misses (≥ 0.25 over epochs 2+)" in table[4] and "meets (≥ 0.25 over epochs 2+)" in table[3]


def test_the_rewards_of_p_hat_0_and_1_make_another_setting_for_a_trained_simulator_only(tmp_path):
    zero = {"reward_unsolved": 0.0, "reward_solved": 0.0}
    plain = _run(tmp_path, "plain", [0.4, 0.1], unrated=0.5)
    shaped = _run(tmp_path, "shaped", [0.4, 0.05], shaping=zero, unrated=0.25)
    assert (plain.reward_unsolved, shaped.reward_unsolved, shaped.reward_solved) == (None, 0.0, 0.0)
    names = [s.name for s in settings([plain, shaped])]
    assert names == ["grpo (lr 0.0005), α = 0.5, d₀ = 2",
                     "grpo (lr 0.0005), p̂ = 0 / 1 scored 0 / 0, α = 0.5, d₀ = 2"]
    assert len(settings([_run(tmp_path, "u0", [0.4], trained=False),
                         _run(tmp_path, "u1", [0.4], trained=False, shaping=zero, seed=1)])) == 1  # no update
    table = summary_table([plain, shaped])
    assert "| 0.100 | – | 0.100 | 0.500 | 2 (0.500); E[R] 0.78, 0.28 at 1 | – / – | meets" in table  # R_env(1) adds
    assert "| 0.050 | – | 0.050 | 0.250 | 2 (0.500); E[R] 0.78, 0.25 at 1 | – / – | meets" in table


def test_the_learning_rate_schedule_and_the_off_target_scale_make_another_setting(tmp_path):
    runs = [_run(tmp_path, "constant", [0.4, 0.1]),
            _run(tmp_path, "linear", [0.4, 0.1], shaping={"lr_scheduler_type": "linear"}),
            _run(tmp_path, "off", [0.4, 0.1], shaping={"lr_scheduler_type": "off_target"}),
            _run(tmp_path, "off2", [0.4, 0.1], shaping={"lr_scheduler_type": "off_target", "lr_off_target_scale": 0.1})]
    assert [r.lr_scheduler_type for r in runs] == ["constant", "linear", "off_target 0.3", "off_target 0.1"]
    assert [s.name.split(",")[0] for s in settings(runs)] == ["grpo (lr 0.0005)", "grpo (lr 0.0005 linear)",
                                                             "grpo (lr 0.0005 off_target 0.1)",
                                                             "grpo (lr 0.0005 off_target 0.3)"]


def _r_env_a05(p_hat):
    return math.exp(-10.0 * (p_hat - 0.5) ** 2)


def test_the_rewards_optimum_is_the_difficulty_level_a_reward_maximizing_simulator_ends_at(tmp_path):
    zero = {"reward_unsolved": 0.0, "reward_solved": 0.0}
    # alpha 0.2 at d0 = 5: sigmoid(2 (5 - d)) is 0.881, 0.5, 0.119 at d = 4, 5, 6; eight attempts at d = 6 all fail
    # 36% of the time and score 0, yet its expected reward (0.59) beats d = 5's (0.45, where p-hat is 0.5 or so)
    o = reward_optimum(_run(tmp_path, "a02", [0.4], alpha=0.2, d0=5.0, shaping=zero))
    assert (o.d, round(o.p, 3), round(o.reward, 2), o.runner_up_d, round(o.runner_up_reward, 2)) == (
        6.0, 0.119, 0.59, 5.0, 0.45)
    o = reward_optimum(_run(tmp_path, "a02d43", [0.4], alpha=0.2, d0=4.3, shaping=zero))
    assert (o.d, round(o.p, 3), round(o.reward, 2), o.runner_up_d, round(o.runner_up_reward, 2)) == (
        5.0, 0.198, 0.73, 4.0, 0.23)  # sigmoid(-1.4); d = 6 (p 0.032) earns 0.22
    # a moving target: the last epoch's d0 (2 + 0.5 * 2 = 3) puts p = 0.5 at d = 3
    o = reward_optimum(_run(tmp_path, "moving", [0.4, 0.3, 0.2], d0_step=0.5, shaping=zero))
    assert (o.d, o.p) == (3.0, 0.5) and o.runner_up_reward == pytest.approx(
        Shaping(unsolved=0.0, solved=0.0).expected_reward(1 / (1 + math.exp(-2.0)), 8, _r_env_a05))
    untrained = _run(tmp_path, "u", [0.4], trained=False, alpha=0.2, d0=5.0)
    assert summary_table([untrained]).endswith("| – | – | – | misses (≥ 0.25 over epochs 2+) |")  # no optimum


def test_misses_splits_the_late_tasks_off_their_epochs_optimum_into_easier_and_harder(tmp_path):
    zero = {"reward_unsolved": 0.0, "reward_solved": 0.0}
    # alpha 0.5, d0 2 + 0.5 per epoch: the optimum is d = 2 at epoch 0 and d = 4 at epoch 4 (0-based; the first of
    # epochs 5+); d0 = 4.5 at epoch 5: d = 4 (p 0.731) ties d = 5 (0.269), and a tie goes to the lower level
    tasks = [{"epoch": 0, "d": 1.0}, {"epoch": 0, "d": 3.0},  # before epoch 5: not counted
             {"epoch": 4, "d": 3.0}, {"epoch": 4, "d": 4.0}, {"epoch": 4, "d": 5.0}, {"epoch": 4, "d": None},
             {"epoch": 5, "d": 4.0}, {"epoch": 5, "d": 5.0}, {"epoch": 5, "d": 2.0}, {"epoch": 5, "d": 6.0}]
    run = _run(tmp_path, "moving", [0.4] * 6, d0_step=0.5, shaping=zero, tasks=tasks)
    assert reward_optimum(run, 4).d == 4.0 and reward_optimum(run, 5).d == 4.0
    assert misses(run) == (2 / 8, 4 / 8)  # easier: 3 (epoch 4), 2; harder: 5, unrated, 5, 6
    table = summary_table([run, _run(tmp_path, "young", [0.4], seed=1, d0_step=0.5, shaping=zero)])
    assert "| 0.25 / 0.50, – / – | misses" in table  # a run short of epoch 5: dashes
    (tmp_path / "moving" / "calibration_tasks.jsonl").write_text(json.dumps({"epoch": 5, "k": 3}) + "\n")
    with pytest.raises(SystemExit, match="a task record without a usable 'd'"):
        misses(run)
    (tmp_path / "moving" / "calibration_tasks.jsonl").unlink()
    with pytest.raises(SystemExit, match="no calibration_tasks.jsonl or calibration_tasks.jsonl.gz"):
        misses(run)


def test_a_directory_that_is_not_a_calibrated_run_is_refused_in_one_line(tmp_path):
    with pytest.raises(SystemExit, match="not a calibrated-solver run"):
        read_run(tmp_path)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"seed": 0, "simulator": {}}))
    (tmp_path / "calibration.jsonl").write_text("")
    with pytest.raises(SystemExit, match="lacks"):
        read_run(tmp_path)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({
        "seed": 0, "simulator": {"objective": "grpo", "learning_rate": 5e-4, "reward_unsolved": "none"},
        "curriculum": {"alpha": 0.5, "train_simulator": True, "env_reward": "genenv", "beta": 10},
        "solver": {"d0": 2, "slope": 2}, "agent": {"num_generations": 8}}))
    with pytest.raises(SystemExit, match="could not convert string to float: 'none'"):
        read_run(tmp_path)
    config = yaml.safe_load((tmp_path / "config.yaml").read_text())
    config["simulator"]["reward_unsolved"], config["curriculum"]["env_reward"] = 0.0, "genv"
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(SystemExit, match="unknown curriculum.env_reward 'genv'"):
        read_run(tmp_path)


def test_the_bench_script_summarizes_run_directories_by_setting(tmp_path, capsys):
    from tests.bench_scripts import load_bench_script

    for seed, last in ((0, 0.05), (1, 0.2)):
        _run(tmp_path, f"s{seed}", [0.4, last], seed=seed)
    text = load_bench_script("calibration_table").main(["--summary", str(tmp_path / "s0"), str(tmp_path / "s1")])
    assert "| grpo (lr 0.0005), α = 0.5, d₀ = 2 | 0, 1 | 2, 2 | 0.400 / 0.400 | 0.050 / 0.200 |" in text
    assert text.rstrip().endswith("misses (≤ 0.1 at the last epoch) |") and capsys.readouterr().out.strip() == text


def test_an_archived_run_s_gzipped_curves_read_as_written(tmp_path):
    import gzip

    from tests.bench_scripts import load_bench_script

    written = _run(tmp_path, "w", [0.4, 0.3, 0.05])
    curves = tmp_path / "w" / "calibration.jsonl"
    with gzip.open(tmp_path / "w" / "calibration.jsonl.gz", "wt") as f:
        f.write(curves.read_text())
    curves.unlink()
    archived = read_run(tmp_path / "w")
    assert archived.epochs == written.epochs and archived.errors() == [0.4, 0.3, 0.05]
    assert "last epoch |p̄ - α| <= 0.1: meets the bar (0.050)" in load_bench_script("calibration_table").main(
        [str(tmp_path / "w")])
    (tmp_path / "w" / "calibration.jsonl.gz").unlink()
    with pytest.raises(SystemExit, match="not a calibrated-solver run"):
        read_run(tmp_path / "w")


def test_a_measured_run_gets_a_row_of_its_measures_recomputed_from_its_measured_tasks(tmp_path):
    import gzip

    from tests.bench_scripts import load_bench_script

    def row(measure, r, seed, k):
        return {"measure": measure, "round": r, "seed": seed, "valid": k is not None, "d0": 5.0,
                **({"k": k, "n": 8, "p": k / 8, "d": 5.0} if k is not None else {})}

    _run(tmp_path, "m", [0.4, 0.15], alpha=0.2, d0=5.0, seed=2)
    rows = [row("start", 0, "a", 8), row("start", 0, "b", 4),  # p-bar 0.75, clusters 1 and 0.5: SE 0.25
            row("end-base", 0, "a", 2), row("end-base", 1, "a", 2), row("end-base", 1, "b", None),  # 0.25 twice
            row("end-draw", 0, "a", 0), row("end-draw", 0, "b", 4), row("end-draw", 1, "a", 2)]  # 0.25; 0, .5, .25
    with gzip.open(tmp_path / "m" / "calibration_measure.jsonl.gz", "wt") as f:  # archived, gzipped
        f.writelines(json.dumps(r) + "\n" for r in rows)
    text = load_bench_script("calibration_table").main(["--summary", str(tmp_path / "m"),
                                                        str(_run(tmp_path, "plain", [0.4, 0.1]).path)])
    # the end draw's SE: the SD of (0, 0.5, 0.25), 0.25, over the root of 3; its upper bound 0.05 + 1.96 x 0.144
    assert ("| 0.2 | 5 | 2 | 0.150 | 0.750 ± 0.250 (2) | 0.250 ± 0.000 (2) | 0.250 ± 0.144 (3) | 0.050 | 0.333 | yes |"
            in text.splitlines())
    assert sum(line.startswith("| 0.2 | 5 |") for line in text.splitlines()) == 1  # the plain run has no row
    assert "Selected" not in text  # no state was selected
    selected = [{**row("select", 0, "a", k), "state": state} for state, k in ((9, 2), (9, 1), (10, 6), (10, None))]
    with gzip.open(tmp_path / "m" / "calibration_measure.jsonl.gz", "wt") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows + selected)
    text = load_bench_script("calibration_table").main(["--summary", str(tmp_path / "m")]).splitlines()
    # state 9: p-bar (0.25 + 0.125) / 2, one cluster (no SE); state 10: 0.75 of one valid task; alpha 0.2: 9 chosen
    assert "| 0.2 | 5 | 2 | 10: 0.750 (1) | 9: 0.188 (2) | 9 of 10 |" in text
    with gzip.open(tmp_path / "m" / "calibration_measure.jsonl.gz", "wt") as f:
        f.write(json.dumps({**rows[0], "measure": "middle"}) + "\n")
    with pytest.raises(SystemExit, match="unknown measure \\['middle'\\]"):
        load_bench_script("calibration_table").main([str(tmp_path / "m")])


def test_right_answers_counts_the_seeds_form_alone_and_checks_its_number(tmp_path):
    from lightning_genenv.report.calibrated_views import right_answers
    from lightning_genenv.report.claim import RESULTS

    rows = [("What is 25 plus 20?", "45"), ("What is 25 plus 20?", "60"), ("What is 12 times 3?", "36"),
            ("What is 40 minus 52?", "-12"), ("Ana has 3 apples and buys 2 more. How many?", "5")]
    for i, run in enumerate(("a-s0", "b-s0")):
        folder = tmp_path / RESULTS / "grid" / run
        folder.mkdir(parents=True)
        lines = [json.dumps({"epoch": 0, "question": q, "answer": a}) for q, a in rows[i::2]]
        (folder / "calibration_tasks.jsonl").write_text("\n".join(lines) + "\n")
    # the apples question is not in the seeds' form; 45, 36 and -12 are right, 60 is not
    assert right_answers("grid")(tmp_path) == "3 of 4 (75%)"


def test_variations_of_a_level_count_the_tasks_written_from_seeds_at_it_from_epoch_five_on(tmp_path):
    from lightning_genenv.report.calibrated_views import SHAPED, variations_of_level
    from lightning_genenv.report.claim import RESULTS

    folder = tmp_path / RESULTS / SHAPED / "r-s0"
    folder.mkdir(parents=True)
    tasks = [{"epoch": 3, "id": "s5", "seed": "base", "d": 5.0},  # a level-5 seed written at epoch 4
             {"epoch": 3, "id": "s4", "seed": "base", "d": 4.0},
             {"epoch": 4, "id": "a", "seed": "s5", "d": 4.0}, {"epoch": 4, "id": "b", "seed": "s5", "d": 5.0},
             {"epoch": 4, "id": "c", "seed": "s5", "d": 5.0}, {"epoch": 5, "id": "d", "seed": "s5", "d": None},
             {"epoch": 5, "id": "e", "seed": "s4", "d": 6.0},  # from a seed at another level: not counted
             {"epoch": 3, "id": "f", "seed": "s5", "d": 7.0}]  # before epoch 5: not counted
    (folder / "calibration_tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    assert variations_of_level(5.0, "r-s0")(tmp_path) == "easier 0.25 / same 0.50 / harder 0.00 / unrated 0.25 of 4"


def test_success_by_seed_kind_splits_the_tasks_from_epoch_five_on_by_what_they_were_written_from(tmp_path):
    from lightning_genenv.report.calibrated_views import SHAPED, success_by_seed_kind
    from lightning_genenv.report.claim import RESULTS

    folder = tmp_path / RESULTS / SHAPED / "r-s0"
    folder.mkdir(parents=True)
    tasks = [{"epoch": 3, "id": "s", "seed": "base-1", "k": 1, "n": 8},  # before epoch 5: not counted
             {"epoch": 4, "id": "a", "seed": "base-1", "k": 6, "n": 8},  # base seeds
             {"epoch": 4, "id": "b", "seed": "base-2", "k": 4, "n": 8},
             {"epoch": 4, "id": "c", "seed": "s", "k": 1, "n": 8},  # from the run's own task s
             {"epoch": 5, "id": "d", "seed": "c", "k": 2, "n": 8},
             {"epoch": 5, "id": "e", "seed": "c", "k": 0, "n": 8}]
    (folder / "calibration_tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    # base (0.75 + 0.5) / 2; replayed (0.125 + 0.25 + 0) / 3
    assert success_by_seed_kind("r-s0")(tmp_path) == "base 0.62 (share 0.40 of 5) / replayed 0.12"


def test_replay_hits_count_the_trained_replay_runs_of_a_target_within_the_bar_at_their_last_epoch(tmp_path):
    from lightning_genenv.report.calibrated_views import SHAPED, replay_hits
    from lightning_genenv.report.claim import RESULTS

    root = tmp_path / RESULTS / SHAPED
    root.mkdir(parents=True)
    replay = {"num_variations": 4, "seed_replay": 0.75}
    _run(root, "hit", [0.4, 0.05], alpha=0.2, d0=5.0, shaping=replay)
    _run(root, "miss", [0.4, 0.2], alpha=0.2, d0=5.0, seed=1, shaping=replay)
    _run(root, "hit-k8", [0.4, 0.1], alpha=0.2, d0=5.0, shaping={**replay, "num_variations": 8})  # 0.1: within
    _run(root, "no-replay", [0.4, 0.0], alpha=0.2, d0=5.0, shaping={"num_variations": 4})  # not counted
    _run(root, "untrained", [0.4, 0.0], alpha=0.2, d0=5.0, trained=False, shaping=replay)  # not counted
    _run(root, "other-d0", [0.4, 0.0], alpha=0.2, d0=4.3, shaping=replay)  # another target
    _run(root, "moving", [0.4, 0.0], alpha=0.2, d0=5.0, d0_step=0.2, shaping=replay)  # a moving one
    assert replay_hits(0.2, 5.0)(tmp_path) == "2 of 3"
    assert replay_hits(0.2, 4.3)(tmp_path) == "1 of 1"


@pytest.mark.parametrize("name,at_least", [("calibrated-shaped", 50), ("calibrated-measured", 18)])
def test_the_archived_summary_is_the_archived_runs_summary(name, at_least):
    """Each archived folder's summary.md tables are what the summary of the runs beside it prints now: one row per
    setting, and for measured runs one row per run (bench/calibration_table.py --summary)."""
    from pathlib import Path

    from lightning_genenv.report.calibrated_measured import measured_table, selection_table

    folder = Path(__file__).resolve().parents[1] / "docs" / "results" / name
    runs = [read_run(p) for p in sorted(p for p in folder.iterdir() if p.is_dir())]
    stored = [ln for ln in (folder / "summary.md").read_text(encoding="utf-8").splitlines() if ln.startswith("|")]
    tables = [*summary_table(runs).splitlines(), *measured_table(runs).splitlines(),
              *selection_table(runs).splitlines()]
    assert len(runs) >= at_least and stored == [ln for ln in tables if ln]


def test_level_and_unrated_shares_of_a_measure_split_by_seed_kind_and_the_replayed_seeds_own_levels(tmp_path):
    from lightning_genenv.report.calibrated_measured import (
        level_share,
        longer_than_seed,
        replayed_seed_share,
        unrated_share,
    )

    run = _run(tmp_path, "m", [0.3], alpha=0.8, d0=3.69,
               tasks=[{"epoch": 8, "id": "gen-e8-a-0", "seed": "a", "d": 3.0},
                      {"epoch": 9, "id": "gen-e9-a-1", "seed": "a", "d": 5.0}])
    rows = [{"measure": "end-draw", "seed": "base-a", "valid": True, "d": 4.0},
            {"measure": "end-draw", "seed": "base-b", "valid": True, "d": 2.0},
            {"measure": "end-draw", "seed": "base-c", "valid": True, "d": None},  # unrated: not counted
            {"measure": "end-draw", "seed": "gen-e8-a-0", "valid": True, "d": 5.0},
            {"measure": "end-draw", "seed": "gen-e8-a-0", "valid": True, "d": 3.0},
            {"measure": "end-draw", "seed": "gen-e9-a-1", "valid": True, "d": 3.0},
            {"measure": "end-draw", "seed": "gen-e9-a-1", "valid": False},  # invalid: not counted
            {"measure": "start", "seed": "base-a", "valid": True, "d": 9.0}]  # another measure
    (run.path / "calibration_measure.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert level_share(run, "end-draw", 4) == pytest.approx(2 / 5)  # 4 and 5 of 4, 2, 5, 3, 3
    assert level_share(run, "end-draw", 4, replayed=False) == pytest.approx(1 / 2)
    assert level_share(run, "end-draw", 4, replayed=True) == pytest.approx(1 / 3)
    assert level_share(run, "start", 4) == 1.0 and math.isnan(level_share(run, "end-base", 4))
    # the replayed tasks' seeds: gen-e8-a-0 (d 3) twice, gen-e9-a-1 (d 5) once
    assert replayed_seed_share(run, "end-draw", 3) == pytest.approx(2 / 3)
    # of the tasks from the d-3 seed (d 5 and 3), one is longer; the d-5 seed's task is not counted
    assert longer_than_seed(run, "end-draw", 3) == pytest.approx(1 / 2)
    assert longer_than_seed(run, "end-draw", 5) == pytest.approx(1 / 3)  # the d-5 seed's task (d 3) is shorter
    # of the 6 valid end-draw tasks one is unrated (the invalid one is not counted)
    assert unrated_share(run, "end-draw") == pytest.approx(1 / 6)
    assert unrated_share(run, "start") == 0.0 and math.isnan(unrated_share(run, "end-base"))
