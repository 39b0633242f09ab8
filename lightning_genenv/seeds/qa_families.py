"""The embedded short-answer QA families: each a generator of (question, answer) pairs whose answer is
computed (arithmetic, weekdays, words, unit conversions) or read from a small table (capitals).

Deliberately left out: drawing whole tasks, unique questions and splits (:mod:`lightning_genenv.seeds`).
"""

from __future__ import annotations

import random

DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
CAPITALS = {
    "France": "Paris", "Japan": "Tokyo", "Peru": "Lima", "Norway": "Oslo", "Egypt": "Cairo",
    "Canada": "Ottawa", "Spain": "Madrid", "Kenya": "Nairobi", "Australia": "Canberra",
    "Germany": "Berlin", "Italy": "Rome", "Brazil": "Brasilia", "Portugal": "Lisbon",
    "Ireland": "Dublin", "Mexico": "Mexico City", "Sweden": "Stockholm", "Greece": "Athens",
    "Argentina": "Buenos Aires", "Poland": "Warsaw", "Thailand": "Bangkok",
}
WORDS = ["banana", "planet", "letter", "garden", "coffee", "mirror", "bottle", "window",
         "pepper", "rocket", "summer", "yellow", "silver", "butter", "tunnel", "cherry"]
# (larger unit, smaller unit, how many smaller units make one larger unit)
UNIT_FACTS = [("hours", "minutes", 60), ("minutes", "seconds", 60), ("days", "hours", 24),
              ("weeks", "days", 7), ("meters", "centimeters", 100), ("kilometers", "meters", 1000),
              ("kilograms", "grams", 1000), ("feet", "inches", 12), ("liters", "milliliters", 1000)]
NAMES = ["Ana", "Ben", "Chloe", "David", "Elena", "Farid"]


def _qa_arith(rng: random.Random) -> tuple[str, str]:
    a, b = rng.randint(10, 99), rng.randint(2, 60)
    kind = rng.randrange(4)
    if kind == 0:
        return f"What is {a} plus {b}?", str(a + b)
    if kind == 1:
        return f"What is {a + b} minus {b}?", str(a)
    if kind == 2:
        x, y = rng.randint(2, 12), rng.randint(2, 12)
        return f"What is {x} times {y}?", str(x * y)
    name = rng.choice(NAMES)
    question = f"{name} has {a} apples and buys {b} more. How many apples does {name} have now?"
    return question, str(a + b)


def _qa_days(rng: random.Random) -> tuple[str, str]:
    i, n = rng.randrange(7), rng.randint(1, 30)
    if rng.random() < 0.5:
        question = f"If today is {DAYS[i]}, what day of the week will it be in {n} days?"
        return question, DAYS[(i + n) % 7]
    question = f"If today is {DAYS[i]}, what day of the week was it {n} days ago?"
    return question, DAYS[(i - n) % 7]


def _qa_capitals(rng: random.Random) -> tuple[str, str]:
    country = rng.choice(sorted(CAPITALS))
    template = rng.choice(["What is the capital of {}?", "Which city is the capital of {}?"])
    return template.format(country), CAPITALS[country]


def _qa_words(rng: random.Random) -> tuple[str, str]:
    word = rng.choice(WORDS)
    kind = rng.randrange(3)
    if kind == 0:
        return f"How many letters are in the word '{word}'?", str(len(word))
    if kind == 1:
        letter = rng.choice(sorted(set(word)))
        question = f"How many times does the letter '{letter}' appear in '{word}'?"
        return question, str(word.count(letter))
    return f"Spell the word '{word}' backwards.", word[::-1]


def _qa_units(rng: random.Random) -> tuple[str, str]:
    big, small, factor = rng.choice(UNIT_FACTS)
    n = rng.randint(2, 12)
    return f"How many {small} are in {n} {big}?", str(n * factor)


QA_FAMILIES = {"qa_arith": _qa_arith, "qa_days": _qa_days, "qa_capitals": _qa_capitals,
               "qa_words": _qa_words, "qa_units": _qa_units}
