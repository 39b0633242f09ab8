"""Each simulator objective's fit set and loss on hand-computed cases, the reward shaping, the seed groups, and the
registry that the config schema reads."""

import math

import pytest
import torch

from lightning_genenv.config import ConfigError, compose
from lightning_genenv.objectives import OBJECTIVES, make_objective
from lightning_genenv.objectives.base import Scored, seed_advantages
from lightning_genenv.objectives.shaping import Shaping, shaping_stats


def scored(seed, reward, p_hat, passed=True, ids=(9,)):
    return Scored([1], list(ids), seed, reward, p_hat, passed)


def objective(*overrides):
    cfg = compose(["model=tiny", "simulator.num_variations=4", *overrides])
    return make_objective(cfg.simulator, cfg.curriculum)


def advantages(rewards):
    m = sum(rewards) / len(rewards)
    sd = math.sqrt(sum((r - m) ** 2 for r in rewards) / (len(rewards) - 1))
    return [(r - m) / (sd + 1e-4) for r in rewards]


def test_seed_advantages_compare_a_seeds_candidates_and_drop_groups_without_a_direction():
    s = [scored("a", 1.0, 0.5), scored("a", 0.0, None), scored("b", 0.3, 0.2), scored("b", 0.3, 0.2),
         scored("c", 0.7, 0.5), scored("a", 0.5, 0.25)]
    out = seed_advantages(s)
    a = advantages([1.0, 0.0, 0.5])
    assert out[0] == pytest.approx(a[0]) and out[1] == pytest.approx(a[1]) and out[5] == pytest.approx(a[2])
    assert out[2] is None and out[3] is None  # every candidate the same
    assert out[4] is None  # a single candidate


def test_rwr_weights_the_filtered_generations_and_optionally_drops_the_easiest():
    s = [scored("a", 0.2, 0.25), scored("a", 1.0, 0.5), scored("b", 0.08, 1.0), scored("b", 0.08, 0.0, passed=False),
         scored("c", 0.0, None, passed=False)]
    fit = objective().fit_set(s, [])
    exps = [math.exp(r) for r in (0.2, 1.0, 0.08)]
    assert [r.weight for r in fit.records] == pytest.approx([3 * e / sum(exps) for e in exps])
    two_sided = objective("simulator.rwr_two_sided=true").fit_set(s, [])  # p-hat 1.0 > 1 - k_min: dropped
    exps = exps[:2]
    assert [r.weight for r in two_sided.records] == pytest.approx([2 * e / sum(exps) for e in exps])


def test_group_rwr_imitates_attempted_candidates_with_weights_exp_advantage_over_tau():
    s = [scored("a", 1.0, 0.5, ids=(1,)), scored("a", -1.0, None, passed=False, ids=(2,)),
         scored("a", 0.2, 0.0, passed=False, ids=(3,)), scored("b", 0.5, 0.5, ids=(4,)),
         scored("b", 0.5, 0.5, ids=(5,))]
    fit = objective("simulator.objective=group_rwr", "simulator.tau=0.5").fit_set(s, [])
    a = advantages([1.0, -1.0, 0.2])
    exps = [math.exp(a[0] / 0.5), math.exp(a[2] / 0.5)]  # the invalid one is not imitated; seed b has no direction
    assert [r.completion_ids for r in fit.records] == [[1], [3]]
    assert [r.weight for r in fit.records] == pytest.approx([2 * e / sum(exps) for e in exps])
    assert fit.stats["sim/informative_fraction"] == pytest.approx(3 / 5)


def test_grpo_pushes_every_candidate_of_an_informative_seed_by_its_advantage():
    s = [scored("a", 1.0, 0.5, ids=(1,)), scored("a", -1.0, None, passed=False, ids=(2,)),
         scored("b", 0.5, 0.5, ids=(4,)), scored("b", 0.5, 0.5, ids=(5,))]
    obj = objective("simulator.objective=grpo", "simulator.kl_coef=0.5")
    fit = obj.fit_set(s, [])
    assert [r.completion_ids for r in fit.records] == [[1], [2]]
    assert [r.weight for r in fit.records] == pytest.approx(advantages([1.0, -1.0]))
    # the loss: -(A * ratio) per token, each sequence's mean, the mean over sequences, + kl_coef * k3 KL; ratio 1
    logp = torch.tensor([[-1.0, -2.0], [-0.5, -3.0]], requires_grad=True)
    init = torch.tensor([[-1.5, -2.0], [-0.5, -2.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    adv = torch.tensor([0.7, -0.7])
    loss, metrics = obj.loss(logp, mask, adv, init)
    k3 = lambda lp, ref: math.exp(ref - lp) - (ref - lp) - 1  # noqa: E731
    kl_rows = [(k3(-1.0, -1.5) + k3(-2.0, -2.0)) / 2, k3(-0.5, -0.5)]
    expected = (-0.7 + 0.5 * kl_rows[0] + 0.7 + 0.5 * kl_rows[1]) / 2
    assert float(loss) == pytest.approx(expected, rel=1e-6)
    loss.backward()  # the policy gradient: d/dlogp of -A * exp(logp - sg(logp)) is -A, per token over its count
    assert logp.grad[1, 1] == 0.0 and float(logp.grad[1, 0]) == pytest.approx(0.7 / 2 + 0.5 * 0.0 / 2, abs=1e-6)


def test_grpo_imitation_adds_to_the_advantage_of_each_in_band_generation():
    s = [Scored([1], [1], "a", 1.0, 0.5, True, True), Scored([1], [2], "a", -1.0, None, False, False),
         Scored([1], [3], "b", 0.5, 0.375, True, True), Scored([1], [4], "b", 0.5, 0.625, True, True),
         Scored([1], [5], "c", 0.9, 0.25, True, False), Scored([1], [6], "c", 0.0, 0.0, False, False)]
    fit = objective("simulator.objective=grpo", "simulator.imitate_in_band=0.5").fit_set(s, [])
    a, c = advantages([1.0, -1.0]), advantages([0.9, 0.0])
    # seed b's candidates score the same (no direction): in band, each is imitated with weight 0.5 alone
    assert [r.completion_ids for r in fit.records] == [[1], [2], [3], [4], [5], [6]]
    assert [r.weight for r in fit.records] == pytest.approx([a[0] + 0.5, a[1], 0.5, 0.5, c[0], c[1]])
    assert fit.stats["sim/imitated_fraction"] == pytest.approx(3 / 6)
    assert fit.stats["sim/informative_fraction"] == pytest.approx(4 / 6)  # the groups' own, before imitation
    plain = objective("simulator.objective=grpo").fit_set(s, [])
    assert [r.weight for r in plain.records] == pytest.approx([a[0], a[1], c[0], c[1]])
    assert "sim/imitated_fraction" not in plain.stats
    with pytest.raises(ConfigError, match="imitate_in_band"):
        objective("simulator.imitate_in_band=0.5")  # rwr has no advantages to add to


def test_reinforce_weighs_every_generation_by_its_advantage_over_the_epoch():
    s = [scored("a", 1.0, 0.5), scored("b", 0.0, None, passed=False), scored("c", 0.5, 0.25)]
    fit = objective("simulator.objective=reinforce").fit_set(s, [])
    assert [r.weight for r in fit.records] == pytest.approx(advantages([1.0, 0.0, 0.5]), rel=1e-5)
    assert objective("simulator.objective=reinforce").fit_set(s[:1], []).records == []


def test_rwr_loss_is_the_weighted_nll_plus_the_kl():
    logp = torch.tensor([[-1.0, -2.0], [-0.5, -3.0]])
    init = torch.tensor([[-1.5, -2.0], [-0.5, -2.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    loss, metrics = objective("simulator.kl_coef=0.5").loss(logp, mask, torch.tensor([1.5, 0.5]), init)
    k3 = lambda lp, ref: math.exp(ref - lp) - (ref - lp) - 1  # noqa: E731
    kl = ((k3(-1.0, -1.5) + 0.0) / 2 + 0.0) / 2
    assert float(loss) == pytest.approx((1.5 * 1.5 + 0.5 * 0.5) / 2 + 0.5 * kl, rel=1e-6)
    assert float(metrics["kl"]) == pytest.approx(kl, rel=1e-6)


@pytest.mark.parametrize("p_hat, near, expected", [
    (None, False, -1.0),  # invalid
    (None, True, -1.5),  # a near-duplicate, rejected: invalid, and penalized
    (0.0, False, -0.5),  # never solved
    (1.0, False, 0.0),  # always solved
    (0.5, False, 0.9),  # R_env
    (0.5, True, 0.4),  # an attempted near-duplicate
])
def test_each_shaping_value(p_hat, near, expected):
    shaping = Shaping(unsolved=-0.5, solved=0.0, invalid=-1.0, near_duplicate_penalty=0.5)
    assert shaping.reward(p_hat, 0.9, near) == pytest.approx(expected)


def test_unset_shaping_is_r_env_and_zero_for_invalid():
    assert Shaping().reward(0.0, 0.08, True) == 0.08 and Shaping().reward(None, 0.0, False) == 0.0
    stats = shaping_stats(Shaping(unsolved=-0.5), [None, 0.0, 0.5, 1.0], [False, True, False, False],
                          [0.0, -0.5, 1.0, 0.08])
    assert stats["sim/reward_case/invalid"] == 0.25 and stats["sim/reward_case/unsolved"] == 0.25
    assert stats["sim/reward_case/solved"] == 0.0 and stats["sim/reward_case/r_env"] == 0.5
    assert stats["sim/reward_case/near_duplicate"] == 0.25 and stats["sim/reward_mean"] == pytest.approx(0.145)


def test_expected_reward_averages_the_shaped_reward_over_the_binomial_attempts():
    r_env = {0.0: 0.2, 0.5: 1.0, 1.0: 0.3}.__getitem__  # R_env at p-hat 0, 1/2, 1 of two attempts
    # two attempts at p = 0.3: k = 0, 1, 2 with probabilities 0.49, 0.42, 0.09
    assert Shaping().expected_reward(0.3, 2, r_env) == pytest.approx(0.49 * 0.2 + 0.42 * 1.0 + 0.09 * 0.3)
    assert Shaping(unsolved=0.0, solved=0.0).expected_reward(0.3, 2, r_env) == pytest.approx(0.42)
    assert Shaping(unsolved=-1.0).expected_reward(0.0, 2, r_env) == -1.0
    with pytest.raises(ValueError, match="attempts >= 1"):
        Shaping().expected_reward(1.2, 2, r_env)


def test_with_unsolved_scored_zero_the_expected_reward_peaks_above_a_small_alpha():
    def r_env(p_hat):
        return math.exp(-10.0 * (p_hat - 0.2) ** 2)

    shaping = Shaping(unsolved=0.0, solved=0.0)
    grid = [i / 100 for i in range(1, 100)]
    best = max(grid, key=lambda p: shaping.expected_reward(p, 8, r_env))
    assert 0.22 <= best <= 0.26  # eight attempts at p = 0.2 all fail 17% of the time, and then score 0
    assert max(grid, key=lambda p: Shaping().expected_reward(p, 8, r_env)) < 0.2  # R_env(0) = 0.67 pulls it below


def test_shaping_keys_come_from_the_config():
    cfg = compose(["model=tiny", "simulator.reward_unsolved=-0.5", "simulator.reward_solved=0",
                   "simulator.reward_invalid=-1", "simulator.near_duplicate_penalty=0.25"]).simulator
    assert Shaping.from_config(cfg) == Shaping(-0.5, 0.0, -1.0, 0.25)


def test_the_schema_reads_the_objectives_from_the_registry():
    for name in OBJECTIVES:
        cfg = compose(["model=tiny", f"simulator.objective={name}", "simulator.num_variations=2"])
        assert cfg.simulator.objective == name
    with pytest.raises(ConfigError, match="simulator.objective=group_rwr compares each seed's candidates; it needs "
                                          "simulator.num_variations >= 2"):
        compose(["model=tiny", "simulator.objective=group_rwr", "simulator.num_variations=1"])
    with pytest.raises(ConfigError, match="simulator.objective=sft: one of rwr, group_rwr, grpo, reinforce"):
        compose(["model=tiny", "simulator.objective=sft"])
    with pytest.raises(ConfigError, match="simulator.objective=grpo .* needs simulator.rwr_set=epoch"):
        compose(["model=tiny", "simulator.objective=grpo", "simulator.num_variations=4", "simulator.rwr_set=pool"])
