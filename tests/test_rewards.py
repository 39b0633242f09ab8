"""Rewards, checked against hand-computed values (:mod:`lightning_genenv.rewards`)."""

from __future__ import annotations

import math

import pytest

from lightning_genenv.config.schema import AgentConfig, CurriculumConfig, SimulatorConfig
from lightning_genenv.rewards import (
    ENV_REWARDS,
    absolute_zero_reward,
    agent_reward,
    band_reward,
    calls_match,
    effective_sample_size,
    env_reward,
    exact_match,
    normalize_answer,
    passes_filter,
    reward_target,
    rwr_weights,
    rzero_reward,
    success_rate,
    token_f1,
)
from lightning_genenv.tasks import Task

CUR = CurriculumConfig()  # the defaults: alpha 0.5, beta 10, k_min 0.1, no band
THRESHOLD, LAM = AgentConfig().success_threshold, SimulatorConfig().lam  # 1.0, 1.0

SEARCH = {
    "name": "search",
    "parameters": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}, "lang": {"type": "string"}},
        "required": ["query"],
    },
}
TOOL_TASK = Task(
    id="t",
    family="search",
    question="Find 3 papers on GRPO",
    check="tool_call",
    answer={"name": "search", "arguments": {"query": "GRPO papers", "limit": 3}},
    tools=[SEARCH],
)
EXACT_TASK = Task(id="e", family="qa", question="Capital of France?", check="exact", answer="Paris")
F1_TASK = Task(id="f", family="qa", question="Who sat?", check="f1", answer="a cat sat down")


# ----------------------------------------------------------------------------- answers


def test_normalize_answer():
    assert normalize_answer("  The Cat, sat!  ") == "cat sat"
    assert normalize_answer("An apple a day") == "apple day"
    assert normalize_answer("theatre") == "theatre"  # articles only as whole words
    assert normalize_answer("") == ""


def test_token_f1_hand_computed():
    # pred tokens {cat, sat}, gold {cat, sat, down}: P = 2/2, R = 2/3, F1 = 2PR/(P+R) = 0.8
    assert token_f1("the cat sat", "a cat sat down") == pytest.approx(2 * (1 * 2 / 3) / (1 + 2 / 3))
    assert token_f1("the cat sat", "a cat sat down") == pytest.approx(0.8)
    assert token_f1("cat cat", "cat") == pytest.approx(2 * (0.5 * 1) / 1.5)  # repeated tokens count once
    assert token_f1("dog", "cat") == 0.0
    assert token_f1("", "") == 1.0
    assert token_f1("the", "cat") == 0.0  # empty after normalization


def test_exact_match():
    assert exact_match("The Eiffel Tower.", "eiffel tower") == 1.0
    assert exact_match("Eiffel", "eiffel tower") == 0.0


# ----------------------------------------------------------------------------- tool calls


def test_calls_match_canonicalization():
    def search(name="search", **arguments):
        return {"name": name, "arguments": arguments}

    gold = search(query="GRPO papers", limit=3)
    assert calls_match(search(limit=3, query="GRPO papers"), gold, subset=False)  # key order
    assert calls_match(search(query="GRPO papers", limit=3.0), gold, subset=False)  # 3.0 vs 3
    assert calls_match(search(" search ", query="  GRPO papers ", limit=3), gold, subset=False)  # whitespace
    assert not calls_match(search(query="GRPO papers", limit="3"), gold, subset=False)  # JSON type
    assert not calls_match(search(query="grpo papers", limit=3), gold, subset=False)  # case
    assert not calls_match({"name": "find", "arguments": gold["arguments"]}, gold, subset=False)
    assert not calls_match({"name": "search", "arguments": {"query": "GRPO papers"}}, gold, subset=False)
    assert not calls_match(None, gold, subset=False) and not calls_match(gold, "search", subset=False)
    nested = {"name": "f", "arguments": {"filter": {"b": [1.0, {"y": 2}], "a": True}}}
    assert calls_match({"name": "f", "arguments": {"filter": {"a": True, "b": [1, {"y": 2.0}]}}}, nested, subset=False)
    assert not calls_match({"name": "f", "arguments": {"filter": {"a": 1, "b": [1, {"y": 2}]}}}, nested, subset=False)


def test_calls_match_subset_rule():
    gold = {"name": "search", "arguments": {"query": "GRPO"}}
    extra = {"name": "search", "arguments": {"query": "GRPO", "lang": "en"}}
    assert not calls_match(extra, gold, subset=False)
    assert calls_match(extra, gold, subset=True)
    assert not calls_match({"name": "search", "arguments": {"lang": "en"}}, gold, subset=True)
    assert not calls_match({"name": "search", "arguments": {"query": "RL", "lang": "en"}}, gold, subset=True)


def test_agent_reward_tool_call():
    right = '<tool_call>{"name": "search", "arguments": {"limit": 3, "query": "GRPO papers"}}</tool_call>'
    assert agent_reward(TOOL_TASK, right, False) == (1.0, None)
    wrong = '<tool_call>{"name": "search", "arguments": {"query": "GRPO", "limit": 3}}</tool_call>'
    assert agent_reward(TOOL_TASK, wrong, False) == (0.0, "wrong_call")
    assert agent_reward(TOOL_TASK, "I don't know", False) == (0.0, "no_tool_call")
    assert agent_reward(TOOL_TASK, "<tool_call>search(query=1)", False) == (0.0, "not_json")
    superset = (
        '<tool_call>{"name": "search", "arguments": {"query": "GRPO papers", "limit": 3, "lang": "en"}}'
    )
    assert agent_reward(TOOL_TASK, superset, False) == (0.0, "wrong_call")
    assert agent_reward(TOOL_TASK, superset, subset_match=True) == (1.0, None)


def test_agent_reward_answers():
    assert agent_reward(EXACT_TASK, "<answer>paris.</answer>", False) == (1.0, None)
    assert agent_reward(EXACT_TASK, "<answer>Lyon</answer>", False) == (0.0, "wrong_answer")
    assert agent_reward(EXACT_TASK, "", False) == (0.0, "empty")
    reward, reason = agent_reward(F1_TASK, "<answer>the cat sat", False)
    assert reward == pytest.approx(0.8) and reason is None
    assert agent_reward(F1_TASK, "<answer>a dog</answer>", False) == (0.0, "wrong_answer")
    assert agent_reward(F1_TASK, "<answer></answer>", False) == (0.0, "no_answer")


# ----------------------------------------------------------------------------- environment


def test_success_rate():
    assert success_rate([1.0, 0.0, 1.0, 0.0], THRESHOLD) == 0.5
    assert success_rate([0.8, 0.5, 1.0], threshold=0.5) == 1.0
    assert success_rate([0.8, 0.5, 1.0], THRESHOLD) == pytest.approx(1 / 3)
    assert success_rate([1.0 - 1e-12, 0.0], THRESHOLD) == 0.5  # float noise below the threshold still counts
    assert success_rate([], THRESHOLD) == 0.0


def test_env_reward_hand_computed():
    assert env_reward(0.0, 0.5, 10.0) == pytest.approx(math.exp(-2.5))
    assert env_reward(1.0, CUR.alpha, CUR.beta) == pytest.approx(math.exp(-2.5))
    assert env_reward(0.5, CUR.alpha, CUR.beta) == 1.0
    assert env_reward(0.0, 0.5, 2.0) == pytest.approx(0.6065, abs=1e-4)  # the reference config's beta
    assert env_reward(0.25, CUR.alpha, CUR.beta) == pytest.approx(math.exp(-10 * 0.0625))
    assert env_reward(0.3, 0.3, 10.0) == 1.0 and env_reward(0.5, 0.3, 10.0) == pytest.approx(math.exp(-0.4))


def test_reward_target_moves_alpha_against_the_epochs_error_within_its_range():
    assert reward_target(0.2, [0.35], 0.0, 0.0) == 0.2  # gain 0: alpha itself, whatever p-bar
    assert reward_target(0.2, [0.3], 1.0, 0.0) == pytest.approx(0.1)  # p-bar 0.1 above: aim 0.1 below
    assert reward_target(0.8, [0.7], 2.0, 0.0) == pytest.approx(0.95)  # 0.8 + 2 * 0.1 = 1.0, kept at the range's top
    assert reward_target(0.2, [0.5], 1.0, 0.0) == pytest.approx(0.05)  # 0.2 - 0.3 = -0.1, kept at its bottom
    assert reward_target(0.5, [0.5], 3.0, 0.0) == 0.5  # on target: unmoved
    # a steady error b: the epoch's p-bar = target + b meets alpha + b / (1 + gain)
    alpha, b, gain = 0.2, 0.09, 1.0
    p_bar = (alpha * (1 + gain) + b) / (1 + gain)
    assert reward_target(alpha, [p_bar], gain, 0.0) + b == pytest.approx(p_bar)
    assert p_bar - alpha == pytest.approx(b / (1 + gain))


def test_reward_target_with_memory_carries_the_earlier_epochs_error_faded_and_cut_at_the_range():
    alpha = 0.2
    # memory 0: the last epoch's error alone, whatever came before
    assert reward_target(alpha, [0.9, 0.1, 0.3], 1.0, 0.0) == reward_target(alpha, [0.3], 1.0, 0.0)
    # memory 0.5: s = 0.1 + 0.5 * (0.05 + 0.5 * 0.0) = 0.125, hand-computed
    assert reward_target(alpha, [0.2, 0.25, 0.3], 1.0, 0.5) == pytest.approx(0.2 - 0.125)
    # memory 1: the summed error; +0.1 then -0.1 cancel, the target is alpha again
    assert reward_target(alpha, [0.3, 0.1], 0.5, 1.0) == pytest.approx(alpha)
    # anti-windup: the first epochs far too easy hold the target at 0.05 (s cut to 0.15 before it is carried), so one
    # epoch 0.15 too hard brings it back to alpha at once, not after as many epochs as the error was summed over
    assert reward_target(alpha, [0.9, 0.9, 0.9], 1.0, 1.0) == pytest.approx(0.05)
    assert reward_target(alpha, [0.9, 0.9, 0.9, 0.05], 1.0, 1.0) == pytest.approx(alpha)
    uncut = sum(p - alpha for p in (0.9, 0.9, 0.9, 0.05))  # 1.95: the target would stay at 0.05
    assert alpha - uncut < 0.05
    # a steady error b with memory m: p-bar = target + b meets alpha + b / (1 + gain / (1 - m))
    gain, memory, b = 1.0, 0.5, 0.09
    p_bar = alpha + b / (1 + gain / (1 - memory))
    assert reward_target(alpha, [p_bar] * 60, gain, memory) + b == pytest.approx(p_bar)


def test_passes_filter():
    k_min, alpha = CUR.k_min, CUR.alpha
    assert not passes_filter(0.0, k_min, alpha, None)
    assert not passes_filter(0.05, k_min, alpha, None)
    assert passes_filter(1 / 10, k_min, alpha, None)  # k/n = 1/10 sits exactly on k_min
    assert passes_filter(1.0, k_min, alpha, None)
    assert passes_filter(3 / 10, 0.3, alpha, None) and not passes_filter(0.25, 0.3, alpha, None)
    assert passes_filter(0.6, k_min, alpha, 0.1) and passes_filter(0.4, k_min, alpha, 0.1)
    assert not passes_filter(0.75, k_min, alpha, 0.1)
    assert not passes_filter(0.05, k_min, alpha, 0.5)  # both conditions must hold


def test_rwr_weights_hand_computed():
    e = math.e
    assert rwr_weights([0.0, 1.0], 1.0) == pytest.approx([2 / (1 + e), 2 * e / (1 + e)])
    assert rwr_weights([0.3, 0.3, 0.3], LAM) == pytest.approx([1.0, 1.0, 1.0])
    assert rwr_weights([], LAM) == []
    weights = rwr_weights([0.1, 0.5, 0.9, 1.0], lam=0.5)
    assert sum(weights) == pytest.approx(4.0)
    assert weights == sorted(weights)
    # Stable for rewards far outside exp's range.
    assert rwr_weights([1000.0, 0.0], 1.0) == pytest.approx([2.0, 0.0])
    q = math.exp(-1)
    assert rwr_weights([1e6, 1e6 - 1], LAM) == pytest.approx([2 / (1 + q), 2 * q / (1 + q)])
    with pytest.raises(ValueError):
        rwr_weights([0.0, 1.0], lam=0.0)
    with pytest.raises(ValueError):
        rwr_weights([float("nan")], LAM)


def test_alternative_env_rewards():
    assert rzero_reward(0.5) == 0.5 and rzero_reward(0.2) == pytest.approx(0.2) and rzero_reward(1.0) == 0.0
    assert absolute_zero_reward(0.0) == 0.0
    assert absolute_zero_reward(0.25) == 0.75
    assert absolute_zero_reward(1.0) == 0.0
    assert band_reward(0.6, 0.5, 0.1) == 1.0
    assert band_reward(0.65, 0.5, 0.1) == 0.0


def test_env_rewards_registry():
    assert set(ENV_REWARDS) == {"genenv", "rzero", "absolute_zero", "band"}
    cfg = {"alpha": 0.5, "beta": 10.0, "band": 0.2}
    assert ENV_REWARDS["genenv"](0.0, **cfg) == pytest.approx(math.exp(-2.5))
    assert ENV_REWARDS["rzero"](0.3, **cfg) == pytest.approx(0.3)
    assert ENV_REWARDS["absolute_zero"](0.3, **cfg) == pytest.approx(0.7)
    assert ENV_REWARDS["band"](0.3, **cfg) == 1.0
    assert ENV_REWARDS["band"](0.2, **cfg) == 0.0
    with pytest.raises(ValueError, match="band"):
        ENV_REWARDS["band"](0.5, alpha=0.5, beta=10.0, band=None)


def test_effective_sample_size_by_hand():
    assert effective_sample_size([1.0, 1.0, 2.0]) == pytest.approx(16 / 6)  # (1+1+2)^2 / (1+1+4)
    assert effective_sample_size([3.0, 3.0, 3.0, 3.0]) == pytest.approx(4.0)  # equal weights: plain SFT
    assert effective_sample_size([1.0, 0.0, 0.0]) == pytest.approx(1.0)
    assert effective_sample_size([]) == 0.0
    # lam = 1 on R_env in [0, 1] (the paper's): at most e between weights, the ESS stays near N
    weights = rwr_weights([0.0, 1.0], lam=1.0)
    assert weights[1] / weights[0] == pytest.approx(math.e)
    assert effective_sample_size(weights) == pytest.approx((1 + math.e) ** 2 / (1 + math.e ** 2))
