"""Rewards, checked against hand-computed values (GENENV.md §3)."""

from __future__ import annotations

import math

import pytest

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
    rwr_weights,
    rzero_reward,
    success_rate,
    token_f1,
)
from lightning_genenv.tasks import Task

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
    assert calls_match(search(limit=3, query="GRPO papers"), gold)  # key order
    assert calls_match(search(query="GRPO papers", limit=3.0), gold)  # 3.0 vs 3
    assert calls_match(search(" search ", query="  GRPO papers ", limit=3), gold)  # whitespace
    assert not calls_match(search(query="GRPO papers", limit="3"), gold)  # JSON type
    assert not calls_match(search(query="grpo papers", limit=3), gold)  # case
    assert not calls_match({"name": "find", "arguments": gold["arguments"]}, gold)
    assert not calls_match({"name": "search", "arguments": {"query": "GRPO papers"}}, gold)
    assert not calls_match(None, gold) and not calls_match(gold, "search")
    nested = {"name": "f", "arguments": {"filter": {"b": [1.0, {"y": 2}], "a": True}}}
    assert calls_match({"name": "f", "arguments": {"filter": {"a": True, "b": [1, {"y": 2.0}]}}}, nested)
    assert not calls_match({"name": "f", "arguments": {"filter": {"a": 1, "b": [1, {"y": 2}]}}}, nested)


def test_calls_match_subset_rule():
    gold = {"name": "search", "arguments": {"query": "GRPO"}}
    extra = {"name": "search", "arguments": {"query": "GRPO", "lang": "en"}}
    assert not calls_match(extra, gold)
    assert calls_match(extra, gold, subset=True)
    assert not calls_match({"name": "search", "arguments": {"lang": "en"}}, gold, subset=True)
    assert not calls_match({"name": "search", "arguments": {"query": "RL", "lang": "en"}}, gold, subset=True)


def test_agent_reward_tool_call():
    right = '<tool_call>{"name": "search", "arguments": {"limit": 3, "query": "GRPO papers"}}</tool_call>'
    assert agent_reward(TOOL_TASK, right) == (1.0, None)
    wrong = '<tool_call>{"name": "search", "arguments": {"query": "GRPO", "limit": 3}}</tool_call>'
    assert agent_reward(TOOL_TASK, wrong) == (0.0, "wrong_call")
    assert agent_reward(TOOL_TASK, "I don't know") == (0.0, "no_tool_call")
    assert agent_reward(TOOL_TASK, "<tool_call>search(query=1)") == (0.0, "not_json")
    superset = (
        '<tool_call>{"name": "search", "arguments": {"query": "GRPO papers", "limit": 3, "lang": "en"}}'
    )
    assert agent_reward(TOOL_TASK, superset) == (0.0, "wrong_call")
    assert agent_reward(TOOL_TASK, superset, subset_match=True) == (1.0, None)


def test_agent_reward_answers():
    assert agent_reward(EXACT_TASK, "<answer>paris.</answer>") == (1.0, None)
    assert agent_reward(EXACT_TASK, "<answer>Lyon</answer>") == (0.0, "wrong_answer")
    assert agent_reward(EXACT_TASK, "") == (0.0, "empty")
    reward, reason = agent_reward(F1_TASK, "<answer>the cat sat")
    assert reward == pytest.approx(0.8) and reason is None
    assert agent_reward(F1_TASK, "<answer>a dog</answer>") == (0.0, "wrong_answer")
    assert agent_reward(F1_TASK, "<answer></answer>") == (0.0, "no_answer")


# ----------------------------------------------------------------------------- environment


def test_success_rate():
    assert success_rate([1.0, 0.0, 1.0, 0.0]) == 0.5
    assert success_rate([0.8, 0.5, 1.0], threshold=0.5) == 1.0
    assert success_rate([0.8, 0.5, 1.0]) == pytest.approx(1 / 3)
    assert success_rate([1.0 - 1e-12, 0.0]) == 0.5  # float noise below the threshold still counts
    assert success_rate([]) == 0.0


def test_env_reward_hand_computed():
    assert env_reward(0.0, 0.5, 10.0) == pytest.approx(math.exp(-2.5))
    assert env_reward(1.0) == pytest.approx(math.exp(-2.5))
    assert env_reward(0.5) == 1.0
    assert env_reward(0.0, 0.5, 2.0) == pytest.approx(0.6065, abs=1e-4)  # the reference config's beta
    assert env_reward(0.25) == pytest.approx(math.exp(-10 * 0.0625))


def test_passes_filter():
    assert not passes_filter(0.0)
    assert not passes_filter(0.05)
    assert passes_filter(1 / 10)  # k/n = 1/10 sits exactly on k_min
    assert passes_filter(1.0)
    assert passes_filter(3 / 10, k_min=0.3)
    assert passes_filter(0.6, band=0.1) and passes_filter(0.4, band=0.1)
    assert not passes_filter(0.75, band=0.1)
    assert not passes_filter(0.05, band=0.5)  # both conditions must hold


def test_rwr_weights_hand_computed():
    e = math.e
    assert rwr_weights([0.0, 1.0], 1.0) == pytest.approx([2 / (1 + e), 2 * e / (1 + e)])
    assert rwr_weights([0.3, 0.3, 0.3]) == pytest.approx([1.0, 1.0, 1.0])
    assert rwr_weights([]) == []
    weights = rwr_weights([0.1, 0.5, 0.9, 1.0], lam=0.5)
    assert sum(weights) == pytest.approx(4.0)
    assert weights == sorted(weights)
    # Stable for rewards far outside exp's range.
    assert rwr_weights([1000.0, 0.0], 1.0) == pytest.approx([2.0, 0.0])
    q = math.exp(-1)
    assert rwr_weights([1e6, 1e6 - 1]) == pytest.approx([2 / (1 + q), 2 * q / (1 + q)])
    with pytest.raises(ValueError):
        rwr_weights([0.0, 1.0], lam=0.0)
    with pytest.raises(ValueError):
        rwr_weights([float("nan")])


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
    assert ENV_REWARDS["genenv"](0.5) == 1.0  # defaults
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
