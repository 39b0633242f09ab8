"""Declarative answer checks: the answer a written task must have, where its question alone determines it.

A simulator of 135M parameters often writes a question with the wrong answer (``What is 47 plus 38?`` with
``"75"``); the agent then fails the task however well it answers, and ``R_env`` scores the wrong answer rather
than the task's difficulty. With ``simulator.check_answers`` such a generation is invalid (:func:`check_answer`):
never attempted, trained on or imitated, and scored ``simulator.reward_invalid`` by the simulator's objective.

What is checked (the question is parsed, never run):

* an ``exact`` or ``f1`` task whose question has one of the computable forms of the embedded QA families
  (:func:`computed_answer`): arithmetic on integers (``What is 12 plus 7 times 3?``, ``the sum of 4 and 9``, ``+ - *
  x / ÷``, times and divided by before plus and minus), a person who has N things and buys (gives away) M more,
  the weekday N days after (before) a weekday, a word's letter count, a letter's count in a word, a word spelled
  backwards, a unit conversion between two units of ``seeds.qa_families.UNIT_FACTS``, and a capital in the
  ``CAPITALS`` table. Its answer must match the computed one as the exact scorer matches (``rewards.exact_match``):
  otherwise ``"wrong_answer"``;
* a ``tool_call`` task whose seed's own call is grounded in the seed's question: every string and number among
  its arguments appears in the question (case and spacing aside), which holds for every embedded tool seed, whose
  templates write each argument verbatim. A generation from such a seed must be grounded too: otherwise
  ``"ungrounded_call"`` (a call to look up Paris for a question about Tokyo). Booleans are not checked.

A question in no computable form, and a call from a seed that is not grounded (a benchmark's, whose questions
often paraphrase the call's values), is left unchecked: returned valid.

Deliberately left out: arithmetic beyond integers (a division that leaves a remainder is not checked), negative
numbers, exponents, parentheses, and any free-form question (the check knows the embedded families' forms only).
"""

from __future__ import annotations

import re
from fractions import Fraction

from lightning_genenv.rewards import exact_match
from lightning_genenv.seeds.qa_families import CAPITALS, DAYS, UNIT_FACTS
from lightning_genenv.tasks import Task, canonical_json

_NUM = r"\d+(?:\.\d+)?"
_OPS = {"plus": "+", "+": "+", "minus": "-", "-": "-", "times": "*", "multiplied by": "*", "*": "*", "x": "*",
        "×": "*", "divided by": "/", "/": "/", "÷": "/"}
_OP = "|".join(re.escape(k) for k in sorted(_OPS, key=len, reverse=True))
_ASK = r"(?:what is|what's|compute|calculate|evaluate|how much is)"
_EXPR = re.compile(rf"{_ASK}\s+(?:the value of\s+)?((?:{_NUM}\s*(?:{_OP})\s*)+{_NUM})\s*[?.]?", re.IGNORECASE)
_TOKEN = re.compile(rf"{_NUM}|{_OP}", re.IGNORECASE)
_NAMED = re.compile(rf"{_ASK}\s+the (sum|product|difference) of ({_NUM}) and ({_NUM})\s*[?.]?", re.IGNORECASE)
_NAMED_OPS = {"sum": "+", "product": "*", "difference": "-"}
_MORE_VERBS, _LESS_VERBS = ("buys", "gets", "finds", "receives"), ("gives away", "eats", "loses", "sells")
_MORE = re.compile(rf"\bhas ({_NUM}) (\w+) and ({'|'.join(_MORE_VERBS + _LESS_VERBS)}) ({_NUM})\b"
                   rf"[^.?]*\.\s*how many \2\b", re.IGNORECASE)
_DAY = "|".join(DAYS)
_DAYS_AHEAD = re.compile(rf"today is ({_DAY})\b.*\bin (\d+) days?\b", re.IGNORECASE)
_DAYS_AGO = re.compile(rf"today is ({_DAY})\b.*\b(\d+) days? ago\b", re.IGNORECASE)
_Q = "['\"‘’“”]"
_WORD = rf"{_Q}?([A-Za-z]+){_Q}?"
_LETTERS = re.compile(rf"how many letters (?:are )?(?:there )?in the word {_WORD}\s*[?.]?", re.IGNORECASE)
_LETTER = re.compile(rf"how many times does the letter {_Q}?([A-Za-z]){_Q}? (?:appear|occur) in "
                     rf"(?:the word )?{_WORD}\s*[?.]?", re.IGNORECASE)
_BACKWARDS = re.compile(rf"spell the word {_WORD} backwards?\s*[?.]?", re.IGNORECASE)
_UNITS = re.compile(rf"how many (\w+) are (?:there )?in ({_NUM}) (\w+)\s*[?.]?", re.IGNORECASE)
_CAPITAL = re.compile(r"capital (?:city )?of ([A-Z][A-Za-z ]*?)\s*[?.]?$")
_FACTORS = {(small, big): factor for big, small, factor in UNIT_FACTS}


def _singular(plural: str) -> str:
    return {"feet": "foot", "inches": "inch"}.get(plural, plural[:-1])


# each unit of UNIT_FACTS by its plural and its singular (``hour``, ``foot``), as its plural
_UNIT_NAMES = {name: plural for big, small, _ in UNIT_FACTS for plural in (big, small)
               for name in (plural, _singular(plural))}


def _number(value: Fraction) -> str | None:
    """An exact result as the seeds write it (``12``, ``2.5``); None for one with no short decimal form."""
    if value.denominator == 1:
        return str(value.numerator)
    scaled = value * 1000
    if scaled.denominator != 1:
        return None
    whole, thousandths = divmod(abs(scaled.numerator), 1000)
    return f"{'-' if value < 0 else ''}{whole}.{thousandths:03d}".rstrip("0")


def _evaluate(tokens: list[str]) -> Fraction | None:
    """Numbers and binary operators, ``*`` and ``/`` before ``+`` and ``-``, left to right; None on a division by
    zero."""
    terms: list[Fraction] = [Fraction(tokens[0])]
    signs: list[str] = []
    for op, num in zip(tokens[1::2], tokens[2::2]):
        op, value = _OPS[op.lower()], Fraction(num)
        if op in "*/":
            if op == "/" and value == 0:
                return None
            terms[-1] = terms[-1] * value if op == "*" else terms[-1] / value
        else:
            signs.append(op)
            terms.append(value)
    total = terms[0]
    for sign, term in zip(signs, terms[1:]):
        total = total + term if sign == "+" else total - term
    return total


def _arithmetic(question: str) -> str | None:
    if m := _EXPR.fullmatch(question):
        tokens = _TOKEN.findall(m[1])
    elif m := _NAMED.fullmatch(question):
        tokens = [m[2], _NAMED_OPS[m[1].lower()], m[3]]
    elif m := _MORE.search(question):
        tokens = [m[1], "-" if m[3].lower() in _LESS_VERBS else "+", m[4]]
    else:
        return None
    value = _evaluate(tokens)
    return _number(value) if value is not None and value >= 0 else None


def _days(question: str) -> str | None:
    for pattern, sign in ((_DAYS_AHEAD, 1), (_DAYS_AGO, -1)):
        if m := pattern.search(question):
            return DAYS[(DAYS.index(m[1].capitalize()) + sign * int(m[2])) % 7]
    return None


def _words(question: str) -> str | None:
    if m := _LETTERS.fullmatch(question):
        return str(len(m[1]))
    if m := _LETTER.fullmatch(question):
        return str(m[2].lower().count(m[1].lower()))
    if m := _BACKWARDS.fullmatch(question):
        return m[1][::-1]
    return None


def _units(question: str) -> str | None:
    if (m := _UNITS.fullmatch(question)) is None:
        return None
    factor = _FACTORS.get((_UNIT_NAMES.get(m[1].lower()), _UNIT_NAMES.get(m[3].lower())))
    return _number(Fraction(m[2]) * factor) if factor is not None else None


def _capital(question: str) -> str | None:
    m = _CAPITAL.search(question)
    return CAPITALS.get(m[1].strip()) if m else None


_FORMS = (_arithmetic, _days, _words, _units, _capital)


def computed_answer(question: str) -> str | None:
    """The answer ``question`` determines, when it has one of the computable forms; None otherwise."""
    question = " ".join(question.split())
    for form in _FORMS:
        if (answer := form(question)) is not None:
            return answer
    return None


def _leaves(value) -> list[str | int | float]:
    """The strings and numbers inside a call's arguments (booleans and nulls left out)."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return [value]
    return []


def grounded(task: Task) -> bool:
    """Whether every string and number among the call's arguments appears in the question (case and spacing aside;
    a number as a whole number, ``3`` not in ``13``, written as JSON wrote it or in its canonical form,
    ``tasks.canonical_json``, as the call scorer compares it: ``2.0`` or ``2``)."""
    question = " ".join(task.question.lower().split())
    for leaf in _leaves(task.answer.get("arguments", {})):
        if isinstance(leaf, str):
            if " ".join(leaf.lower().split()) not in question:
                return False
        elif not any(re.search(rf"(?<![\d.]){re.escape(form)}(?!\d|\.\d)", question)
                     for form in {str(leaf), canonical_json(leaf)}):
            return False
    return True


def check_answer(task: Task, seed: Task) -> str | None:
    """Why ``task``, written as a variation of ``seed``, has the wrong answer (``"wrong_answer"``,
    ``"ungrounded_call"``), or None: right, or not checkable."""
    if task.check == "tool_call":
        return "ungrounded_call" if grounded(seed) and not grounded(task) else None
    if task.check in ("exact", "f1") and (expected := computed_answer(task.question)) is not None:
        return None if exact_match(str(task.answer), expected) else "wrong_answer"
    return None
