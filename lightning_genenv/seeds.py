"""Embedded, deterministic seed tasks: small tool-calling families and short-answer QA families.

Everything is generated from built-in vocabularies with ``random.Random(seed)``; nothing is
downloaded or read from disk. Tool-call questions are filled from templates whose placeholders are
exactly the call's arguments, so every gold argument value appears literally in the question (enum
values as spelled in the enum, numbers as digits) and an optional argument is present only when the
question states it. QA answers are computed, not looked up, except capitals from a small table.

Deliberately left out: questions that need no tool call or several calls, relative dates
("tomorrow"), boolean or nested-object arguments, paraphrased values (e.g. "euros" for ``EUR``),
the ``exact`` check (QA uses ``f1``), and any real-world knowledge beyond the built-in tables.
"""

from __future__ import annotations

import copy
import random
import string
from collections import Counter, defaultdict

from .tasks import Task, validate_task

__all__ = ["FAMILIES", "TEMPLATES", "QA_FAMILIES", "make_seeds", "split_seeds", "embedded_seeds", "top_up_held_out",
           "held_out_quotas"]


# ----------------------------------------------------------------------------- tool specs


def _s(desc: str, enum: list[str] | None = None) -> dict:
    return {"type": "string", "description": desc, **({"enum": enum} if enum else {})}


def _p(type_: str, desc: str) -> dict:
    extra = {"items": {"type": "string"}} if type_ == "array" else {}
    return {"type": type_, "description": desc, **extra}


def _tool(name: str, desc: str, required: list[str], **props: dict) -> dict:
    params = {"type": "object", "properties": props, "required": required}
    return {"name": name, "description": desc, "parameters": params}


TEMP_UNITS = ["celsius", "fahrenheit"]
CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD"]
LENGTHS = ["meters", "kilometers", "miles", "feet"]
WEIGHTS = ["grams", "kilograms", "pounds", "ounces"]
DATE = "YYYY-MM-DD"

FAMILIES: dict[str, list[dict]] = {
    "weather": [
        _tool("get_current_weather", "Current weather in a city.", ["city"],
              city=_s("City name"), units=_s("Temperature units", TEMP_UNITS)),
        _tool("get_forecast", "Daily forecast for a city.", ["city", "days"],
              city=_s("City name"), days=_p("integer", "Days ahead, 1-7"),
              units=_s("Temperature units", TEMP_UNITS)),
    ],
    "calendar": [
        _tool("create_event", "Add an event to the calendar.", ["title", "date"],
              title=_s("Event title"), date=_s(DATE), time=_s("HH:MM"),
              attendees=_p("array", "Attendee names")),
        _tool("list_events", "List calendar events on a date.", ["date"], date=_s(DATE)),
    ],
    "currency": [
        _tool("convert_currency", "Convert an amount between currencies.",
              ["amount", "from_currency", "to_currency"], amount=_p("number", "Amount"),
              from_currency=_s("From", CURRENCIES), to_currency=_s("To", CURRENCIES)),
        _tool("get_exchange_rate", "Exchange rate between two currencies.", ["base", "target"],
              base=_s("From", CURRENCIES), target=_s("To", CURRENCIES)),
    ],
    "flights": [
        _tool("search_flights", "Search flights between cities.", ["origin", "destination", "date"],
              origin=_s("Departure city"), destination=_s("Arrival city"), date=_s(DATE),
              cabin=_s("Cabin class", ["economy", "business", "first"])),
        _tool("get_flight_status", "Status of a flight.", ["flight_number"],
              flight_number=_s("Flight number, e.g. BA117")),
    ],
    "email": [
        _tool("send_email", "Send an email.", ["to", "subject"],
              to=_s("Recipient address"), subject=_s("Subject line"), body=_s("Message text")),
        _tool("search_emails", "Search the inbox.", ["query"],
              query=_s("Search text"), sender=_s("Sender address")),
    ],
    "units": [
        _tool("convert_length", "Convert a length.", ["value", "from_unit", "to_unit"],
              value=_p("number", "Value"), from_unit=_s("From", LENGTHS),
              to_unit=_s("To", LENGTHS)),
        _tool("convert_weight", "Convert a weight.", ["value", "from_unit", "to_unit"],
              value=_p("number", "Value"), from_unit=_s("From", WEIGHTS),
              to_unit=_s("To", WEIGHTS)),
    ],
    "stocks": [
        _tool("get_stock_price", "Latest price of a stock.", ["symbol"], symbol=_s("Ticker")),
        _tool("get_price_history", "Price history of a stock.", ["symbol", "period"],
              symbol=_s("Ticker"), period=_s("Time span", ["week", "month", "year"])),
    ],
    "restaurants": [
        _tool("find_restaurants", "Find restaurants in a city.", ["city"], city=_s("City name"),
              cuisine=_s("Cuisine", ["italian", "japanese", "mexican", "indian", "thai"])),
        _tool("book_table", "Reserve a table.", ["restaurant", "date", "time", "party_size"],
              restaurant=_s("Restaurant name"), date=_s(DATE), time=_s("HH:MM"),
              party_size=_p("integer", "Number of guests")),
    ],
    "maps": [
        _tool("get_directions", "Route between two places.", ["start", "end"],
              start=_s("Start place"), end=_s("End place"),
              mode=_s("Travel mode", ["driving", "walking", "transit", "cycling"])),
        _tool("find_nearby", "Find places of a kind in a city.", ["category", "city"],
              category=_s("Place kind", ["cafe", "pharmacy", "museum", "park", "hotel"]),
              city=_s("City name")),
    ],
}

# Question templates per tool. Placeholders are argument names; a template's placeholders are the
# call's arguments, so optional arguments appear only in the templates that state them.
TEMPLATES: dict[str, list[str]] = {
    "get_current_weather": [
        "What's the weather like in {city} right now?",
        "Is it raining in {city} at the moment?",
        "Tell me the current temperature in {city} in {units}.",
        "What is the weather in {city} right now, in {units}?",
    ],
    "get_forecast": [
        "What's the {days}-day forecast for {city}?",
        "Give me the weather forecast for {city} for the next {days} days.",
        "Show the {days}-day forecast for {city} in {units}.",
    ],
    "create_event": [
        "Add '{title}' to my calendar on {date}.",
        "Schedule '{title}' on {date} at {time}.",
        "Create an event '{title}' on {date} at {time} with {attendees}.",
        "Put '{title}' on my calendar for {date} and invite {attendees}.",
    ],
    "list_events": [
        "What's on my calendar on {date}?",
        "List my events for {date}.",
        "Do I have anything scheduled on {date}?",
    ],
    "convert_currency": [
        "Convert {amount} {from_currency} to {to_currency}.",
        "How much is {amount} {from_currency} in {to_currency}?",
        "I have {amount} {from_currency}; how many {to_currency} is that?",
    ],
    "get_exchange_rate": [
        "What's the exchange rate from {base} to {target}?",
        "How many {target} does one {base} buy today?",
        "Give me the current {base}/{target} rate.",
    ],
    "search_flights": [
        "Find flights from {origin} to {destination} on {date}.",
        "Are there any flights from {origin} to {destination} on {date}?",
        "Search {cabin} flights from {origin} to {destination} on {date}.",
        "I need a {cabin} seat from {origin} to {destination} on {date}.",
    ],
    "get_flight_status": [
        "Is flight {flight_number} on time?",
        "What's the status of flight {flight_number}?",
        "Has {flight_number} landed yet?",
    ],
    "send_email": [
        "Email {to} with the subject '{subject}'.",
        "Send an email to {to} titled '{subject}'.",
        "Email {to} with subject '{subject}' and body '{body}'.",
        "Send {to} an email, subject '{subject}', saying '{body}'.",
    ],
    "search_emails": [
        "Search my inbox for '{query}'.",
        "Find emails about '{query}'.",
        "Find emails about '{query}' from {sender}.",
        "Did {sender} send me anything about '{query}'?",
    ],
    "convert_length": [
        "Convert {value} {from_unit} to {to_unit}.",
        "How many {to_unit} are in {value} {from_unit}?",
        "What is {value} {from_unit} in {to_unit}?",
    ],
    "convert_weight": [
        "Convert {value} {from_unit} to {to_unit}.",
        "How many {to_unit} is {value} {from_unit}?",
        "What does {value} {from_unit} come to in {to_unit}?",
    ],
    "get_stock_price": [
        "What is {symbol} trading at?",
        "Get me the latest {symbol} share price.",
        "How much is one share of {symbol} right now?",
    ],
    "get_price_history": [
        "Show the price history of {symbol} over the past {period}.",
        "How has {symbol} moved in the last {period}?",
        "Chart {symbol} for the past {period}.",
    ],
    "find_restaurants": [
        "Find restaurants in {city}.",
        "Where can I eat in {city}?",
        "Find {cuisine} restaurants in {city}.",
        "Any good {cuisine} places to eat in {city}?",
    ],
    "book_table": [
        "Book a table for {party_size} at {restaurant} on {date} at {time}.",
        "Reserve {restaurant} for {party_size} people on {date} at {time}.",
        "Get me a table at {restaurant} on {date} at {time} for {party_size}.",
    ],
    "get_directions": [
        "How do I get from {start} to {end}?",
        "Give me directions from {start} to {end}.",
        "Get {mode} directions from {start} to {end}.",
        "Show me the {mode} route from {start} to {end}.",
    ],
    "find_nearby": [
        "Find a {category} in {city}.",
        "Is there a {category} near me in {city}?",
        "Show {category} options in {city}.",
    ],
}

POOLS: dict[str, list] = {
    "city": ["Paris", "Tokyo", "Lima", "Oslo", "Cairo", "Toronto", "Madrid", "Seoul", "Nairobi",
             "Sydney", "Berlin", "Denver", "Mumbai", "Lisbon", "Chicago", "Dublin"],
    "date": ["2025-01-08", "2025-02-21", "2025-03-14", "2025-04-02", "2025-05-30", "2025-06-11",
             "2025-07-19", "2025-08-05", "2025-09-23", "2025-10-16", "2025-11-28", "2025-12-03"],
    "time": ["08:30", "09:00", "10:15", "12:00", "13:45", "15:30", "18:00", "19:30", "20:15"],
    "days": [1, 2, 3, 4, 5, 6, 7],
    "title": ["Team sync", "Dentist appointment", "Project review", "Yoga class", "Budget meeting",
              "Lunch with Sam", "Quarterly planning", "Book club"],
    "attendees": ["Ana", "Ben", "Chloe", "David", "Elena", "Farid", "Grace", "Hiro"],
    "amount": [20, 45, 75, 100, 150, 250, 500, 1200],
    "flight_number": ["BA117", "LH456", "UA903", "AF22", "DL1580", "QF1", "EK202", "NH10"],
    "to": ["maria@example.com", "ken.ito@example.org", "j.smith@example.net", "lee@example.com",
           "ops-team@example.org", "nora.b@example.com"],
    "subject": ["Budget review", "Trip itinerary", "Invoice 2291", "Meeting notes",
                "Welcome aboard", "Weekend plans"],
    "body": ["See you at the office", "Please find the notes attached", "Thanks for your help",
             "Running ten minutes late"],
    "query": ["invoice", "flight confirmation", "meeting notes", "password reset", "receipt"],
    "value": [2, 5, 12, 20, 42, 100, 250, 3.5],
    "symbol": ["AAPL", "MSFT", "NVDA", "TSLA", "AMZN", "GOOGL", "META", "NFLX"],
    "restaurant": ["Blue Lotus", "Casa Verde", "The Golden Fork", "Sakura House", "Trattoria Roma",
                   "Spice Route"],
    "party_size": [2, 3, 4, 5, 6, 8],
    "place": ["Central Station", "City Hall", "Union Square", "Riverside Park", "Harbor Bridge",
              "Old Town Market", "the airport"],
}
# Arguments that draw from a pool named differently; args sharing a pool get distinct values.
POOL_OF = {"origin": "city", "destination": "city", "sender": "to",
           "start": "place", "end": "place"}


def _fill(rng: random.Random, tool: dict, template: str) -> tuple[str, dict]:
    """Sample values for the template's placeholders; return (question, arguments)."""
    props = tool["parameters"]["properties"]
    fields = [f for _, f, _, _ in string.Formatter().parse(template) if f]
    used: dict[object, set] = defaultdict(set)
    args, shown = {}, {}
    for name in fields:
        spec = props[name]
        key = tuple(spec["enum"]) if "enum" in spec else POOL_OF.get(name, name)
        pool = [v for v in (spec.get("enum") or POOLS[key]) if v not in used[key]]
        if spec["type"] == "array":
            value = rng.sample(pool, rng.choice([1, 2]))
            shown[name] = " and ".join(value)
        else:
            value = rng.choice(pool)
            shown[name] = str(value)
        used[key].update(value if isinstance(value, list) else [value])
        args[name] = value
    return template.format(**shown), args


# ----------------------------------------------------------------------------- QA families

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


# ----------------------------------------------------------------------------- generation

MAX_TRIES = 200


def _unique(sample, seen: set[str], what: str):
    """Call ``sample()`` until it yields a question not in ``seen``; raise if the pool runs dry."""
    for _ in range(MAX_TRIES):
        question, answer = sample()
        if question not in seen:
            seen.add(question)
            return question, answer
    raise ValueError(f"cannot generate more unique {what} questions; ask for fewer tasks")


def _draw_task(rng: random.Random, family: str, index: int, seen: set[str], task_id: str, what: str) -> Task:
    """A new validated task of ``family`` whose question is not in ``seen`` (added to it): a tool family's
    ``index``-th task calls its tools in turn, a QA family's comes from its generator. ``what`` names the
    set in the error an invalid task raises."""
    if family in FAMILIES:
        tools = FAMILIES[family]
        tool = tools[index % len(tools)]
        question, args = _unique(
            lambda: _fill(rng, tool, rng.choice(TEMPLATES[tool["name"]])), seen, tool["name"])
        check, answer = "tool_call", {"name": tool["name"], "arguments": args}
    else:
        tools = []
        question, answer = _unique(lambda: QA_FAMILIES[family](rng), seen, family)
        check = "f1"
    task = Task(id=task_id, family=family, question=question, check=check, answer=answer,
                tools=copy.deepcopy(tools), source="seed")
    reason = validate_task(task)
    if reason:
        raise ValueError(f"{what} task {task.id} is invalid: {reason}")
    return task


def make_seeds(seed: int = 0, n_tool: int = 240, n_qa: int = 60) -> list[Task]:
    """Deterministic seed tasks: ``n_tool`` tool calls round-robin over FAMILIES and their tools,
    then ``n_qa`` QA tasks round-robin over QA_FAMILIES. IDs are ``<family>-<NNNN>``."""
    rng = random.Random(seed)
    seen: set[str] = set()
    counts: dict[str, int] = defaultdict(int)
    tasks = []

    def add(family: str) -> None:
        tasks.append(_draw_task(rng, family, counts[family], seen, f"{family}-{counts[family]:04d}", "seed"))
        counts[family] += 1

    tool_families = list(FAMILIES)
    for i in range(n_tool):
        add(tool_families[i % len(tool_families)])

    qa_families = list(QA_FAMILIES)
    for i in range(n_qa):
        add(qa_families[i % len(qa_families)])
    return tasks


def split_seeds(tasks: list[Task], val_fraction: float = 0.15,
                seed: int = 0) -> tuple[list[Task], list[Task]]:
    """Deterministic split stratified by family; input order is kept within each split.

    Each family with at least two distinct questions lands in both splits. Tasks that share a
    question text always go to the same split, so no question is in both.
    """
    if not 0.0 <= val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
    rng = random.Random(seed)
    by_family: dict[str, dict[str, None]] = defaultdict(dict)  # ordered set of questions
    for t in tasks:
        by_family[t.family][t.question] = None
    val_questions: set[str] = set()
    for family in sorted(by_family):
        questions = list(by_family[family])
        rng.shuffle(questions)
        n_val = round(len(questions) * val_fraction)
        if len(questions) >= 2 and val_fraction > 0:
            n_val = min(max(n_val, 1), len(questions) - 1)
        val_questions.update(questions[:n_val])
    train = [t for t in tasks if t.question not in val_questions]
    val = [t for t in tasks if t.question in val_questions]
    return train, val


def held_out_quotas(sizes: dict[str, int], held: dict[str, int], total: int) -> dict[str, int]:
    """Held-out tasks per family: ``total`` shared in proportion to each family's size (``sizes``, largest
    remainder, ties by name), but never fewer than a family holds out already (``held``): a family whose
    share falls below that keeps its own, and the rest is shared again among the others."""
    fixed: dict[str, int] = {}
    while True:
        free = sorted(f for f in sizes if f not in fixed)
        left = total - sum(fixed.values())
        weight = sum(sizes[f] for f in free)
        exact = {f: left * sizes[f] / weight for f in free}
        quota = {f: int(exact[f]) for f in free}
        for f in sorted(free, key=lambda f: (quota[f] - exact[f], f))[:left - sum(quota.values())]:
            quota[f] += 1
        under = {f for f in free if quota[f] < held.get(f, 0)}
        if not under:
            return {**fixed, **quota}
        fixed.update({f: held.get(f, 0) for f in under})


def top_up_held_out(seeds: list[Task], held_out: list[Task], total: int, seed: int) -> list[Task]:
    """``held_out`` followed by fresh tasks of the same families, ``total`` in all, each family's share in
    proportion to its size in ``seeds`` (:func:`held_out_quotas`). The fresh tasks come from the seed
    generators on a random stream of their own (``held-out:<seed>``), so the seeds and their train split
    are those of :func:`make_seeds` and :func:`split_seeds`, unchanged; a question among ``seeds`` (or
    already drawn) is drawn again, so no held-out question is a train question. IDs are
    ``<family>-h<NNNN>``. Raises ValueError when ``total`` is below ``len(held_out)`` or a family's
    generator runs out of new questions."""
    if total < len(held_out):
        raise ValueError(f"{total} held-out tasks are fewer than the {len(held_out)} the split holds out already")
    sizes = Counter(t.family for t in seeds)
    held = Counter(t.family for t in held_out)
    quotas = held_out_quotas(dict(sizes), dict(held), total)
    rng = random.Random(f"held-out:{seed}")
    seen = {t.question for t in seeds} | {t.question for t in held_out}
    extra: list[Task] = []
    for family in [*FAMILIES, *QA_FAMILIES]:  # the generators' order: a family's draws follow the one before
        for i in range(quotas.get(family, 0) - held[family]):
            extra.append(_draw_task(rng, family, i, seen, f"{family}-h{i:04d}", "held-out"))
    return held_out + extra


def embedded_seeds(seed: int, val_fraction: float, num_held_out: int) -> tuple[list[Task], list[Task]]:
    """The default seed set, split into (train, held-out); ``num_held_out`` > 0 tops the held-out part up
    to that many tasks (:func:`top_up_held_out`; the train part stays the split's), 0 keeps the split's."""
    seeds = make_seeds(seed)
    train, held_out = split_seeds(seeds, val_fraction=val_fraction, seed=seed)
    if num_held_out:
        held_out = top_up_held_out(seeds, held_out, num_held_out, seed)
    return train, held_out
