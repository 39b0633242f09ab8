"""The epoch's seeds (lightning_genenv/coevolution/seed_draw.py): the base sample, and with simulator.seed_replay
the simulator's own in-band tasks of the last epochs in place of some of it."""

import random

import pytest

from lightning_genenv.coevolution.seed_draw import Seeds, draw_seeds, nearest_target, on_target
from lightning_genenv.config import ConfigError, compose
from lightning_genenv.pool_records import EnvRecord
from tests.fakes import task

BASE = [task(i) for i in range(20)]


def _env(epoch: int, i: int, p_hat: float | None, source: str = "simulator", valid: bool = True) -> EnvRecord:
    t = task(100 + i, source="generated", epoch=epoch) if valid else None
    return EnvRecord(epoch, "t0", source, None, None, None, t, None if valid else "not_json",
                     attempted=p_hat is not None, p_hat=p_hat)


def _cfg(*args):
    return compose(["model=tiny", "curriculum.alpha=0.5", *args])  # in band at n = 8: 3/8, 4/8, 5/8


def test_on_target_keeps_the_window_s_in_band_simulator_tasks_in_pool_order():
    pool = [_env(0, 0, 0.5), _env(1, 1, 0.375), _env(1, 2, 0.75), _env(2, 3, 0.625), _env(2, 4, None),
            _env(2, 5, 0.5, source="static"), _env(2, 6, None, valid=False), _env(3, 7, 0.5)]
    # at epoch 3 with a window of 2: epochs 1 and 2; 0.75 is out of band, 4 not attempted, 5 static, 6 invalid, 7
    # is this epoch's own
    assert [t.id for t in on_target(pool, 3, 2, 0.5, 0.1, 8)] == ["t101", "t103"]
    assert [t.id for t in on_target(pool, 3, 3, 0.5, 0.1, 8)] == ["t100", "t101", "t103"]
    assert on_target(pool, 0, 2, 0.5, 0.1, 8) == []


def test_without_replay_the_draw_is_the_base_sample_and_the_rng_moves_as_before():
    cfg = _cfg()
    assert cfg.simulator.seed_replay == 0.0
    pool = [_env(0, i, 0.5) for i in range(10)]
    ours, theirs = random.Random(7), random.Random(7)
    assert draw_seeds(BASE, pool, 1, 8, cfg.simulator, cfg.curriculum, 8, ours) == Seeds(theirs.sample(BASE, 8), [])
    assert ours.random() == theirs.random()
    assert len(draw_seeds(BASE[:5], pool, 1, 8, cfg.simulator, cfg.curriculum, 8, ours).tasks) == 5  # a smaller base


@pytest.mark.parametrize("in_band_tasks, replayed", [(8, 5), (3, 3), (0, 0)])
def test_replay_takes_its_share_from_the_on_target_tasks_and_the_base_fills_the_rest(in_band_tasks, replayed):
    cfg = _cfg("simulator.seed_replay=0.5")
    pool = [_env(0, i, 0.5) for i in range(in_band_tasks)] + [_env(0, 50 + i, 1.0) for i in range(5)]
    seeds = draw_seeds(BASE, pool, 1, 10, cfg.simulator, cfg.curriculum, 8, random.Random(0))
    assert len(seeds.tasks) == 10 and len({s.id for s in seeds.tasks}) == 10
    assert len(seeds.replayed) == replayed and seeds.tasks[10 - replayed:] == seeds.replayed
    assert all(s.source == "seed" for s in seeds.base)
    assert all(100 <= int(s.id[1:]) < 100 + in_band_tasks for s in seeds.replayed)


def test_all_seeds_replayed_when_there_are_enough():
    cfg = _cfg("simulator.seed_replay=1.0", "simulator.seed_replay_epochs=1")
    pool = [_env(0, i, 0.5) for i in range(4)] + [_env(1, 10 + i, 0.625) for i in range(12)]
    seeds = draw_seeds(BASE, pool, 2, 10, cfg.simulator, cfg.curriculum, 8, random.Random(0))
    assert seeds.base == [] and all(s.epoch == 1 for s in seeds.replayed) and len({s.id for s in seeds.tasks}) == 10


@pytest.mark.parametrize("arg, key", [("simulator.seed_replay=1.5", "simulator.seed_replay"),
                                      ("simulator.seed_replay_epochs=0", "simulator.seed_replay_epochs")])
def test_replay_settings_out_of_range_are_refused(arg, key):
    with pytest.raises(ConfigError, match=key):
        _cfg(arg)


@pytest.mark.parametrize("curriculum", ["static", "none"])
def test_replay_without_the_simulator_writing_is_refused(curriculum):
    with pytest.raises(ConfigError, match="simulator.seed_replay=0.5 replays the simulator's own tasks"):
        _cfg(f"curriculum={curriculum}", "simulator.seed_replay=0.5")


def test_nearest_takes_the_window_s_tasks_nearest_alpha_in_band_or_not_and_never_p_hat_0_or_1():
    # alpha 0.5: 0.375 and 0.625 tie at 1/8, 0.25 is 2/8 away; 0 and 1 never count; epoch 0 is out of the window
    pool = [_env(0, 0, 0.5), _env(1, 1, 0.25), _env(1, 2, 0.0), _env(1, 3, 1.0), _env(2, 4, 0.625),
            _env(2, 5, 0.375), _env(2, 6, None), _env(2, 7, 0.125), _env(2, 8, 0.5, source="static")]
    picked = [t.id for t in nearest_target(pool, 3, 2, 0.5, 3, random.Random(0))]
    assert sorted(picked[:2]) == ["t104", "t105"] and picked[2] == "t101"
    assert [t.id for t in nearest_target(pool, 3, 2, 0.5, 10, random.Random(0))][2:] == ["t101", "t107"]
    orders = {tuple(t.id for t in nearest_target(pool, 3, 2, 0.5, 2, random.Random(s))) for s in range(20)}
    assert orders == {("t104", "t105"), ("t105", "t104")}  # a tie is drawn, not settled by D_env's order


def test_nearest_fills_the_replay_share_while_nothing_is_in_band():
    cfg = _cfg("simulator.seed_replay=0.5", "simulator.seed_replay_pick=nearest")
    pool = [_env(0, i, 0.875) for i in range(8)] + [_env(0, 20 + i, 1.0) for i in range(5)]
    seeds = draw_seeds(BASE, pool, 1, 10, cfg.simulator, cfg.curriculum, 8, random.Random(0))
    assert len(seeds.replayed) == 5 and len(seeds.base) == 5 and len({s.id for s in seeds.tasks}) == 10
    assert all(100 <= int(s.id[1:]) < 108 for s in seeds.replayed)
    in_band = compose(["model=tiny", "curriculum.alpha=0.5", "simulator.seed_replay=0.5"])
    assert draw_seeds(BASE, pool, 1, 10, in_band.simulator, in_band.curriculum, 8, random.Random(0)).replayed == []
    few = draw_seeds(BASE, pool[:2], 1, 10, cfg.simulator, cfg.curriculum, 8, random.Random(0))
    assert len(few.replayed) == 2 and len(few.base) == 8


def test_a_replay_pick_without_replay_is_refused():
    with pytest.raises(ConfigError, match="simulator.seed_replay_pick=nearest picks the replayed seeds"):
        _cfg("simulator.seed_replay_pick=nearest")


@pytest.mark.parametrize("gain, filler, aim, picked", [
    (1, [0.05], 0.2, "t102"),  # last p-bar 0.2, on alpha: nearest 0.2 itself
    (1, [1.0] * 3, 0.05, "t101"),  # 0.625, too easy: 0.2 - 0.425, kept within [0.05, 0.95]: the hardest
    (1, [0.0] * 9, 0.3375, "t103"),  # 0.0625, too hard: 0.2 + 0.1375, an easier one
    (0, [1.0] * 3, 0.2, "t102")])  # no gain: alpha whatever the error
def test_the_replay_gain_aims_the_pick_past_alpha_against_the_last_epoch_s_error(gain, filler, aim, picked):
    cfg = _cfg("curriculum.alpha=0.2", "simulator.seed_replay=0.1", "simulator.seed_replay_pick=nearest",
               f"simulator.seed_replay_gain={gain}")
    # epoch 1, the last, writes 1/8, 2/8 and 3/8; the attempted static tasks beside them set its mean success
    pool = [_env(0, 0, 0.9), _env(1, 1, 0.125), _env(1, 2, 0.25), _env(1, 3, 0.375)]
    pool += [_env(1, 10 + i, p, source="static") for i, p in enumerate(filler)]
    seeds = draw_seeds(BASE, pool, 2, 10, cfg.simulator, cfg.curriculum, 8, random.Random(0))
    assert seeds.aim == pytest.approx(aim) and [s.id for s in seeds.replayed] == [picked]


def test_a_replay_gain_without_the_nearest_pick_is_refused():
    with pytest.raises(ConfigError, match="simulator.seed_replay_gain=1.0 moves the point"):
        _cfg("simulator.seed_replay=0.5", "simulator.seed_replay_gain=1")
