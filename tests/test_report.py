"""``python -m lightning_genenv.report`` on real tiny run directories, and on broken inputs.

Three 2-epoch runs are trained once for the module (GenEnv with seeds 0 and 1, GenEnv-Random with
seed 0), then the report's ``main`` compares them. The numbers in ``report.md`` are checked against
the TensorBoard event files read independently here.
"""

import shutil
import statistics
from collections import namedtuple
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import train
from lightning_genenv import report
from tests.shrunk import TINY_ARGS

PLOTS = ["p_hat.png", "in_band.png", "response_length.png", "val_score.png", "val_reward.png", "data_efficiency.png",
         "valid_rate.png", "kl.png", "kl_simulator.png"]
RUNS = {"genenv_s0": ["seed=0"], "genenv_s1": ["seed=1"], "random_s0": ["seed=0", "curriculum=random"]}


@pytest.fixture(scope="module")
def run_dirs(tiny_sft_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    dirs = {}
    for name, extra in RUNS.items():
        out = root / name
        args = [f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}", f"run_dir={out}",
                *TINY_ARGS, "trainer.save_hf=false", *extra]
        assert train.main(args) == out
        dirs[name] = out
    return dirs


@pytest.fixture(scope="module")
def made(run_dirs, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    assert report.main([f"runs=[{','.join(map(str, run_dirs.values()))}]", f"out={out}"]) == out
    return out, (out / "report.md").read_text()


def _scalars(run_dir: Path, tag: str) -> list[float]:
    acc = EventAccumulator(str(run_dir / "tb" / "agent"), size_guidance={"scalars": 0})
    acc.Reload()
    return [e.value for e in acc.Scalars(tag)] if tag in acc.Tags()["scalars"] else []


def _row(md: str, first_cell: str, section: str) -> str:
    body = md.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in body.splitlines() if line.startswith(f"| {first_cell} |")]
    assert len(rows) == 1, (first_cell, section, rows)
    return rows[0]


@pytest.mark.slow
def test_writes_plots_and_markdown(made):
    out, md = made
    for name in PLOTS + ["family_genenv.png", "family_random.png"]:
        path = out / name
        assert path.is_file() and 0 < path.stat().st_size < 200_000, name
    for name in RUNS:
        assert f"| {name} |" in md
    genenv = _row(md, "genenv", "Summary per group")
    random = _row(md, "random", "Summary per group")
    assert "| 0, 1 |" in genenv and "±" in genenv  # two seeds: mean ± sd
    assert "| 0 |" in random and "±" not in random
    for png in PLOTS:
        assert f"]({png})" in md


@pytest.mark.slow
def test_markdown_numbers_equal_event_files(made, run_dirs):
    _, md = made
    lengths = {}
    for name, run_dir in run_dirs.items():
        lengths[name] = _scalars(run_dir, "rollout/response_length")
        assert len(lengths[name]) == 2  # once per epoch
        first, last = lengths[name][0], lengths[name][-1]
        assert f"{first:.3f} → {last:.3f}" in _row(md, name, "Per run")
        val = _scalars(run_dir, "val/score")
        assert f"{val[0]:.3f} → {val[-1]:.3f}" in _row(md, name, "Per run")
    # The group cell is the mean ± sample sd of the two GenEnv seeds.
    firsts = [lengths[n][0] for n in ("genenv_s0", "genenv_s1")]
    lasts = [lengths[n][-1] for n in ("genenv_s0", "genenv_s1")]
    cell = (f"{statistics.mean(firsts):.3f} ± {statistics.stdev(firsts):.3f} → "
            f"{statistics.mean(lasts):.3f} ± {statistics.stdev(lasts):.3f}")
    assert cell in _row(md, "genenv", "Summary per group")
    p_hat = _scalars(run_dirs["genenv_s0"], "curriculum/p_hat_mean")
    row = _row(md, "genenv_s0", "Per run")
    if p_hat:
        assert f"{p_hat[0]:.3f} → {p_hat[-1]:.3f}" in row
        if len(p_hat) == 2:
            toward = abs(p_hat[-1] - 0.5) < abs(p_hat[0] - 0.5)
            assert row.endswith(f"| {'yes' if toward else 'no'} |")
    else:
        assert "not logged" in row


@pytest.mark.slow
def test_per_family_from_the_pool(made, run_dirs):
    _, md = made
    run = report.load_run(run_dirs["genenv_s0"])
    assert set(run.family_tasks) <= {"weather", "qa_arith"} and run.family_tasks, "no valid generated task"
    section = md.split("### genenv\n", 1)[1].split("###", 1)[0]
    for family in run.family_tasks:
        assert f"| {family} |" in section
    for family in ("weather", "qa_arith"):
        assert f"val/score/{family}" in run.epoch_scalars


@pytest.mark.slow
def test_missing_tensorboard_is_graceful(run_dirs, tmp_path):
    broken = tmp_path / "no_tb"
    broken.mkdir()
    shutil.copy(run_dirs["genenv_s0"] / "config.yaml", broken / "config.yaml")
    out = report.main([f"runs=[{broken}]"])
    assert out == broken / "report"  # one run: the default output is inside it
    md = (out / "report.md").read_text()
    assert "tb/agent missing" in md and "pools/d_env.jsonl missing" in md and "summary.json missing" in md
    assert "not logged" in _row(md, "genenv", "Summary per group")
    assert all((out / name).is_file() for name in PLOTS)


@pytest.mark.parametrize("kind", ["empty_dir", "missing", "file"])
def test_not_a_run_directory_is_one_line_error(tmp_path, kind):
    ok = tmp_path / "ok"  # a (minimal) run directory before the bad path: checked before anything is read
    ok.mkdir()
    (ok / "config.yaml").write_text("seed: 0\n")
    bad = tmp_path / "bad"
    if kind == "empty_dir":
        bad.mkdir()
    elif kind == "file":
        bad.write_text("x")
    with pytest.raises(SystemExit) as exc:
        report.main([f"runs=[{ok},{bad}]", f"out={tmp_path / 'out'}"])
    message = str(exc.value.code)
    assert message.startswith(f"error: {bad}: not a run directory") and "\n" not in message
    assert not (tmp_path / "out").exists()


Event = namedtuple("Event", "wall_time step value")


def test_epoch_mapper_breaks_ties_at_epoch_boundaries():
    # Step 4 ends epoch 0 (logged at t=10) and starts epoch 1 (logged at t=12).
    epoch_of = report.epoch_mapper([Event(1, 0, 0.0), Event(10.001, 4, 0.0), Event(12.001, 4, 1.0),
                                     Event(13, 6, 1.0)])
    assert epoch_of(4, 10.0) == 0 and epoch_of(4, 12.0) == 1
    assert epoch_of(0, 1.0) == 0 and epoch_of(5, 12.5) == 1  # no epoch at step 5: the last one before


def test_grouping_by_everything_but_the_seed(tmp_path):
    def run(name, seed, alpha=0.5, curriculum="genenv"):
        return report.Run(path=tmp_path / name, config={"seed": seed, "run_dir": name, "curriculum": {
            "name": curriculum, "alpha": alpha, "band": None}})

    runs = [run("a", 0), run("b", 1), run("c", 0, alpha=0.3), run("d", 0, curriculum="random")]
    groups = report.group_runs(runs)
    assert [[r.path.name for r in g.runs] for g in groups] == [["a", "b"], ["c"], ["d"]]
    assert groups[0].label != groups[1].label and "curriculum.alpha=0.3" in groups[1].label
    assert groups[2].label == "random" and groups[0].band == report.DEFAULT_BAND
    assert report.group_runs(runs, alpha=0.7, band=0.2)[0].alpha == 0.7
    # what is written after training (the HF export) and why a backend was chosen change no experiment
    kept = run("f", 2)
    kept.config.update(trainer={"save_hf": False}, rollout={"chosen_because": "rollout.backend=vllm was set"})
    assert [r.path.name for r in report.group_runs([runs[0], kept])[0].runs] == ["a", "f"]
    # More than two differing keys: the first run's directory tells same-named groups apart.
    other = run("e", 0, alpha=0.3)
    other.config.update(data={"num_val": 8}, agent={"learning_rate": 0.1})
    labels = [g.label for g in report.group_runs([runs[0], other])]
    assert labels == ["genenv [a]", "genenv [e]"]


def test_paired_difference_by_hand():
    from lightning_genenv.report.stats import paired_difference, t975

    # diffs 0.1, 0.2, 0.3: mean 0.2, sd 0.1, half-width t(2) * 0.1 / sqrt(3) = 4.303 * 0.057735 = 0.24843
    mean, low, high, n = paired_difference([0.5, 0.6, 0.7], [0.4, 0.4, 0.4])
    assert (mean, n) == (pytest.approx(0.2), 3)
    assert (low, high) == (pytest.approx(0.2 - 0.248434, abs=1e-5), pytest.approx(0.2 + 0.248434, abs=1e-5))
    assert paired_difference([1.0], [0.0]) is None  # one pair: no interval
    assert t975(1) == 12.706 and t975(100) == 1.96
    with pytest.raises(ValueError):
        paired_difference([1.0, 2.0], [1.0])


def test_welch_difference_by_hand():
    from lightning_genenv.report.stats import welch_difference

    # a: mean 2, var 1 -> 1/3 per mean; b: mean 0.5, var 1/3 -> 1/12. se^2 = 5/12;
    # df = (5/12)^2 / ((1/3)^2 / 2 + (1/12)^2 / 3) = 3 exactly; half-width t(3) * sqrt(5/12) = 3.182 * 0.645497
    diff, low, high, df = welch_difference([1.0, 2.0, 3.0], [0.0, 0.0, 1.0, 1.0])
    assert (diff, df) == (pytest.approx(1.5), pytest.approx(3.0))
    assert (low, high) == (pytest.approx(1.5 - 2.053971, abs=1e-5), pytest.approx(1.5 + 2.053971, abs=1e-5))
    assert welch_difference([1.0], [0.0, 1.0]) is None  # one value: no variance
    assert welch_difference([1.0, 1.0], [0.0, 0.0]) is None  # no spread at all


def test_clustered_se_and_the_centered_chance_by_hand():
    from lightning_genenv.report.stats import centered_within, clustered_se

    # cluster means 0.5, 1, 0: SD 0.5 (n - 1), over sqrt(3) clusters; the cluster sizes do not weigh
    assert clustered_se([[0.0, 1.0], [1.0, 1.0, 1.0], [0.0]]) == pytest.approx(0.5 / 3 ** 0.5)
    assert clustered_se([[0.25, 0.25], [0.25]]) == 0.0
    # within one SD 0.6827, two 0.9545 (the normal's), and always within a width of 0 never
    assert centered_within(0.1, 0.1) == pytest.approx(0.682689, abs=1e-6)
    assert centered_within(0.05, 0.1) == pytest.approx(0.954500, abs=1e-6)
    assert centered_within(0.05, 0.0) == 0.0


def test_wilson_interval_by_hand():
    from lightning_genenv.report.stats import wilson_interval

    # 8 of 20: p = 0.4, z^2/n = 0.19208, centre (0.4 + 0.09604) / 1.19208 = 0.41612,
    # half 1.96 / 1.19208 * sqrt(0.012 + 0.0024010) = 0.19731
    assert wilson_interval(8, 20) == (pytest.approx(0.21881, abs=1e-4), pytest.approx(0.61342, abs=1e-4))
    # 0 of 8: the interval starts at 0 and is not empty (the normal approximation's would be [0, 0])
    low, high = wilson_interval(0, 8)
    assert low == 0.0 and high == pytest.approx(0.32442, abs=1e-4)
    assert wilson_interval(8, 8)[1] == 1.0 and wilson_interval(8, 8)[0] == pytest.approx(1 - 0.32442, abs=1e-4)
    for bad in ((1, 0), (-1, 5), (6, 5)):
        with pytest.raises(ValueError):
            wilson_interval(*bad)


@pytest.mark.slow
def test_paired_differences_pair_by_seed(made, run_dirs):
    """random against genenv: only seed 0 is in both, so one pair and no interval, with the difference
    of the two runs' last val/reward_mean."""
    _, md = made
    row = _row(md, "random", "Paired differences")
    last = {name: _scalars(run_dirs[name], "val/reward_mean")[-1] for name in ("random_s0", "genenv_s0")}
    assert f"| {report.fmt(last['random_s0'] - last['genenv_s0'])} (1 pair, no interval) |" in row


def test_paired_section_uses_the_whole_held_out_set_by_hand():
    """Three seeds; the final val_full/reward_mean of the two groups differ by 0.1, 0.2, 0.3: mean 0.2, 95% t
    interval 0.2 ± 4.303 x 0.1 / sqrt(3) = [-0.048, 0.448]. The per-epoch subset curve (val/*) is ignored when the
    whole set was logged; a run without val_full falls back to val/* (an older run)."""
    from pathlib import Path

    from lightning_genenv.report.groups import Group
    from lightning_genenv.report.markdown import _paired_section
    from lightning_genenv.report.runs import Run

    def made(seed, full, subset):
        return Run(path=Path(f"r{seed}"), config={"seed": seed},
                   epoch_scalars={"val_full/reward_mean": {-1: 0.0, 5: full}, "val/reward_mean": {5: subset},
                                  "val_full/score": {5: full}})

    ref = Group("grpo", [made(s, 0.4, 0.9) for s in range(3)], alpha=0.5, band=0.1)
    genenv = Group("genenv", [made(s, v, 0.0) for s, v in enumerate([0.5, 0.6, 0.7])], alpha=0.5, band=0.1)
    row = next(line for line in _paired_section([ref, genenv]) if line.startswith("| genenv"))
    assert row.split(" | ")[1] == "0.200 [-0.048, 0.448] (3)"
    old = Run(path=Path("old"), config={"seed": 0}, epoch_scalars={"val/reward_mean": {5: 0.45}})
    row = next(line for line in _paired_section([Group("grpo", [made(0, 0.4, 0.9)], 0.5, 0.1),
                                                 Group("old", [old], 0.5, 0.1)]) if line.startswith("| old"))
    assert row.split(" | ")[1] == "0.050 (1 pair, no interval)"


def test_a_plot_per_benchmark_a_run_validated_on(tmp_path):
    """data=paper logs val/score/<benchmark>: one picture each, with both settings' curves; none for the others."""
    from lightning_genenv.report.groups import Group
    from lightning_genenv.report.plots import benchmarks_logged, plot_all
    from lightning_genenv.report.runs import Run

    def made(seed, curriculum, scores):
        return Run(path=tmp_path / f"{curriculum}{seed}", config={"seed": seed},
                   epoch_scalars={"val/score/api_bank": dict(enumerate(scores, start=-1)),
                                  "val/score/bamboogle": {-1: 0.1, 0: 0.2}})

    groups = [Group(c, [made(s, c, [0.3, 0.4 + s / 10]) for s in range(2)], 0.5, 0.1) for c in ("genenv", "none")]
    assert benchmarks_logged(groups) == ["api_bank", "bamboogle"]
    names = {p.name for p in plot_all(groups, tmp_path)}
    assert {"val_score_api_bank.png", "val_score_bamboogle.png"} <= names and "val_score_bfcl.png" not in names
    assert benchmarks_logged([Group("x", [Run(path=tmp_path, config={})], 0.5, 0.1)]) == []
