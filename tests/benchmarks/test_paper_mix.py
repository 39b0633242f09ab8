"""``data=paper`` (every benchmark with a derived split as one base set), the per-benchmark validation
metrics, and ``evaluate.py interface=agent`` (the held-out part in the agent's training format)."""

import random
from collections import Counter
from pathlib import Path

import pytest

from lightning_genenv.benchmarks import train_seeds as ts
from lightning_genenv.config import PAPER_MIX, compose
from lightning_genenv.prompts import agent_messages, family_examples, gold_completion
from lightning_genenv.rollout import Sample, encode_chat
from lightning_genenv.run_tasks import benchmark_of, cap_validation, load_seeds, per_benchmark
from lightning_genenv.tasks import Task

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "benchmarks"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared benchmark data not found at {DATA}")


def _task(i: int, family: str) -> Task:
    return Task(id=f"{family}-{i}", family=family, question=f"question {i} of {family}?", check="exact",
                answer=str(i))


def test_benchmark_of_and_per_benchmark_pooling():
    assert [benchmark_of(f) for f in ("api_bank/GetWeather", "bfcl/GorillaFileSystem", "bamboogle", "weather",
                                      "api_bankish/x")] == ["api_bank", "bfcl", "bamboogle", None, None]
    pooled = per_benchmark({"api_bank/a": [1.0, 0.0], "api_bank/b": [1.0], "bamboogle": [0.5], "weather": [1.0],
                            "bfcl/x": [0.0]})
    assert pooled == {"api_bank": [1.0, 0.0, 1.0], "bfcl": [0.0]}  # bamboogle's one family is its benchmark


def test_cap_validation_takes_the_benchmarks_in_turn():
    val = ([_task(i, "api_bank/a") for i in range(10)] + [_task(i, "bfcl/x") for i in range(2)]
           + [_task(i, "bamboogle") for i in range(10)])
    kept = cap_validation(val, 9, seed=0)
    # in turn (api_bank, bamboogle, bfcl): 3 rounds of 3, bfcl runs out after 2, api_bank takes the last place
    assert Counter(benchmark_of(t.family) for t in kept) == {"api_bank": 4, "bamboogle": 3, "bfcl": 2}
    assert len({t.id for t in kept}) == 9 and cap_validation(val, 9, seed=0) == kept
    assert cap_validation(val, 0, seed=0) == val and cap_validation(val, 50, seed=0) == val
    # one benchmark (or none, as the embedded families): the seeded sample it always was
    embedded = [_task(i, "weather") for i in range(10)] + [_task(i, "qa_arith") for i in range(10)]
    assert cap_validation(embedded, 5, seed=3) == random.Random(3).sample(embedded, 5)


@needs_data
def test_data_paper_mixes_every_benchmark_and_keeps_heldout_out_of_the_seeds():
    cfg = compose(["data=paper", "data.num_val=0"]).data
    base, val = load_seeds(cfg, Counter(), DATA)
    assert {benchmark_of(t.family) for t in base} == set(PAPER_MIX) == {benchmark_of(t.family) for t in val}
    for name in PAPER_MIX:
        seen = {ts.normalize(t.question) for t in base if benchmark_of(t.family) == name}
        held = {ts.normalize(t.question) for t in val if benchmark_of(t.family) == name}
        assert held and seen and not seen & held, name
    assert not {t.id for t in base} & {t.id for t in val}
    capped = load_seeds(compose(["data=paper"]).data, Counter(), DATA)[1]
    counts = Counter(benchmark_of(t.family) for t in capped)
    assert set(counts) == set(PAPER_MIX) and max(counts.values()) - min(counts.values()) <= 1


@pytest.mark.slow
@needs_data
@pytest.mark.parametrize("option", ["paper", *PAPER_MIX])
def test_each_benchmark_data_option_gives_both_players_budgets_that_fit_its_seeds(option):
    """``data=<option>`` sets agent.max_completion_length (``# @package _global_``) so that no train seed is
    unsolvable by length, and simulator.max_completion_length so that it can write tasks as long as its
    BFCL seeds and most API-Bank ones; the defaults (64, 96) cut off tool-benchmark tasks (the reason)."""
    from transformers import AutoTokenizer

    from lightning_genenv.config import AgentConfig, SimulatorConfig
    from lightning_genenv.models import resolve_model_path
    from lightning_genenv.parsing import task_to_simulator_json
    from lightning_genenv.prompts import gold_lengths

    cfg = compose([f"data={option}"])
    base, _ = load_seeds(cfg.data, Counter(), DATA)
    tok = AutoTokenizer.from_pretrained(resolve_model_path("embedded"))
    lengths = gold_lengths(base, tok)
    assert max(lengths) <= cfg.agent.max_completion_length
    written = [len(tok(task_to_simulator_json(t), add_special_tokens=False)["input_ids"]) + 1 for t in base]
    fits = sum(n <= cfg.simulator.max_completion_length for n in written) / len(written)
    if option == "bamboogle":  # short questions and answers: the default budgets are kept
        assert cfg.agent.max_completion_length == AgentConfig().max_completion_length >= max(lengths)
        assert cfg.simulator.max_completion_length == SimulatorConfig().max_completion_length >= max(written)
        return
    assert max(lengths) > AgentConfig().max_completion_length
    at_default = sum(n <= SimulatorConfig().max_completion_length for n in written) / len(written)
    assert fits == 1.0 if option == "bfcl" else at_default < 0.55 <= fits


def test_data_paper_is_a_benchmark_choice_and_other_names_are_refused():
    from lightning_genenv.config import ConfigError

    assert compose(["data=paper"]).data.benchmark == "paper"
    with pytest.raises(ConfigError, match="data.benchmark"):
        compose(["data.benchmark=papers"])


class _AnswerBook:
    """A rollout engine that answers each prompt from a book (prompt ids -> text), 'no idea' otherwise."""

    def __init__(self, book: dict):
        self.book = book

    def generate(self, prompts, params, desc=None):
        assert params.greedy and params.n == 1
        return [[Sample(list(p), [2], self.book.get(tuple(p), "no idea"), [0.0], False)] for p in prompts]


@needs_data
@pytest.mark.parametrize("name", PAPER_MIX)
def test_agent_interface_scores_the_gold_completion_1_and_a_wrong_one_0(name, tiny_dir):
    from transformers import AutoTokenizer

    from lightning_genenv.benchmarks.agent_format import AgentFormat, score_tasks

    tok = AutoTokenizer.from_pretrained(tiny_dir)
    shots, heldout = ts.benchmark_seeds(name, DATA, Counter())
    tasks = heldout[:4]
    fmt = AgentFormat(num_shots=2, max_new_tokens=64, success_threshold=0.5, subset_match=False)

    def prompt(t):
        return tuple(encode_chat(tok, agent_messages(t, family_examples(t, shots, fmt.num_shots))))

    gold = _AnswerBook({prompt(t): gold_completion(t) for t in tasks[:3]})  # the 4th gets "no idea"
    records, metrics = score_tasks(tasks, shots, gold, tok, fmt, max_context=1 << 20)
    assert [r["score"] for r in records] == [1.0, 1.0, 1.0, 0.0] and records[3]["reason"]
    tight = AgentFormat(num_shots=2, max_new_tokens=2, success_threshold=0.5, subset_match=False)
    assert score_tasks(tasks, shots, gold, tok, tight, max_context=1 << 20)[1]["gold_too_long"] == 4
    assert metrics["accuracy"] == 0.75 and metrics["n_items"] == 4
    low, high = metrics["ci95"]
    assert low < 0.75 < high
    wrong = _AnswerBook({})
    _, metrics = score_tasks(tasks, shots, wrong, tok, fmt, max_context=1 << 20)
    assert metrics["accuracy"] == 0.0 and metrics["ci95"][0] == 0.0
    # a context too small for any prompt: nothing is generated, every task scores 0 as prompt_too_long
    records, metrics = score_tasks(tasks, shots, gold, tok, fmt, max_context=8)
    assert metrics["prompt_too_long"] == 4 and metrics["accuracy"] == 0.0


def test_headline_interval_only_for_a_share_of_items():
    from lightning_genenv.benchmarks.runner import headline_interval

    assert headline_interval({"metric": "acc", "acc": 0.5}, [1.0, 0.0])["ci95"] is not None
    macro = headline_interval({"metric": "macro", "macro": 0.3}, [1.0, 0.0])  # not the mean of the items
    dense = headline_interval({"metric": "f1", "f1": 0.25}, [0.5, 0.0])
    assert macro["ci95"] is None and dense["ci95"] is None and "not the share" in macro["ci95_note"]


def test_eval_config_interface_agent_refuses_benchmarks_without_tasks():
    from lightning_genenv.benchmarks.eval_config import EvalConfig
    from lightning_genenv.config import ConfigError

    with pytest.raises(ConfigError, match="interface=agent: alfworld has no converted tasks"):
        EvalConfig(benchmark="alfworld", interface="agent")
    assert EvalConfig(benchmark="bfcl", interface="agent").rollout == "auto"  # train.py's default, written once


def test_agent_interface_budget_is_at_least_the_benchmark_data_options(tmp_path):
    """evaluate.py interface=agent: the run's settings, with a token budget no shorter than the one
    ``data=<benchmark>`` trains with, so that no item is unsolvable only because the run's budget was shorter."""
    from lightning_genenv.evaluate import _agent_format

    trained_with = compose(["data=api_bank"]).agent.max_completion_length
    assert _agent_format(None, None, "api_bank").max_new_tokens == 128 == trained_with
    assert _agent_format(None, None, "bamboogle").max_new_tokens == 64
    (tmp_path / "config.yaml").write_text("agent:\n  max_completion_length: 64\n  num_shots: 1\n")
    fmt = _agent_format(tmp_path, None, "bfcl")
    assert (fmt.max_new_tokens, fmt.num_shots) == (128, 1)
    (tmp_path / "config.yaml").write_text("agent:\n  max_completion_length: 300\n")
    assert _agent_format(tmp_path, None, "bfcl").max_new_tokens == 300
    assert _agent_format(tmp_path, 40, "bfcl").max_new_tokens == 40  # max_new_tokens= wins
