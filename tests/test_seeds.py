"""Tests for the embedded seed-task generator."""

from __future__ import annotations

import json
import string
from collections import Counter

import pytest

from lightning_genenv.seeds import (
    FAMILIES,
    QA_FAMILIES,
    TEMPLATES,
    embedded_seeds,
    make_seeds,
    split_seeds,
)
from lightning_genenv.tasks import Task, validate_task, validate_tool_spec

ALLOWED_SCHEMA_KEYS = {"type", "enum", "description", "items", "properties", "required"}


@pytest.fixture(scope="module")
def seeds() -> list[Task]:
    return make_seeds(0)


def _schema_keys(schema: dict) -> set[str]:
    keys = set(schema)
    for sub in schema.get("properties", {}).values():
        keys |= _schema_keys(sub)
    if isinstance(schema.get("items"), dict):
        keys |= _schema_keys(schema["items"])
    return keys


def test_tool_specs_are_small_and_use_only_the_supported_schema_subset():
    assert len(FAMILIES) >= 6
    for family, tools in FAMILIES.items():
        assert 2 <= len(tools) <= 3, family
        assert len(json.dumps(tools)) < 900, family
        for spec in tools:
            assert validate_tool_spec(spec) is None
            assert _schema_keys(spec["parameters"]) <= ALLOWED_SCHEMA_KEYS


def test_every_template_names_all_required_arguments_and_only_known_ones():
    specs = {t["name"]: t for tools in FAMILIES.values() for t in tools}
    assert set(TEMPLATES) == set(specs)
    for name, templates in TEMPLATES.items():
        params = specs[name]["parameters"]
        assert len(templates) >= 3, name
        for template in templates:
            fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
            assert set(params["required"]) <= fields <= set(params["properties"]), template


def test_counts_and_family_coverage(seeds):
    tool_tasks = [t for t in seeds if t.check == "tool_call"]
    qa_tasks = [t for t in seeds if t.check != "tool_call"]
    assert len(tool_tasks) >= 200 and len(qa_tasks) >= 50
    assert {t.family for t in tool_tasks} == set(FAMILIES)
    assert {t.family for t in qa_tasks} == set(QA_FAMILIES) and len(QA_FAMILIES) >= 2
    called = {t.answer["name"] for t in tool_tasks}
    assert called == {spec["name"] for tools in FAMILIES.values() for spec in tools}
    # Optional arguments show up in some calls but not all.
    with_optional = [t for t in tool_tasks if set(t.answer["arguments"]) != set(
        next(s for s in t.tools if s["name"] == t.answer["name"])["parameters"]["required"])]
    assert 0 < len(with_optional) < len(tool_tasks)


def test_all_tasks_are_valid_and_well_formed(seeds):
    for t in seeds:
        assert validate_task(t) is None, t.id
        assert t.source == "seed" and t.parent_id is None and t.epoch is None
        assert len(t.question) < 200 and t.question.strip() == t.question
        if t.check == "tool_call":
            assert t.tools == FAMILIES[t.family]
        else:
            assert t.check == "f1" and t.tools == [] and t.family.startswith("qa_")


def test_ids_and_questions_are_unique(seeds):
    assert len({t.id for t in seeds}) == len(seeds)
    assert len({t.question for t in seeds}) == len(seeds)
    for t in seeds:
        family, _, number = t.id.rpartition("-")
        assert family == t.family and len(number) == 4 and number.isdigit()


def test_deterministic_per_seed():
    a, b = make_seeds(0), make_seeds(0)
    assert [t.to_dict() for t in a] == [t.to_dict() for t in b]
    c = make_seeds(1)
    assert [t.question for t in a] != [t.question for t in c]


def _appears(value, question: str) -> bool:
    if isinstance(value, list):
        return all(_appears(v, question) for v in value)
    if isinstance(value, str):
        return value.lower() in question.lower()
    assert isinstance(value, (int, float)) and not isinstance(value, bool)
    return str(value) in question


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gold_argument_values_appear_in_the_question(seed):
    for t in make_seeds(seed):
        if t.check != "tool_call":
            continue
        props = next(s for s in t.tools if s["name"] == t.answer["name"])["parameters"]["properties"]
        for name, value in t.answer["arguments"].items():
            assert _appears(value, t.question), (t.question, name, value)
            if "enum" in props[name]:
                assert value in t.question, (t.question, value)  # spelled exactly as the enum
            if props[name]["type"] == "integer":
                assert type(value) is int


def test_qa_answers_are_correct_on_examples(seeds):
    by_question = {t.question: t.answer for t in seeds}
    for question, answer in by_question.items():
        if question.startswith("What is ") and " plus " in question:
            a, b = question[len("What is "):-1].split(" plus ")
            assert answer == str(int(a) + int(b))
        if question.startswith("How many letters are in the word '"):
            assert answer == str(len(question.split("'")[1]))
        if question.startswith("Spell the word '"):
            assert answer == question.split("'")[1][::-1]
    capitals = [t for t in seeds if t.family == "qa_capitals"]
    assert capitals and all(t.answer[0].isupper() for t in capitals)


def test_split_is_disjoint_stratified_and_deterministic(seeds):
    train, val = split_seeds(seeds, val_fraction=0.15, seed=0)
    assert len(train) + len(val) == len(seeds)
    assert not {t.question for t in train} & {t.question for t in val}
    assert not {t.id for t in train} & {t.id for t in val}
    families = {t.family for t in seeds}
    assert {t.family for t in train} == families == {t.family for t in val}
    per_family = Counter(t.family for t in seeds)
    for family, n_val in Counter(t.family for t in val).items():
        assert abs(n_val - 0.15 * per_family[family]) <= 1
    again = split_seeds(make_seeds(0), val_fraction=0.15, seed=0)
    assert [t.id for t in again[1]] == [t.id for t in val]
    assert [t.id for t in split_seeds(seeds, 0.15, seed=1)[1]] != [t.id for t in val]


def test_split_keeps_duplicate_questions_together_and_small_families_in_both():
    base = make_seeds(0, n_tool=18, n_qa=10)
    dup = Task.from_dict({**base[0].to_dict(), "id": "weather-dup"})
    train, val = split_seeds(base + [dup], val_fraction=0.5, seed=3)
    same = [t for t in train + val if t.question == dup.question]
    assert len(same) == 2 and (all(t in train for t in same) or all(t in val for t in same))
    families = {t.family for t in base}
    assert {t.family for t in train} == families == {t.family for t in val}
    with pytest.raises(ValueError):
        split_seeds(base, val_fraction=1.0)


def test_embedded_seeds_matches_make_then_split():
    train, val = embedded_seeds(seed=0, val_fraction=0.15, num_held_out=0)
    expected = split_seeds(make_seeds(0), val_fraction=0.15, seed=0)
    assert [t.id for t in train] == [t.id for t in expected[0]]
    assert [t.id for t in val] == [t.id for t in expected[1]]


def test_json_round_trip(seeds):
    for t in seeds:
        line = json.dumps(t.to_dict())
        back = Task.from_dict(json.loads(line))
        assert back == t


def test_asking_for_too_many_unique_questions_fails_loudly():
    with pytest.raises(ValueError, match="unique"):
        make_seeds(0, n_tool=0, n_qa=2000)


@pytest.mark.slow
def test_every_gold_completion_fits_the_default_max_completion_length():
    """No embedded task is unsolvable by length: each gold completion (EOS included), measured with the
    embedded model's tokenizer, fits in the default agent.max_completion_length."""
    from transformers import AutoTokenizer

    from lightning_genenv.config import AgentConfig, DataConfig
    from lightning_genenv.models import resolve_model_path
    from lightning_genenv.prompts import gold_lengths
    from lightning_genenv.seeds import embedded_seeds

    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path("embedded"))
    d = DataConfig()  # the default held-out set, topped up (data.num_held_out)
    train, val = embedded_seeds(d.seed, d.val_fraction, d.num_held_out)
    lengths = gold_lengths(train + val, tokenizer)
    limit = AgentConfig().max_completion_length
    too_long = [(t.id, n) for t, n in zip(train + val, lengths) if n > limit]
    assert not too_long, f"gold completions longer than max_completion_length={limit}: {too_long}"
    assert max(lengths) > limit // 2  # the measure is real: the longest answers use most of the budget


# The train split of make_seeds(s) + split_seeds(val_fraction=0.15, seed=s) before the held-out set was topped
# up (sha256 of the tasks' JSON, in order): topping it up must leave training bit-identical.
TRAIN_SPLIT_SHA256 = {0: "24432edb8d83c1f2a7cb069b08c1801195235aba8411d1f91a7c2ee12b6d52d7",
                      1: "c4f2c1561768f1ea6b9aca565a1df49eeffb596e22c757a6f835e40d135d4d0c",
                      2: "b8602808d4f1cd4c2002ab15a34cb7a747a96cdd49a3225f234637746c02c478"}


def _sha(tasks):
    import hashlib

    return hashlib.sha256(json.dumps([t.to_dict() for t in tasks], sort_keys=True).encode()).hexdigest()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_default_held_out_set_is_large_family_complete_and_disjoint_from_train(seed):
    from lightning_genenv.config import DataConfig

    d = DataConfig()
    train, val = embedded_seeds(seed, d.val_fraction, d.num_held_out)
    assert d.num_held_out >= 128 and len(val) == d.num_held_out
    assert _sha(train) == TRAIN_SPLIT_SHA256[seed] and len(train) == 254  # the same 254 tasks, same order
    seeds = make_seeds(seed)
    assert not {t.question for t in val} & {t.question for t in train}
    assert len({t.question for t in val}) == len(val) and len({t.id for t in val}) == len(val)
    assert not {t.id for t in val} & {t.id for t in train}
    _, split_val = split_seeds(seeds, val_fraction=d.val_fraction, seed=seed)
    assert val[:len(split_val)] == split_val  # the split's held-out tasks first, then the fresh ones
    fresh = val[len(split_val):]
    assert not {t.question for t in fresh} & {t.question for t in seeds}
    assert all(validate_task(t) is None for t in val)
    families = Counter(t.family for t in seeds)
    held = Counter(t.family for t in val)
    assert set(held) == set(families)
    for family, n in held.items():  # in proportion to the family's size among the seeds, to within one task
        assert abs(n - d.num_held_out * families[family] / len(seeds)) < 1, (family, n)
    assert [t.id for t in embedded_seeds(seed, d.val_fraction, d.num_held_out)[1]] == [t.id for t in val]


def test_held_out_quotas_keep_what_a_family_holds_out_already():
    from lightning_genenv.seeds import held_out_quotas, top_up_held_out

    # 10 to share over sizes 6:3:1 -> 6, 3, 1; b already holds out 5: b keeps 5, a and c share the other 5 (6:1)
    assert held_out_quotas({"a": 6, "b": 3, "c": 1}, {}, 10) == {"a": 6, "b": 3, "c": 1}
    assert held_out_quotas({"a": 6, "b": 3, "c": 1}, {"b": 5}, 10) == {"a": 4, "b": 5, "c": 1}
    seeds = make_seeds(0)
    _, val = split_seeds(seeds, val_fraction=0.15, seed=0)
    assert top_up_held_out(seeds, val, len(val), seed=0) == val
    with pytest.raises(ValueError, match="fewer than the 46"):
        top_up_held_out(seeds, val, 45, seed=0)
    with pytest.raises(ValueError, match="cannot generate more unique"):
        top_up_held_out(seeds, val, 5000, seed=0)  # qa_capitals has 40 distinct questions
