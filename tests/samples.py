"""Seed tasks shared by the parser tests (``test_parsing.py``, ``test_fuzz.py``): one tool-call seed
with a small JSON-schema tool and one exact-match QA seed (imported, like ``tests/shrunk.py``)."""

from lightning_genenv.tasks import Task

WEATHER = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"},
        },
        "required": ["city"],
    },
}
TOOL_SEED = Task(
    id="w-0",
    family="weather",
    question="What is the weather in Paris in celsius?",
    check="tool_call",
    answer={"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
    tools=[WEATHER],
)
QA_SEED = Task(
    id="qa-0",
    family="capitals",
    question="What is the capital of France?",
    check="exact",
    answer="Paris",
)
