"""Rewards for both players, as pure functions: the task's check and GenEnv's α-Curriculum Reward
(arXiv 2512.19682; README.md).

- Agent: ``R_agent`` is 1/0 structured equality of the tool call for ``check="tool_call"``, exact
  match for ``check="exact"``, and SQuAD token F1 for ``check="f1"``. An unparseable output scores 0
  with its parse reason.
- Environment: the agent's success rate ``p̂ = k/n`` over its attempts at a generated task gives
  ``R_env(p̂) = exp(-β (p̂ - α)²)``, optionally aimed past α by the run's error (:func:`reward_target`);
  tasks with ``p̂ < k_min`` (and, optionally, outside ``|p̂ - α| <= band``) are filtered out; RWR weights are
  ``w_i ∝ exp(R_env,i / λ)``, self-normalized to average 1, and their effective sample size (how far from plain
  SFT they are).
- The user's own agent rewards (``agent.reward_funcs``) are :mod:`lightning_genenv.reward_funcs`;
  :func:`task_check` is the built-in check in their signature.
- Alternatives to ``R_env`` for ablations, selectable by name from :data:`ENV_REWARDS`.

Deliberately left out: an LLM judge for free-form answers (Bamboogle's official protocol needs one;
a judge is a hook elsewhere, not a pure function), partial credit for tool calls (a call is right or
wrong, as in the API-Bank scorer), and recursive subset matching (the subset rule applies to the
top-level arguments only, as in the public GenEnv code).
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from typing import Any, Callable, Sequence

from lightning_genenv.parsing import parse_answer, parse_tool_call
from lightning_genenv.tasks import Task, canonical_json

_EPS = 1e-9
_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")

# ----------------------------------------------------------------------------- agent


def normalize_answer(s: str) -> str:
    """SQuAD normalization: lowercase, drop punctuation and articles, collapse whitespace."""
    s = str(s).lower()
    s = "".join(ch for ch in s if ch not in _PUNCTUATION)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def exact_match(pred: str, gold: str) -> float:
    return float(normalize_answer(pred) == normalize_answer(gold))


def token_f1(pred: str, gold: str) -> float:
    """SQuAD token F1 of normalized answers; two empty answers match, one empty answer scores 0."""
    pred_tokens = normalize_answer(pred).split()
    gold_tokens = normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def calls_match(pred: Any, gold: Any, *, subset: bool) -> bool:
    """Same tool name and arguments after canonicalization (key order, whitespace, 3.0 vs 3).

    With ``subset=True`` the prediction may carry extra top-level arguments beyond the gold ones
    (the public GenEnv rule); ``subset=False`` is exact equality (the API-Bank rule).
    """
    if not isinstance(pred, dict) or not isinstance(gold, dict):
        return False
    pred_args, gold_args = pred.get("arguments", {}), gold.get("arguments", {})
    if not isinstance(pred_args, dict) or not isinstance(gold_args, dict):
        return False
    try:
        if canonical_json(pred.get("name")) != canonical_json(gold.get("name")):
            return False
        if not subset:
            return canonical_json(pred_args) == canonical_json(gold_args)
        return all(
            key in pred_args and canonical_json(pred_args[key]) == canonical_json(value)
            for key, value in gold_args.items()
        )
    except (TypeError, ValueError):  # values that are not JSON never match
        return False


def agent_reward(task: Task, text: str, subset_match: bool) -> tuple[float, str | None]:
    """``R_agent`` of one attempt and why it scored 0 (a parse reason, or ``"wrong_call"`` /
    ``"wrong_answer"``); the reason is None whenever the reward is positive."""
    if task.check == "tool_call":
        call, reason = parse_tool_call(text)
        if reason:
            return 0.0, reason
        if calls_match(call, task.answer, subset=subset_match):
            return 1.0, None
        return 0.0, "wrong_call"
    if task.check in ("exact", "f1"):
        answer, reason = parse_answer(text)
        if reason:
            return 0.0, reason
        score = exact_match if task.check == "exact" else token_f1
        reward = score(answer, task.answer)
        return reward, (None if reward > 0 else "wrong_answer")
    if task.check == "custom":  # scored by the user's agent.reward_funcs only (lightning_genenv/reward_funcs.py)
        return 0.0, "custom_check_needs_reward_funcs"
    return 0.0, "unknown_check"


def task_check(task: Task, completion: str, subset_match: bool) -> float:
    """The task's built-in check as a reward plug-in (``agent.reward_funcs=[lightning_genenv.rewards:task_check,
    ...]``): :func:`agent_reward` without its reason; ``agent.subset_match`` is bound when it is loaded."""
    return agent_reward(task, completion, subset_match)[0]


# ----------------------------------------------------------------------------- environment


def success_rate(rewards: Sequence[float], threshold: float) -> float:
    """``p̂ = k/n``: the share of attempts with reward >= threshold. No attempts gives 0."""
    if not rewards:
        return 0.0
    return sum(1 for r in rewards if r >= threshold - _EPS) / len(rewards)


def env_reward(p_hat: float, alpha: float, beta: float) -> float:
    """GenEnv's ``R_env = exp(-β (p̂ - α)²)``: 1 at ``p̂ = α``; ``exp(-β/4)`` at 0 and 1 for α = 0.5."""
    return math.exp(-beta * (p_hat - alpha) ** 2)


TARGET_RANGE = (0.05, 0.95)  # where reward_target keeps the target it moves


def reward_target(alpha: float, p_bars: Sequence[float], gain: float, memory: float) -> float:
    """The success rate ``R_env`` aims each of an epoch's tasks at: α moved against the run's error,
    ``α − gain · s``, kept within :data:`TARGET_RANGE`; ``gain`` 0: α itself. ``p_bars``: the mean ``p̂`` of each epoch
    so far, oldest first, this epoch's last. ``s`` is this epoch's error ``p̄ − α`` plus ``memory`` times the ``s`` of
    the epoch before, that one first cut to where it would already move the target to the range's edge (so that a
    long stretch at the edge, while the simulator is still far, is not carried on after it): ``memory`` 0 is this
    epoch's error alone, 1 its sum over the run, between them an error that fades by ``memory`` an epoch.

    Each task's reward peaks where that task is solved α of the time, while the epoch's mean ``p̄`` averages success
    over the difficulty levels the tasks spread over, which a sigmoid-shaped success pulls toward 0.5. Aiming past α
    by ``gain`` times the error cuts a steady error to ``1 / (1 + gain / (1 − memory))`` of itself (``memory`` 1:
    to 0); the memory also smooths the target over epochs, where the epoch's own error makes it swing with ``p̄``."""
    if not gain:
        return alpha
    low, high = (alpha - TARGET_RANGE[1]) / gain, (alpha - TARGET_RANGE[0]) / gain  # s at the range's edges
    s = 0.0
    for p_bar in p_bars:
        s = (p_bar - alpha) + memory * min(high, max(low, s))
    return min(TARGET_RANGE[1], max(TARGET_RANGE[0], alpha - gain * s))


def passes_filter(p_hat: float, k_min: float, alpha: float, band: float | None) -> bool:
    """The difficulty filter: ``p̂ >= k_min`` and, when ``band`` is set, ``|p̂ - α| <= band``."""
    if p_hat < k_min - _EPS:
        return False
    return band is None or abs(p_hat - alpha) <= band + _EPS


def rwr_weights(r_env: Sequence[float], lam: float) -> list[float]:
    """RWR weights ``w_i ∝ exp(R_i / λ)``, self-normalized to average 1 (they sum to N)."""
    if lam <= 0:
        raise ValueError(f"rwr temperature lam must be positive, got {lam}")
    if not r_env:
        return []
    if not all(math.isfinite(r) for r in r_env):
        raise ValueError("rwr_weights needs finite rewards")
    top = max(r_env)
    exps = [math.exp((r - top) / lam) for r in r_env]  # the largest term is exactly 1: no overflow
    scale = len(exps) / sum(exps)
    return [e * scale for e in exps]


def effective_sample_size(weights: Sequence[float]) -> float:
    """Kish's effective sample size ``(Σw)² / Σw²`` of non-negative weights: N for equal weights, 1 when
    one weight holds all the mass; 0 for no weights."""
    total, squares = sum(weights), sum(w * w for w in weights)
    return total * total / squares if squares > 0 else 0.0


def rzero_reward(p_hat: float) -> float:
    """R-Zero style uncertainty reward: ``min(p̂, 1 - p̂)``, largest at 0.5."""
    return min(p_hat, 1.0 - p_hat)


def absolute_zero_reward(p_hat: float) -> float:
    """Absolute-Zero style learnability reward: ``1 - p̂``, but 0 for tasks never solved."""
    return 1.0 - p_hat if p_hat > 0 else 0.0


def band_reward(p_hat: float, alpha: float, band: float) -> float:
    """1 inside the band ``|p̂ - α| <= band``, else 0."""
    return 1.0 if abs(p_hat - alpha) <= band + _EPS else 0.0


def _genenv(p_hat: float, *, alpha: float, beta: float, band: float | None) -> float:
    return env_reward(p_hat, alpha, beta)


def _rzero(p_hat: float, *, alpha: float, beta: float, band: float | None) -> float:
    return rzero_reward(p_hat)


def _absolute_zero(p_hat: float, *, alpha: float, beta: float, band: float | None) -> float:
    return absolute_zero_reward(p_hat)


def _band(p_hat: float, *, alpha: float, beta: float, band: float | None) -> float:
    if band is None:
        raise ValueError("the 'band' environment reward needs a band width (band=...)")
    return band_reward(p_hat, alpha, band)


# name -> f(p_hat, *, alpha, beta, band); each ignores the keywords it does not use.
ENV_REWARDS: dict[str, Callable[..., float]] = {
    "genenv": _genenv,
    "rzero": _rzero,
    "absolute_zero": _absolute_zero,
    "band": _band,
}
