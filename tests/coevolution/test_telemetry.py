"""The epoch's rollout metrics as a pure function of its groups."""

import pytest
import torch

from lightning_genenv.coevolution.seed_draw import Seeds
from lightning_genenv.coevolution.telemetry import new_task_metrics, rollout_metrics
from lightning_genenv.metrics import frac_reward_all_zero
from tests.fakes import group, task


def test_frac_reward_zero_std_by_kind_shows_a_stale_base_set():
    # base: 3 groups all solved or all failed (no gradient) and 1 mixed; generated: both mixed; no replay
    rewards = [[1.0] * 4, [0.0] * 4, [1.0] * 4, [1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0], [0.5, 0.0, 0.0, 0.0]]
    groups = [group(task(i), r) for i, r in enumerate(rewards)]
    base, kept = groups[:4], groups[4:]
    m = rollout_metrics(kept, kept, [], base, num_generations=4, rollout_s=2.0)
    assert m["rollout/frac_reward_zero_std/base"] == 0.75
    assert m["rollout/frac_reward_zero_std/generated"] == 0.0
    assert "rollout/frac_reward_zero_std/replay" not in m  # no replayed groups: nothing to measure
    assert m["rollout/frac_reward_zero_std"] == 0.5  # the whole batch: 3 of 6 groups
    assert m["rollout/frac_reward_all_zero/base"] == 0.25  # of the 3 stale base groups, 1 all failed, 2 all solved
    assert m["rollout/frac_reward_all_zero/generated"] == 0.0
    assert m["rollout/num_tasks/base"] == 4.0 and m["rollout/reward/base"] == 9 / 16


def test_the_timers_clock_is_chosen_by_the_environment_once():
    """``LIGHTNING_GENENV_TIMER_CLOCK=cpu`` (bench/epoch_profile.py --clock cpu) times phases in the process's CPU
    time; an unknown name is refused at import, by name."""
    import os
    import subprocess
    import sys

    code = "from lightning_genenv.coevolution import telemetry; print(telemetry.clock.__name__)"

    def run(value):
        env = {**os.environ, "LIGHTNING_GENENV_TIMER_CLOCK": value}
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)

    assert run("cpu").stdout.strip() == "process_time" and run("wall").stdout.strip() == "perf_counter"
    bad = run("sundial")
    assert bad.returncode != 0
    assert "LIGHTNING_GENENV_TIMER_CLOCK='sundial': must be one of ['cpu', 'wall']" in bad.stderr


def test_frac_reward_all_zero_counts_only_groups_where_every_attempt_scored_0():
    # all failed; all partial credit (zero std, not failed); mixed
    rewards = torch.tensor([0.0, 0.0, 0.5, 0.5, 0.0, 1.0])
    assert frac_reward_all_zero(rewards, 2).item() == pytest.approx(1 / 3)


def test_the_replayed_seeds_and_the_p_hat_they_were_picked_nearest_are_logged():
    replayed = [task(1, source="generated", epoch=0), task(2, source="generated", epoch=0)]
    assert new_task_metrics(Seeds([task(0)], replayed, 0.05), [], 1.0) == {"sim/seeds_replayed": 2,
                                                                             "sim/seed_replay_target": 0.05}
    assert "sim/seed_replay_target" not in new_task_metrics(Seeds([task(0)], replayed), [], 1.0)  # in band
