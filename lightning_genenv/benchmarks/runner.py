"""Run a benchmark's items through a rollout engine and score them (used by ``evaluate.py``).

Prompts are rendered with the model's chat template, sorted by length (less padding per batch),
generated greedily in batches and scored by the benchmark. A prompt that leaves no room for the
answer in the model's context is not generated: it scores 0 with reason ``prompt_too_long``.

Deliberately left out: sampling several answers per item (pass@k) and any retry on bad output.
"""

from __future__ import annotations

from dataclasses import dataclass

from lightning_genenv.benchmarks.common import Benchmark, BenchItem, ItemResult, reason_counts
from lightning_genenv.distributed import max_over_ranks
from lightning_genenv.report.stats import wilson_interval
from lightning_genenv.rollout import SamplingParams, encode_chat


@dataclass
class Record:
    item: BenchItem
    result: ItemResult
    prompt: str
    output: str
    prompt_tokens: int
    truncated: bool

    def to_json(self) -> dict:
        meta = {k: v for k, v in self.item.meta.items() if k not in ("root", "question")}
        return {"id": self.item.id, "score": self.result.score, "reason": self.result.reason,
                "parsed": self.result.parsed, "output": self.output, "gold": self.item.gold,
                "extra": self.result.extra, "meta": meta, "prompt_tokens": self.prompt_tokens,
                "truncated": self.truncated, "prompt": self.prompt}


def select(items: list[BenchItem], limit: int | None) -> list[BenchItem]:
    """``limit`` items spread evenly over the list (so that every level or type is represented)."""
    if limit is None or limit >= len(items):
        return items
    return [items[i * len(items) // limit] for i in range(limit)]


def context_length(model, tokenizer) -> int:
    n = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    return int(n) if n else int(min(tokenizer.model_max_length, 1 << 20))


def run_items(bench: Benchmark, items: list[BenchItem], engine, tokenizer, max_new_tokens: int,
              max_context: int, desc: str | None = None, lockstep: bool = False) -> list[Record]:
    """Generate and score ``items``. ``lockstep=True`` (every rank calls it, each with its share):
    the prompts are padded with a filler prompt to the largest count over the ranks, so that every
    rank makes the same generate calls, as sharded (FSDP) weights need; the fillers are dropped."""
    texts, ids = [], []
    for item in items:
        text = tokenizer.apply_chat_template(item.messages, tokenize=False, add_generation_prompt=True)
        texts.append(text + item.prefix)
        ids.append(encode_chat(tokenizer, item.messages, item.prefix))
    fits = [i for i, p in enumerate(ids) if len(p) + max_new_tokens <= max_context]
    fits.sort(key=lambda i: len(ids[i]))
    prompts = [ids[i] for i in fits]
    if lockstep:
        filler = [tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0]
        prompts += [filler] * (max_over_ranks(len(prompts)) - len(prompts))
    params = SamplingParams(n=1, greedy=True, max_new_tokens=max_new_tokens)
    samples = dict(zip(fits, (g[0] for g in engine.generate(prompts, params, desc=desc))))
    records = []
    for i, item in enumerate(items):
        if i not in samples:
            result = ItemResult(item.id, 0.0, None, "prompt_too_long")
            records.append(Record(item, result, texts[i], "", len(ids[i]), False))
            continue
        sample = samples[i]
        output = item.prefix + sample.text
        records.append(Record(item, bench.score(item, output), texts[i], output, len(ids[i]), sample.truncated))
    return records


def summary(bench: Benchmark, records: list[Record]) -> dict:
    items = [r.item for r in records]
    results = [r.result for r in records]
    out = bench.summarize(items, results)
    out.update(n_items=len(records), reasons=reason_counts(results),
               truncated=sum(r.truncated for r in records),
               prompt_too_long=sum(r.result.reason == "prompt_too_long" for r in records))
    out.update(headline_interval(out, [r.score for r in results]))
    return out


def headline_interval(metrics: dict, scores: list[float]) -> dict:
    """``ci95``: the 95% Wilson interval of the headline metric (``metrics["metric"]``) when it is the share
    of items that scored 1 (every item scored 0 or 1 and their mean is the headline); otherwise ``ci95``
    is None and ``ci95_note`` says why (a macro average, or dense scores, is not a binomial proportion)."""
    value = metrics.get(metrics.get("metric"))
    if not scores or value is None:
        return {"ci95": None, "ci95_note": "no items or no headline metric"}
    if any(s not in (0.0, 1.0) for s in scores) or abs(sum(scores) / len(scores) - value) > 1e-9:
        return {"ci95": None, "ci95_note": f"{metrics['metric']} is not the share of items scoring 1"}
    return {"ci95": list(wilson_interval(int(sum(scores)), len(scores)))}


def numeric(summary_dict: dict, prefix: str = "") -> dict[str, float]:
    """The numeric leaves of a summary, flattened with ``/`` (for TensorBoard and Lightning logs)."""
    out = {}
    for key, value in summary_dict.items():
        if isinstance(value, dict):
            out.update(numeric(value, f"{prefix}{key}/"))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[f"{prefix}{key}"] = float(value)
    return out


__all__ = ["Record", "select", "run_items", "summary", "headline_interval", "numeric", "context_length"]
