"""The embedded tool-calling families: each family's tool specs (``FAMILIES``), question templates per tool
(``TEMPLATES``) whose placeholders are exactly the call's arguments, the value pools they draw from, and
:func:`fill_template`, which fills one template into a (question, arguments) pair.

Deliberately left out: drawing whole tasks, unique questions and splits (:mod:`lightning_genenv.seeds`).
"""

from __future__ import annotations

import random
import string
from collections import defaultdict


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


def fill_template(rng: random.Random, tool: dict, template: str) -> tuple[str, dict]:
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
