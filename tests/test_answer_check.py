"""The declarative answer checks (:mod:`lightning_genenv.answer_check`): every embedded seed passes them, each
computable form on hand-computed cases, and what is left unchecked."""

import dataclasses
import random

import pytest

from lightning_genenv.answer_check import check_answer, computed_answer, grounded
from lightning_genenv.seeds import make_seeds
from lightning_genenv.seeds.qa_families import QA_FAMILIES
from tests.samples import QA_SEED, TOOL_SEED


@pytest.mark.parametrize("family", sorted(QA_FAMILIES))
def test_every_embedded_qa_form_is_computed_right(family):
    """500 draws of each embedded QA family: the question's computed answer is the family's own."""
    rng = random.Random(0)
    for _ in range(500):
        question, answer = QA_FAMILIES[family](rng)
        assert computed_answer(question) == answer, question


def test_every_embedded_seed_passes_the_check():
    seeds = make_seeds(0)
    assert {s.check for s in seeds} == {"tool_call", "f1"}
    assert all(grounded(s) for s in seeds if s.check == "tool_call")
    assert [s.id for s in seeds if check_answer(s, s)] == []


@pytest.mark.parametrize("question, answer", [
    ("What is 12 plus 7 times 3?", "33"),
    ("what's 100 - 4 * 5 + 2?", "82"),
    ("Calculate 84 ÷ 4 minus 1.", "20"),
    ("What is 7 divided by 2?", "3.5"),
    ("What is 1234567 divided by 8?", "154320.875"),
    ("What is the sum of 4 and 9?", "13"),
    ("What is the product of 6 and 7?", "42"),
    ("Ben has 40 pears and gives away 15 of them. How many pears does Ben have now?", "25"),
    ("Ana has 12 apples and finds 30 more. How many apples does Ana have?", "42"),
    ("If today is Sunday, what day of the week will it be in 10 days?", "Wednesday"),
    ("If today is monday, what day was it 8 days ago?", "Sunday"),
    ("How many letters are in the word \"pepper\"?", "6"),
    ("How many times does the letter 'p' appear in 'pepper'?", "3"),
    ("Spell the word 'rocket' backwards.", "tekcor"),
    ("How many seconds are in 1 minute?", "60"),
    ("How many  grams are in 2.5 kilograms?", "2500"),
    ("Which city is the capital of Kenya?", "Nairobi"),
])
def test_computed_answers_by_hand(question, answer):
    assert computed_answer(question) == answer


@pytest.mark.parametrize("question", [
    "What is 10 divided by 3?",  # no short decimal form
    "What is 5 minus 9?",  # negative
    "What is 4 divided by 0?",
    "How many grams are in 3 hours?",  # no such conversion
    "What is the capital of Atlantis?",  # not in the table
    "Who wrote Hamlet?",
    "What is 2?",
])
def test_questions_left_unchecked(question):
    assert computed_answer(question) is None


def test_a_wrong_answer_is_rejected_a_right_one_kept():
    wrong = dataclasses.replace(QA_SEED, question="What is 47 plus 38?", answer="75")
    assert check_answer(wrong, QA_SEED) == "wrong_answer"
    assert check_answer(dataclasses.replace(wrong, answer=" 85."), QA_SEED) is None  # as exact_match compares
    assert check_answer(dataclasses.replace(wrong, check="f1"), QA_SEED) == "wrong_answer"
    assert check_answer(dataclasses.replace(wrong, check="custom"), QA_SEED) is None


def test_a_call_must_name_only_what_its_question_says():
    call = lambda **args: {"name": "get_weather", "arguments": args}  # noqa: E731
    task = dataclasses.replace(TOOL_SEED, question="Weather in  new york for 3 days, please",
                               answer=call(city="New York", days=3))
    assert grounded(task) and check_answer(task, TOOL_SEED) is None
    assert not grounded(dataclasses.replace(task, question="Weather in New York for 13 days"))
    assert not grounded(dataclasses.replace(task, answer=call(city="Boston", days=3)))
    assert grounded(dataclasses.replace(task, answer=call(city="New York", hourly=True)))  # booleans unchecked
    assert grounded(dataclasses.replace(task, question="New York, 3.0 days", answer=call(city="New York", days=3.0)))
    assert grounded(dataclasses.replace(task, answer=call(city="New York", days=3.0)))
    assert not grounded(dataclasses.replace(task, question="New York, 3.5 days"))
    assert check_answer(dataclasses.replace(task, answer=call(city="Boston")), TOOL_SEED) == "ungrounded_call"
    # a seed whose own call paraphrases its question: its generations are not checked
    loose = dataclasses.replace(TOOL_SEED, question="Is it warm in the French capital?")
    assert check_answer(dataclasses.replace(task, answer=call(city="Boston")), loose) is None
