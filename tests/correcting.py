"""An engine wrapper for end-to-end scoring tests: a real engine answers every prompt, except one item's, which
gets that item's right answer. A scorer that never gives credit (or a pipeline that loses the score) then fails
the test; a random model's outputs alone score 0 and could not tell."""

from __future__ import annotations

import dataclasses

from lightning_genenv.rollout import encode_chat


def correcting(build_engine, item, right_answer: str):
    """A ``build_engine`` that builds the real engine and answers ``item``'s prompt with ``right_answer``."""

    def build(backend, model, tokenizer, *args, **kwargs):
        engine = build_engine(backend, model, tokenizer, *args, **kwargs)
        target = encode_chat(tokenizer, item.messages, item.prefix)
        generate = engine.generate

        def answer(prompts, params, desc=None):
            groups = generate(prompts, params, desc)
            return [[dataclasses.replace(s, text=right_answer) for s in g] if list(p) == target else g
                    for p, g in zip(prompts, groups)]

        engine.generate = answer
        return engine

    return build


def check_scores(out, bench, items, item) -> list[dict]:
    """``evaluate.py``'s records in ``out``: ``item`` scored 1, every record's score the benchmark's own score of its
    output, and the summary's headline their mean; returns the records."""
    import json

    records = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == [i.id for i in items]
    right = next(r for r in records if r["id"] == item.id)
    assert right["score"] == 1.0 and right["reason"] is None, right
    for r, i in zip(records, items):
        assert r["score"] == bench.score(i, r["output"]).score
        assert (r["reason"] is None) == (r["score"] > 0)  # a reason for each 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_items"] == len(items) and summary["decoding"] == "greedy"
    assert summary[summary["metric"]] == sum(r["score"] for r in records) / len(records)
    return records
