"""The copy measure (lightning_genenv.novelty) on hand-made examples."""

import dataclasses

import pytest

from lightning_genenv.novelty import NEAR_DUPLICATE_BELOW, edit_distance, novelty, question_distance, words
from tests.samples import QA_SEED, TOOL_SEED


def test_words_ignore_case_punctuation_and_spacing():
    assert words("What's  the WEATHER, in Paris?") == ["what", "s", "the", "weather", "in", "paris"]


@pytest.mark.parametrize("a,b,d", [("", "", 0), ("abc", "", 3), ("kitten", "sitting", 3), ("abc", "abc", 0),
                                   ("ab", "ba", 2), ("flaw", "lawn", 2)])
def test_edit_distance_by_hand(a, b, d):
    assert edit_distance(list(a), list(b)) == d == edit_distance(list(b), list(a))


def test_question_distance_is_the_share_of_words_changed():
    assert question_distance("What is the weather in Paris?", "what is the weather in paris") == 0.0
    assert question_distance("What is the weather in Paris?", "What is the weather in Rome?") == pytest.approx(1 / 6)
    assert question_distance("a b c d", "a x") == pytest.approx(3 / 4)
    assert question_distance("", "") == 0.0


def test_novelty_counts_only_references_with_the_same_answer():
    rome = dataclasses.replace(TOOL_SEED, question="What is the weather in Rome in celsius?",
                               answer={"name": "get_weather", "arguments": {"unit": "celsius", "city": "Rome"}})
    assert novelty(rome, [TOOL_SEED]) == 1.0  # other values: a new task, however similar the wording
    reworded = dataclasses.replace(TOOL_SEED, question="Tell me the weather in Paris in celsius",
                                   answer={"name": "get_weather", "arguments": {"unit": "celsius", "city": "Paris"}})
    assert novelty(reworded, [rome, TOOL_SEED]) == pytest.approx(2 / 8)  # key order does not matter
    assert novelty(reworded, []) == 1.0
    same_answer_other_question = dataclasses.replace(QA_SEED, question="Which city is home to the Louvre museum?",
                                                     answer=" paris. ")
    assert novelty(same_answer_other_question, [QA_SEED]) > NEAR_DUPLICATE_BELOW  # normalized answers match
    copy = dataclasses.replace(QA_SEED, question="What's the capital of France?")
    assert novelty(copy, [QA_SEED]) < NEAR_DUPLICATE_BELOW
