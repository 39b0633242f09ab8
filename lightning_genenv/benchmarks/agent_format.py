"""A benchmark's held-out part in the agent's own training interface (``evaluate.py interface=agent``).

The paper scores every model "using the same tool-calling interface and prompt templates" it was
trained with. A model trained with ``data=<benchmark>`` sees each item as a converted task
(:mod:`lightning_genenv.benchmarks.train_seeds`): our system prompt with the tools, two worked
examples of the same family from the train part, our ``<tool_call>`` syntax; and it is rewarded by
:func:`lightning_genenv.rewards.agent_reward`. This module scores the held-out tasks exactly so:
the prompt of :func:`lightning_genenv.prompts.agent_messages` with the few-shot examples that
training's validation gives (:func:`lightning_genenv.prompts.family_examples` over the train part),
greedy decoding, the training reward. ``accuracy`` is the share of tasks whose reward reaches
``success_threshold`` (what ``val/score`` counts), with its 95% Wilson interval; ``reward_mean`` is
the mean reward (dense for Bamboogle's F1); ``gold_too_long`` counts the tasks whose gold completion does not
fit in the token budget (``evaluate.py`` gives at least ``data=<benchmark>``'s ``agent.max_completion_length``).

Only benchmarks with a derived split have converted tasks (API-Bank, BFCL, Bamboogle). The converted
held-out part is smaller than the benchmark's: items that do not convert (BFCL turns with several
calls, API-Bank calls whose arguments do not match the tool's schema) are counted in
``skipped_records`` as ``heldout:<reason>`` and not scored, so the two interfaces' item counts differ.

Deliberately left out: sampling (pass@k) and the benchmark's own checker (``interface=benchmark``
applies it to the benchmark's own prompt).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from lightning_genenv.benchmarks.common import ItemResult, mean, reason_counts
from lightning_genenv.benchmarks.runner import headline_interval
from lightning_genenv.prompts import agent_messages, family_examples, gold_lengths
from lightning_genenv.rewards import agent_reward
from lightning_genenv.rollout import SamplingParams, encode_chat
from lightning_genenv.tasks import Task


@dataclass(frozen=True)
class AgentFormat:
    """The training-side settings that shape the prompt and the score (the run's, or the schema's)."""

    num_shots: int
    max_new_tokens: int
    success_threshold: float
    subset_match: bool


def score_tasks(tasks: list[Task], shot_pool: list[Task], engine, tokenizer, fmt: AgentFormat,
                max_context: int, desc: str | None = None) -> tuple[list[dict], dict]:
    """Greedy attempts at ``tasks`` in the agent's format: one record per task and the metrics."""
    ids = [encode_chat(tokenizer, agent_messages(t, family_examples(t, shot_pool, fmt.num_shots))) for t in tasks]
    fits = sorted((i for i, p in enumerate(ids) if len(p) + fmt.max_new_tokens <= max_context), key=lambda i: len(ids[i]))
    params = SamplingParams(n=1, greedy=True, max_new_tokens=fmt.max_new_tokens)
    samples = dict(zip(fits, (g[0] for g in engine.generate([ids[i] for i in fits], params, desc=desc))))
    records, results = [], []
    for i, task in enumerate(tasks):
        sample = samples.get(i)
        reward, reason = agent_reward(task, sample.text, fmt.subset_match) if sample else (0.0, "prompt_too_long")
        solved = reward >= fmt.success_threshold
        results.append(ItemResult(task.id, float(solved), None, None if solved else (reason or "below_threshold")))
        records.append({"id": task.id, "family": task.family, "score": float(solved), "reward": reward,
                        "reason": results[-1].reason, "output": sample.text if sample else "",
                        "truncated": bool(sample and sample.truncated), "prompt_tokens": len(ids[i]),
                        "gold": task.answer})
    metrics = {"metric": "accuracy", "accuracy": mean([r.score for r in results]),
               "reward_mean": mean([r["reward"] for r in records]), "n_items": len(records),
               "reasons": reason_counts(results), "truncated": sum(r["truncated"] for r in records),
               "prompt_too_long": sum(r["reason"] == "prompt_too_long" for r in records),
               # tasks no reply within the budget can solve: the gold completion (EOS included) is longer
               "gold_too_long": sum(n > fmt.max_new_tokens for n in gold_lengths(tasks, tokenizer)),
               "by_family": _by_family(records)}
    metrics.update(headline_interval(metrics, [r.score for r in results]))
    return records, metrics


def _by_family(records: list[dict]) -> dict[str, dict]:
    counts = Counter(r["family"] for r in records)
    return {f: {"n": n, "accuracy": mean([r["score"] for r in records if r["family"] == f])}
            for f, n in sorted(counts.items())}


__all__ = ["AgentFormat", "score_tasks"]
