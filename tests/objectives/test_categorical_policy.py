"""Every simulator objective, in the one place a curriculum learner must succeed: a categorical policy over
difficulty against the calibrated solver's success law (:mod:`tests.objectives.categorical`). From a start whose
mean ``d`` is about 7, too hard (``d0 = 3``: success about 0.03) or too easy (``d0 = 11``: about 0.97), each
objective must bring the policy's mean success within 0.1 of ``α = 0.5`` in 150 steps of 32 generations.

The paper's RWR at its settings (``lam = 1``, ``k_min = 0.1``, ``kl_coef = 0.1``) passes too, from both sides: with
150 Adam steps on a policy this small, imitating the tasks solved at least once, against the KL to the start, is
enough. It is the slowest from the too-easy side (it imitates the too-easy tasks with weights within e of the
others'), and ends furthest from ``α`` there."""

import pytest
import torch

from lightning_genenv.objectives import OBJECTIVES
from tests.objectives.categorical import START, D, expected, train

SLOPE = 2.0


@pytest.mark.parametrize("d0, success", [(3.0, 0.03), (11.0, 0.97)])
def test_the_start_is_far_from_alpha(d0, success):
    assert abs(expected(START, d0, SLOPE)[0] - 7.0) < 1e-6
    assert expected(START, d0, SLOPE)[1] == pytest.approx(success, abs=0.01)


@pytest.mark.parametrize("name", sorted(OBJECTIVES))
@pytest.mark.parametrize("d0", [3.0, 11.0])
def test_each_objective_learns_the_curriculum(name, d0):
    d, success = expected(train([f"simulator.objective={name}"], d0=d0), d0, SLOPE)
    assert abs(success - 0.5) <= 0.1, (name, d0, d, success)


@pytest.mark.parametrize("d0", [3.0, 11.0])
def test_grpo_with_imitation_learns_it_and_holds_the_level_tighter(d0):
    """An imitation term on the in-band draws (``simulator.imitate_in_band``) beside the policy gradient: the
    policy meets α as plain ``grpo`` does, with less of its mass off the level (a smaller spread of ``d``)."""
    def spread(logits):
        probs = torch.softmax(logits.double(), 0)
        mean = float((probs * D).sum())
        return float((probs * (D - mean) ** 2).sum()) ** 0.5

    plain = train(["simulator.objective=grpo"], d0=d0)
    imitating = train(["simulator.objective=grpo", "simulator.imitate_in_band=0.5"], d0=d0)
    assert abs(expected(imitating, d0, SLOPE)[1] - 0.5) <= 0.1
    assert spread(imitating) < 0.95 * spread(plain), (spread(imitating), spread(plain))


def test_an_untrained_policy_stays_where_it_started():
    """The control: zero learning rate, the same draws; the success rate is the start's."""
    for d0 in (3.0, 11.0):
        assert expected(train(["simulator.objective=grpo"], d0=d0, lr=0.0), d0, SLOPE) == expected(START, d0, SLOPE)


def test_the_group_objectives_end_nearer_alpha_than_the_papers_rwr_from_the_easy_side():
    errors = {name: abs(expected(train([f"simulator.objective={name}"], d0=11.0), 11.0, SLOPE)[1] - 0.5)
              for name in OBJECTIVES}
    assert max(errors["grpo"], errors["group_rwr"], errors["reinforce"]) < errors["rwr"], errors


@pytest.mark.parametrize("memory", [0.0, 0.5])
@pytest.mark.parametrize("d0", [3.0, 11.0])
def test_grpo_with_a_target_gain_learns_it_too(d0, memory):
    """``R_env`` aimed past α by each step's error (``curriculum.target_gain``), and with the earlier steps' error
    carried (``curriculum.target_memory``): the policy still meets α. This policy has no spread over levels for the
    gain to correct (no prior, no base seeds), so it ends where plain ``grpo`` does; the calibrated solver's runs are
    its test (RESULTS.md)."""
    overrides = ["simulator.objective=grpo", "curriculum.target_gain=1", f"curriculum.target_memory={memory}"]
    d, success = expected(train(overrides, d0=d0), d0, SLOPE)
    assert abs(success - 0.5) <= 0.1, (d0, d, success)
