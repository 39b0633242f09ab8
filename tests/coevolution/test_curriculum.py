"""Curriculum scoring as a pure function: p-hat, R_env, the filter, the RWR set and the kept groups,
from values alone (no callback, no data module)."""

import math

import pytest

from lightning_genenv.coevolution import score_tasks
from lightning_genenv.coevolution.curriculum import epoch_p_bars
from lightning_genenv.config import compose
from lightning_genenv.objectives import make_objective
from lightning_genenv.objectives.shaping import Shaping
from lightning_genenv.pool_records import EnvRecord
from lightning_genenv.task_writing import GeneratedTask
from tests.fakes import group, solved, task


def score(records, groups, share, *args, earlier=(), cur=None, p_bars=()):
    """score_tasks with the objective and shaping of ``model=tiny`` composed with ``args``."""
    cfg = compose(["model=tiny", *args])
    cur = cfg.curriculum if cur is None else cur
    return score_tasks(records, groups, cur, success_threshold=1.0, share=share, earlier=list(earlier),
                       objective=make_objective(cfg.simulator, cur), shaping=Shaping.from_config(cfg.simulator),
                       p_bars=p_bars)


def test_score_tasks_is_pure_and_complete():
    cur = compose(["model=tiny"]).curriculum  # alpha 0.5, beta 10, k_min 0.1
    records = [GeneratedTask(3, "s", "simulator", [7], [8, 9], "x", task(i), None) for i in range(4)]
    records.insert(1, GeneratedTask(3, "s", "simulator", [7], [8], "bad", None, "not_json"))
    valid = [r for r in records if r.task is not None]
    groups = [group(r.task, solved(k, 4)) for r, k in zip(valid, [0, 1, 2, 4])]
    before = [g.rewards[:] for g in groups]
    out = score(records, groups, 2, cur=cur)
    assert [g.rewards for g in groups] == before  # nothing changed in place
    assert out.scores[1] is None and [s.p_hat for s in out.scores if s] == [0.0, 0.25, 0.5, 1.0]
    assert [s.trained_on for s in out.scores if s] == [False, True, True, True]
    assert out.num_trained_on == 3 and len(out.train_records) == 3
    assert [g.task.id for g in out.kept] == ["t2", "t1"]  # nearest to alpha first, at most share
    r_envs = [math.exp(-10 * (p - 0.5) ** 2) for p in (0.25, 0.5, 1.0)]
    assert [r.weight for r in out.sim_records] == pytest.approx([3 * math.exp(r) / sum(map(math.exp, r_envs))
                                                                 for r in r_envs])
    assert out.stats["curriculum/valid_tasks"] == 4 and out.stats["curriculum/kept_tasks"] == 3
    assert len(out.env_records) == len(records) and [r.task for r in out.env_records] == [r.task for r in records]
    rec = out.env_records[1].to_json()
    assert rec["task"] is None and rec["attempted"] is False and rec["r_env"] == 0.0 and rec["p_hat"] is None
    assert out.env_records[2].p_hat == 0.25 and out.env_records[2].trained_on
    assert [r.to_json()["p_hat"] for r in out.train_records] == [0.25, 0.5, 1.0]
    assert list(out.env_records[0].to_json()) == [
        "epoch", "seed_id", "source", "prompt_ids", "completion_ids", "text", "task", "reason", "novelty", "attempted",
        "p_hat", "r_env", "trained_on"]  # the D_env line's field order


def test_in_band_width_changes_the_in_band_fraction_and_nothing_else():
    """curriculum.in_band_width is measured, never filtered on: over 8 attempts, p-hats 0.25 / 0.5 / 0.75 / 1.0 are 1
    of 4 within 0.1 of alpha (rounded up to the grid: 1/8) and 3 of 4 within 0.3 (3/8); the scores, the filter, the
    RWR set and the kept groups are the same. With curriculum.band set, the in-band fraction counts that band
    instead."""
    records = [GeneratedTask(3, "s", "simulator", [7], [8, 9], "x", task(i), None) for i in range(4)]
    groups = [group(r.task, solved(k, 8)) for r, k in zip(records, [2, 4, 6, 8])]
    narrow, wide, banded = (score(records, groups, 4, *args)
                            for args in ([], ["curriculum.in_band_width=0.3"],
                                         ["curriculum.in_band_width=0.3", "curriculum.band=0.1"]))
    assert narrow.stats.pop("curriculum/in_band_fraction") == 0.25
    assert wide.stats.pop("curriculum/in_band_fraction") == 0.75
    assert narrow.stats == wide.stats and narrow.scores == wide.scores and narrow.kept == wide.kept
    assert narrow.train_records == wide.train_records and narrow.sim_records == wide.sim_records
    assert banded.stats["curriculum/in_band_fraction"] == 0.25 and banded.num_trained_on == 1  # band filters


def test_target_gain_aims_each_tasks_reward_past_alpha_by_the_epochs_error_and_measures_against_alpha():
    """curriculum.target_gain: R_env aims at alpha - gain (p-bar - alpha); the filter, the kept groups, the in-band
    test and every curriculum measure stay at alpha, and the target is logged."""
    records = [GeneratedTask(3, "s", "simulator", [7], [8, 9], "x", task(i), None) for i in range(4)]
    groups = [group(r.task, solved(k, 8)) for r, k in zip(records, [2, 4, 6, 8])]  # p-bar 0.625, alpha 0.5
    plain = score(records, groups, 4)
    aimed = score(records, groups, 4, "curriculum.target_gain=1")
    target = 0.5 - 1.0 * (0.625 - 0.5)
    assert [s.r_env for s in aimed.scores] == pytest.approx([math.exp(-10 * (p - target) ** 2)
                                                             for p in (0.25, 0.5, 0.75, 1.0)])
    assert [s.r_env for s in plain.scores] == pytest.approx([math.exp(-10 * (p - 0.5) ** 2)
                                                             for p in (0.25, 0.5, 0.75, 1.0)])
    assert aimed.stats.pop("curriculum/reward_target") == pytest.approx(0.375)
    assert "curriculum/reward_target" not in plain.stats
    for key in ("curriculum/p_hat_mean_error", "curriculum/p_hat_abs_error", "curriculum/in_band_fraction"):
        assert aimed.stats[key] == plain.stats[key]
    assert aimed.kept == plain.kept and aimed.train_records == plain.train_records
    assert aimed.sim_records != plain.sim_records  # the simulator's weights follow the moved reward


def test_target_memory_carries_the_earlier_epochs_p_bar_read_from_d_env():
    """curriculum.target_memory: the target takes the earlier epochs' p-bar, each epoch's mean over its attempted
    D_env records (epoch_p_bars: an unattempted record, and an epoch with none attempted, count for nothing)."""
    earlier = [EnvRecord(e, "s", "simulator", [1], [2], "x", task(i), None, attempted=True, p_hat=p)
               for i, (e, p) in enumerate([(0, 0.5), (0, 1.0), (1, 0.25), (1, 0.75)])]
    earlier += [EnvRecord(1, "s", "simulator", [1], [2], "x", None, "not_json"),
                EnvRecord(2, "s", "simulator", [1], [2], "x", task(9), None)]
    assert epoch_p_bars(list(reversed(earlier))) == [0.75, 0.5]
    records = [GeneratedTask(3, "s", "simulator", [7], [8, 9], "x", task(i), None) for i in range(4)]
    groups = [group(r.task, solved(k, 8)) for r, k in zip(records, [2, 4, 6, 8])]  # p-bar 0.625, alpha 0.5
    args = ("curriculum.target_gain=1", "curriculum.target_memory=0.5")
    carried = score(records, groups, 4, *args, p_bars=epoch_p_bars(earlier))
    s = 0.125 + 0.5 * (0.0 + 0.5 * 0.25)  # this epoch's error, plus the faded earlier ones
    assert carried.stats["curriculum/reward_target"] == pytest.approx(0.5 - s)
    assert score(records, groups, 4, *args).stats["curriculum/reward_target"] == pytest.approx(0.375)  # none before
    same_epoch_only = score(records, groups, 4, "curriculum.target_gain=1", p_bars=epoch_p_bars(earlier))
    assert same_epoch_only.stats["curriculum/reward_target"] == pytest.approx(0.375)  # memory 0 reads none of them


def test_pool_rwr_set_weights_earlier_fitted_generations_with_this_epochs():
    """simulator.rwr_set=pool: the earlier D_env records that were fitted (the simulator's, trained_on) join this
    epoch's RWR set, first, and the weights are self-normalized over all of them; the rest of D_env does not."""
    records = [GeneratedTask(3, "s", "simulator", [7], [8, 9], "x", task(i), None) for i in range(2)]
    groups = [group(r.task, solved(k, 4)) for r, k in zip(records, [2, 4])]
    earlier = [EnvRecord(2, "s", source, [p], [c], "x", task(p), None, r_env=r_env, trained_on=trained_on)
               for p, c, r_env, trained_on, source in [(1, 2, 0.2, True, "simulator"), (3, 4, 1.0, False, "simulator"),
                                                       (5, 6, 0.9, True, "static")]]
    alone = score(records, groups, 2, "simulator.rwr_set=pool")
    pooled = score(records, groups, 2, "simulator.rwr_set=pool", earlier=earlier)
    assert [r.completion_ids for r in pooled.sim_records] == [[2], [8, 9], [8, 9]]
    r_envs = [0.2, 1.0, math.exp(-10 * 0.25)]
    assert [r.weight for r in pooled.sim_records] == pytest.approx([3 * math.exp(r) / sum(map(math.exp, r_envs))
                                                                    for r in r_envs])
    assert pooled.stats["sim/rwr_ess"] == pytest.approx(sum(r.weight for r in pooled.sim_records) ** 2
                                                        / sum(r.weight ** 2 for r in pooled.sim_records))
    # everything but the RWR set and its weight statistics is this epoch's alone
    assert pooled.scores == alone.scores and pooled.train_records == alone.train_records
    assert pooled.kept == alone.kept and len(alone.sim_records) == 2


def test_reinforce_weighs_every_generation_of_the_epoch_by_its_signed_advantage():
    """simulator.objective=reinforce: the invalid generation (R_env 0) and the one below k_min join the set, and the
    weights are (R - mean) / std over all of them, hand-computed: negative for the bad ones, summing to 0."""
    records = [GeneratedTask(3, "s", "simulator", [7], [8, 9], "x", task(i), None) for i in range(3)]
    records.insert(1, GeneratedTask(3, "s", "simulator", [7], [5], "bad", None, "near_duplicate"))
    valid = [r for r in records if r.task is not None]
    groups = [group(r.task, solved(k, 4)) for r, k in zip(valid, [0, 2, 4])]
    out = score(records, groups, 2, "simulator.objective=reinforce")
    r = [math.exp(-2.5), 0.0, 1.0, math.exp(-2.5)]  # p-hat 0, invalid, 0.5, 1.0 in the records' order
    m = sum(r) / 4
    sd = math.sqrt(sum((x - m) ** 2 for x in r) / 3)
    assert [s.completion_ids for s in out.sim_records] == [[8, 9], [5], [8, 9], [8, 9]]
    assert [s.weight for s in out.sim_records] == pytest.approx([(x - m) / (sd + 1e-4) for x in r])
    assert sum(s.weight for s in out.sim_records) == pytest.approx(0.0, abs=1e-6)
    assert out.stats["sim/positive_weight_fraction"] == 0.25 and "sim/rwr_ess" not in out.stats
    # the filter, the D_train records and the kept groups are RWR's: only the simulator's set differs
    rwr = score(records, groups, 2)
    assert out.scores == rwr.scores and out.train_records == rwr.train_records and out.kept == rwr.kept
    # every generation equally good: nothing to push toward or away from
    same = score(records[2:3], groups[1:2], 2, "simulator.objective=reinforce")
    assert same.sim_records == []


def test_reinforce_needs_the_epochs_own_set():
    from lightning_genenv.config import ConfigError

    with pytest.raises(ConfigError, match="simulator.objective=reinforce .* needs simulator.rwr_set=epoch"):
        compose(["model=tiny", "simulator.objective=reinforce", "simulator.rwr_set=pool"])
