"""Benchmark harness: loaders, parsers and scorers on slices of the shared data, hand-made model
outputs (right, wrong, malformed) for every benchmark, and ``evaluate.py`` end to end on the tiny
model. Tests that need ``../shared/benchmarks`` skip when it is absent."""

import json
from collections import Counter
from pathlib import Path

import pytest

from lightning_genenv.benchmarks import (
    BENCHMARKS,
    BenchmarkDataError,
    alfworld,
    api_bank,
    bamboogle,
    bfcl,
    travelplanner,
)
from lightning_genenv.benchmarks.runner import select
from lightning_genenv.config import ConfigError

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "benchmarks"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared benchmark data not found at {DATA}")


def _load(name):
    skipped = Counter()
    bench = BENCHMARKS[name]
    return bench.load(DATA / bench.subdir, skipped), skipped


@pytest.fixture(scope="module")
def api_items():
    return _load("api_bank")[0]


@pytest.fixture(scope="module")
def bfcl_items():
    return _load("bfcl")


def test_registry_has_the_five_benchmarks():
    assert set(BENCHMARKS) == {"api_bank", "bfcl", "alfworld", "bamboogle", "travelplanner"}
    for bench in BENCHMARKS.values():
        assert bench.notes and bench.max_new_tokens > 0


def test_select_spreads_items():
    assert select(list(range(10)), 3) == [0, 3, 6]
    assert select(list(range(2)), 5) == [0, 1]


# ----------------------------------------------------------------------------- API-Bank


@needs_data
def test_api_bank_loader(api_items):
    levels = Counter(i.meta["level"] for i in api_items)
    assert levels == {1: 399, 2: 67}  # level 3 is not in the shared copy
    level2 = next(i for i in api_items if i.meta["level"] == 2)
    assert set(level2.gold) == {"name", "parameters"}  # the level-2 dict answer is normalized
    assert api_items[0].messages[0]["role"] == "system" and "<tool_call>" in api_items[0].messages[0]["content"]


@needs_data
def test_api_bank_right_wrong_malformed(api_items):
    item = api_items[0]
    gold = json.dumps(item.gold)
    right = f"<think>ok</think>\n<tool_call>\n{gold}\n</tool_call>"
    assert api_bank.score(item, right).score == 1.0
    pretty = "<tool_call>\n" + json.dumps(item.gold, indent=2) + "\n</tool_call>"
    assert api_bank.score(item, pretty).score == 1.0
    other = {"name": "Other", "parameters": {}}
    assert api_bank.score(item, f"<tool_call>\n{json.dumps(other)}\n{gold}\n</tool_call>").score == 1.0
    wrong = dict(item.gold, parameters={**item.gold["parameters"], "appointment_id": "0"})
    result = api_bank.score(item, f"<tool_call>{json.dumps(wrong)}</tool_call>")
    assert (result.score, result.reason) == (0.0, "wrong_call")
    arguments_key = {"name": item.gold["name"], "arguments": item.gold["parameters"]}
    assert api_bank.score(item, f"<tool_call>{json.dumps(arguments_key)}</tool_call>").reason == "bad_call_shape"
    truncated = '<tool_call>{"name": "ModifyRegistration", "parameters": {</tool_call>'
    assert api_bank.score(item, truncated).reason == "not_json"
    assert api_bank.score(item, "I will modify it.").reason == "no_tool_call"
    assert api_bank.score(item, "").reason == "empty"


@needs_data
def test_api_bank_summary_per_level(api_items):
    items = [api_items[0], api_items[-1]]
    results = [api_bank.score(items[0], f"<tool_call>{json.dumps(items[0].gold)}</tool_call>"),
               api_bank.score(items[1], "nothing")]
    s = api_bank.summarize(items, results)
    assert s["accuracy"] == 0.5 and s["accuracy_by_level"] == {"1": 1.0, "2": 0.0}
    assert s["levels_missing"] == [3] and s["comparable_to_paper"] is False


def test_api_bank_bad_inputs(tmp_path):
    with pytest.raises(BenchmarkDataError, match="directory not found"):
        api_bank.load(tmp_path / "nope", Counter())
    folder = tmp_path / "toolrl_processed"
    folder.mkdir()
    (folder / "level-1-api_processed.json").write_text("{not json")
    with pytest.raises(BenchmarkDataError, match="not valid JSON") as e:
        api_bank.load(tmp_path, Counter())
    assert "\n" not in str(e.value)
    good = {"system": "s", "user": "u", "answer": [{"name": "F", "parameters": {}}]}
    (folder / "level-1-api_processed.json").write_text(json.dumps([good, {"system": 1}, dict(good, answer=[])]))
    skipped = Counter()
    assert len(api_bank.load(tmp_path, skipped)) == 1
    assert skipped == {"bad_record": 1, "bad_answer": 1}


# ----------------------------------------------------------------------------- Bamboogle


@needs_data
def test_bamboogle_right_wrong_malformed():
    items, skipped = _load("bamboogle")
    assert len(items) == 125 and not skipped
    item = items[0]  # gold: "james madison"
    assert bamboogle.score(item, "<answer>James Madison</answer>").score == 1.0
    assert bamboogle.score(item, "<response>James Madison.</response>").score == 1.0
    partial = bamboogle.score(item, "<answer>Madison</answer>")
    assert partial.score == 0.0 and partial.reason == "wrong_answer" and 0 < partial.extra["f1"] < 1
    assert bamboogle.score(item, "<answer>Abraham Lincoln</answer>").extra["f1"] == 0.0
    assert bamboogle.score(item, "<answer>  </answer>").reason == "no_answer"
    assert bamboogle.score(item, "").reason == "empty"


@needs_data
def test_bamboogle_judge_hook_without_network():
    items = _load("bamboogle")[0][:3]
    results = [bamboogle.score(items[0], "<answer>James Madison</answer>"),
               bamboogle.score(items[1], "<answer>a rocket</answer>"), bamboogle.score(items[2], "")]
    calls = []

    def fake_judge(question, gold, pred):
        calls.append((question, gold, pred))
        return pred == "James Madison", "Judgment: Yes" if pred == "James Madison" else "Judgment: No"

    bamboogle.apply_judge(items, results, fake_judge)
    assert len(calls) == 2  # the unparsed answer is judged False without a call
    s = bamboogle.summarize(items, results)
    assert s["judge_accuracy"] == pytest.approx(1 / 3) and s["exact_match"] == pytest.approx(1 / 3)
    assert bamboogle.parse_verdict("Judgment: yes") is True and bamboogle.parse_verdict("maybe") is None
    assert "Predicted answer: x" in bamboogle.judge_prompt("q", "g", "x")


# ----------------------------------------------------------------------------- TravelPlanner


@needs_data
def test_travelplanner_checks_and_honest_summary():
    items, _ = _load("travelplanner")
    assert len(items) == 180
    examples = [json.loads(line) for line in (DATA / "travelplanner" / travelplanner.QUERIES).read_text().splitlines()]
    plan = examples[1]["plan"]  # idx 2: an example plan that passes every check we run
    right = travelplanner.score(items[1], "Here it is:\n" + json.dumps(plan))
    assert right.score == 1.0 and all(right.extra["checks"].values())
    repeated = [dict(day) for day in plan]
    repeated[1]["lunch"] = repeated[0]["lunch"]
    wrong = travelplanner.score(items[1], json.dumps(repeated))
    assert wrong.score == 0.0 and wrong.reason == "failed_diverse_restaurants"
    invented = [dict(day) for day in plan]
    invented[0]["dinner"] = "Nowhere Diner, Tucson"
    assert not travelplanner.score(items[1], json.dumps(invented)).extra["checks"]["within_sandbox_partial"]
    first = travelplanner.score(items[0], json.dumps(examples[0]["plan"]))  # 2 nights at a 31-night place
    assert first.reason == "failed_minimum_nights"
    assert travelplanner.score(items[1], "Day 1: fly to Tucson").reason == "no_plan"
    assert travelplanner.score(items[1], '[{"days": 1, "current_city": ').reason == "not_json"
    assert travelplanner.score(items[1], '[{"days": 1}]').reason == "bad_plan_shape"
    s = travelplanner.summarize(items[:2], [right, wrong])
    assert s["paper_metric"] is None and s["delivery_rate"] == 1.0
    assert "CS Micro" not in json.dumps(s) and all(k.startswith(("partial", "delivery", "paper", "metric",
                                                                  "not_scored", "comparable")) for k in s)


# ----------------------------------------------------------------------------- BFCL


@needs_data
def test_bfcl_loader(bfcl_items):
    items, skipped = bfcl_items
    assert len(items) == 731 and skipped == {"empty_ground_truth": 3}
    first = items[0]
    assert first.id == "multi_turn_long_context_0-turn-0" and first.messages[-1]["role"] == "user"
    second = items[1]  # gold history: turn 0 answered by its gold calls
    assert second.messages[2]["role"] == "assistant" and second.messages[2]["content"].startswith("[cd(")
    assert "mv(source: string, destination: string)" in first.messages[0]["content"]


def test_bfcl_parser_is_literal_only():
    calls, reason = bfcl.parse_calls("Sure: [cd(folder='a'), sort('f.txt')]", {"sort": ["file_name"]})
    assert reason is None and calls[1] == {"name": "sort", "arguments": {"file_name": "f.txt"}}
    assert bfcl.parse_calls("[cd(folder=__import__('os').getcwd())]")[1] == "non_literal_argument"
    assert bfcl.parse_calls("[os.system('ls')]")[1] == "bad_call_shape"
    assert bfcl.parse_calls("[cd(folder='a'")[1] == "no_call_list"
    assert bfcl.parse_calls("[cd(folder=)]")[1] == "not_python_syntax"
    assert bfcl.parse_calls("cd folder a")[1] == "no_call_list"
    assert bfcl.to_call_string({"name": "f", "arguments": {"a": "x'y", "b": [1, 2]}}) == "f(a=\"x'y\", b=[1, 2])"


def _gold_text(item):
    return "[" + ", ".join(bfcl.to_call_string(c) for c in item.gold) + "]"


@needs_data
def test_bfcl_right_wrong_malformed(bfcl_items):
    item = bfcl_items[0][0]
    right = bfcl.score(item, _gold_text(item))
    assert right.score == 1.0 and right.extra["exact"] == 1.0
    wrong = bfcl.score(item, "[cd(folder='document'), mkdir(dir_name='tmp')]")
    assert wrong.score == 0.0 and wrong.extra["exact"] == 0.0 and wrong.reason
    assert bfcl.score(item, "[shutdown(now=True)]").reason == "unknown_function"  # never executed
    assert bfcl.score(item, "[cd(folder='document'),").reason == "no_call_list"
    assert bfcl.score(item, "").reason == "empty"


@needs_data
def test_bfcl_exact_agrees_with_official_checker(bfcl_items):
    pytest.importorskip("bfcl_eval", reason="bfcl-eval not installed (pip install --no-deps bfcl-eval==2026.3.23)")
    items = [i for i in bfcl_items[0] if i.meta["entry"] in ("multi_turn_long_context_0", "multi_turn_long_context_50")]
    for item in items:
        right = bfcl.score(item, _gold_text(item))
        assert right.extra == {"exact": 1.0, "official": 1.0}, item.id
        wrong = bfcl.score(item, "[" + bfcl.to_call_string(item.gold[0]) + "]") if len(item.gold) > 1 else \
            bfcl.score(item, "[cd(folder='no_such_dir')]")
        assert wrong.extra["exact"] == wrong.extra["official"] == 0.0, item.id
    s = bfcl.summarize(items, [bfcl.score(i, _gold_text(i)) for i in items])
    assert s["all_turns_official_accuracy"] == 1.0 and s["all_turns_exact_accuracy"] == 1.0
    assert s["checker"].startswith("bfcl_eval")


# ----------------------------------------------------------------------------- ALFWorld


def _alfworld_cache(path: Path) -> Path:
    steps = [{"admissible": ["go to desk 1", "look", "inventory"], "action": "go to desk 1",
              "observation": "On the desk 1, you see a mug 1."},
             {"admissible": ["take mug 1 from desk 1", "look"], "action": "take mug 1 from desk 1",
              "observation": "You pick up the mug 1 from the desk 1."}]
    games = [
        {"game": "json_2.1.1/valid_seen/pick-Mug/trial_1/game.tw-pddl", "task_type": "pick_and_place_simple",
         "won": True, "initial": "You are in a room.\n\nYour task is to: put a mug on the shelf.", "steps": steps},
        {"game": "g2", "task_type": "clean", "won": False, "initial": "x", "steps": steps},
        {"game": "g3", "steps": "not a list"},
        {"game": "x/trial_4/game.tw-pddl", "task_type": "clean", "won": True, "initial": "y",
         "steps": [dict(steps[0], action="look")] + steps},
        {"game": "g5", "won": False, "error": "RuntimeError: crashed", "initial": "", "steps": []},
    ]
    path.write_text("\n".join(json.dumps(g) for g in games) + "\nnot json\n")
    return path


def test_alfworld_items_from_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GENENV_ALFWORLD_CACHE", str(_alfworld_cache(tmp_path / "steps.jsonl")))
    skipped = Counter()
    items = alfworld.load(tmp_path, skipped)
    assert [i.id for i in items] == ["trial_1#0", "trial_1#1", "trial_4#1", "trial_4#2"]  # opening look dropped
    assert skipped == {"expert_lost": 1, "bad_record": 1, "not_json": 1, "game_error": 1}
    prompt = items[1].messages[1]["content"]
    assert "Your task is to" in prompt and "> go to desk 1" in prompt and "take mug 1 from desk 1" in prompt
    item = items[1]
    assert alfworld.score(item, "> Take mug 1 from desk 1.").score == 1.0
    assert alfworld.score(item, "Action: take mug 1 from desk 1\nThought: done").score == 1.0
    wrong = alfworld.score(item, "look")
    assert (wrong.score, wrong.reason, wrong.extra["admissible"]) == (0.0, "wrong_action", True)
    assert alfworld.score(item, "fly to the moon").reason == "not_admissible"
    assert alfworld.score(item, "  \n ").reason == "empty"
    s = alfworld.summarize(items[:2], [alfworld.score(items[0], "go to desk 1"), wrong])
    assert s["next_action_accuracy"] == 0.5 and s["games"] == 1 and s["accuracy_by_task_type"]


def test_alfworld_partial_cache_counts_the_games_it_lacks(tmp_path, monkeypatch):
    """An interrupted build scores the games it has, and says how many of the manifest's it lacks."""
    monkeypatch.setenv("GENENV_ALFWORLD_CACHE", str(_alfworld_cache(tmp_path / "steps.jsonl")))
    manifest = [{"split": "valid_seen", "game_file": "json_2.1.1/valid_seen/pick-Mug/trial_1/game.tw-pddl"},
                {"split": "valid_seen", "game_file": "x/trial_4/game.tw-pddl"},
                {"split": "valid_seen", "game_file": "json_2.1.1/valid_seen/never-built/trial_9/game.tw-pddl"},
                {"split": "valid_seen", "game_file": "json_2.1.1/valid_seen/never-built/trial_10/game.tw-pddl"},
                {"split": "train", "game_file": "json_2.1.1/train/not-scored/trial_11/game.tw-pddl"}]
    (tmp_path / alfworld.MANIFEST).write_text("\n".join(json.dumps(g) for g in manifest) + "\n")
    skipped = Counter()
    with pytest.warns(UserWarning, match="2 valid_seen game"):
        items = alfworld.load(tmp_path, skipped)
    assert len(items) == 4 and skipped["game_not_in_cache"] == 2


def test_alfworld_missing_cache_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("GENENV_ALFWORLD_CACHE", str(tmp_path / "missing.jsonl"))
    with pytest.raises(BenchmarkDataError, match="alfworld_build") as e:
        alfworld.load(tmp_path, Counter())
    assert "\n" not in str(e.value)


# ----------------------------------------------------------------------------- evaluate.py


def test_evaluate_config_errors():
    from lightning_genenv.benchmarks.eval_config import compose_eval

    with pytest.raises(ConfigError, match="did you mean 'api_bank'"):
        compose_eval(["benchmark=api_bnk", f"data_root={ROOT}"])
    with pytest.raises(ConfigError, match="did you mean 'limit'"):
        compose_eval(["benchmark=api_bank", "limt=3", f"data_root={ROOT}"])
    with pytest.raises(ConfigError, match="required config key not set: benchmark"):
        compose_eval([f"data_root={ROOT}"])
    with pytest.raises(ConfigError, match="directory not found"):
        compose_eval(["benchmark=bfcl", "data_root=/no/such/dir"])
    with pytest.raises(ConfigError, match="wrong type"):
        compose_eval(["benchmark=bfcl", "limit=many", f"data_root={ROOT}"])


RIGHT_ANSWER = {"api_bank": lambda item: f"<tool_call>{json.dumps(item.gold)}</tool_call>",
                "bamboogle": lambda item: f"<answer>{item.gold}</answer>"}


@needs_data
@pytest.mark.parametrize("name", ["api_bank", "bamboogle"])
def test_evaluate_end_to_end_tiny(name, tiny_dir, tmp_path, monkeypatch):
    """The tiny model answers every item but the second, which gets its right answer (tests/correcting.py):
    that one must score 1, and every score must be the benchmark's own score of the output it records."""
    import evaluate
    import lightning_genenv.evaluate as evaluation
    from lightning_genenv.benchmarks.runner import select
    from tests.correcting import check_scores, correcting

    bench = BENCHMARKS[name]
    items = select(bench.load(DATA / bench.subdir, Counter()), 3)
    monkeypatch.setattr(evaluation, "build_engine", correcting(evaluation.build_engine, items[1],
                                                               RIGHT_ANSWER[name](items[1])))
    out = evaluate.main([f"benchmark={name}", "model=tiny", "limit=3", f"out={tmp_path}",
                         "max_new_tokens=8", "progress=false"])
    records = check_scores(out, bench, items, items[1])
    assert all({"prompt", "output", "parsed", "score", "reason"} <= set(r) and r["prompt"] for r in records)
    assert json.loads((out / "summary.json").read_text())["benchmark"] == name


# ----------------------------------------------------------------------------- validation hook


def test_config_knows_every_benchmark():
    from lightning_genenv.config import BENCHMARK_NAMES, compose

    assert set(BENCHMARK_NAMES) == set(BENCHMARKS)
    assert list(compose(["trainer.val_benchmarks=[api_bank,bfcl]"]).trainer.val_benchmarks) == ["api_bank", "bfcl"]
    with pytest.raises(ConfigError, match="trainer.val_benchmarks=.*must be one of api_bank"):
        compose(["trainer.val_benchmarks=[apibank]"])


class _FakeEngine:
    """Answers every prompt with a fixed text, like a rollout engine would."""

    def __init__(self, text):
        self.text = text

    def generate(self, prompts, params, desc=None):
        from lightning_genenv.rollout import Sample

        assert params.greedy and params.n == 1
        return [[Sample(list(p), [2], self.text, [0.0], False)] for p in prompts]


@needs_data
def test_validation_hook_logs_benchmark_metrics(tiny_dir):
    from types import SimpleNamespace

    from transformers import AutoTokenizer

    from lightning_genenv.callbacks.benchmarks import BenchmarkValidation

    hook = BenchmarkValidation(["bamboogle"], DATA, limit=4)
    logged = {}
    agent = SimpleNamespace(engine=_FakeEngine("<answer>James Madison</answer>"),
                            tokenizer=AutoTokenizer.from_pretrained(tiny_dir),
                            model=SimpleNamespace(config=SimpleNamespace(max_position_embeddings=4096)),
                            log=lambda key, value, **kw: logged.__setitem__(key, value))
    hook.on_validation_epoch_end(SimpleNamespace(sanity_checking=False, is_global_zero=True, current_epoch=2), agent)
    assert logged["val_bench/bamboogle/exact_match"] == 0.25  # item 0's gold is James Madison
    assert logged["val_bench/bamboogle/n_items"] == 4.0
    assert hook.metrics() == logged

    # the end: scored again only when the last epoch (current_epoch - 1 once training ended) did not validate
    written = []
    logger = SimpleNamespace(log_metrics=lambda metrics, step: written.append((step, metrics)))
    ended = SimpleNamespace(current_epoch=3, global_step=12, logger=logger, is_global_zero=True)
    hook.on_train_end(ended, agent)
    assert written == []  # epoch 2 validated: nothing more
    agent.engine = _FakeEngine("<answer>no idea</answer>")
    hook.on_train_end(SimpleNamespace(**{**vars(ended), "current_epoch": 5}), agent)  # epochs 3 and 4 did not
    assert [step for step, _ in written] == [12]
    assert written[0][1]["val_bench/bamboogle/exact_match"] == 0.0 and written[0][1]["epoch"] == 4.0
    assert hook.metrics()["val_bench/bamboogle/exact_match"] == 0.0  # the summary takes the latest
    assert hook.state_dict() == {"validated_epoch": 4}


def _needs_alfworld_env():
    pytest.importorskip("textworld", reason="textworld not installed (pip install 'textworld[pddl]==1.7.0')")
    from importlib.metadata import PackageNotFoundError, version

    try:
        if version("alfworld") != "0.3.5":
            pytest.skip("alfworld 0.3.5 not installed")
    except PackageNotFoundError:
        pytest.skip("alfworld not installed (pip install --no-deps alfworld==0.3.5)")


@needs_data
def test_alfworld_builder_plays_one_real_game(tmp_path, monkeypatch):
    _needs_alfworld_env()
    from lightning_genenv.benchmarks import alfworld_build

    out = alfworld_build.main([f"data_root={DATA}", f"out={tmp_path / 'steps.jsonl'}", "limit=1"])
    record = json.loads(out.read_text())
    assert record["won"] and record["initial"].count("Your task is to") == 1
    monkeypatch.setenv("GENENV_ALFWORLD_CACHE", str(out))
    items = alfworld.load(DATA / "alfworld", Counter())
    assert len(items) == len(record["steps"]) - 1  # the opening look is not an item
    assert all(alfworld.normalize_action(i.gold) in map(alfworld.normalize_action, i.meta["admissible"]) for i in items)
    assert alfworld.score(items[-1], items[-1].gold).score == 1.0


@needs_data
def test_evaluate_after_training_logs_to_the_run(tiny_dir, tmp_path):
    """``model=<train run dir>`` evaluates ``final/agent`` and logs to ``<run>/tb/eval``."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    import evaluate

    run = tmp_path / "run"
    (run / "final").mkdir(parents=True)
    (run / "final" / "agent").symlink_to(tiny_dir, target_is_directory=True)
    out = evaluate.main(["benchmark=bamboogle", f"model={run}", "limit=2", "max_new_tokens=4", "progress=false"])
    assert out == run / "eval" / "bamboogle" and (out / "summary.json").is_file()
    acc = EventAccumulator(str(run / "tb" / "eval"))
    acc.Reload()
    assert "eval/bamboogle/exact_match" in acc.Tags()["scalars"]


# ----------------------------------------------------------------------------- ALFWorld episodes


def test_episode_mode_config():
    from lightning_genenv.benchmarks.eval_config import compose_eval

    with pytest.raises(ConfigError, match="only benchmark=alfworld"):
        compose_eval(["benchmark=bfcl", "mode=episode", f"data_root={ROOT}"])
    with pytest.raises(ConfigError, match="must be one of step, episode"):
        compose_eval(["benchmark=alfworld", "mode=episodes", f"data_root={ROOT}"])
    with pytest.raises(ConfigError, match="max_steps=0"):
        compose_eval(["benchmark=alfworld", "mode=episode", "max_steps=0", f"data_root={ROOT}"])


@needs_data
def test_alfworld_episode_in_textworld(tiny_dir, tmp_path):
    """One real game: the expert's actions win it in the environment; replies with no action lose
    it; ``evaluate.py mode=episode`` runs end to end on the tiny model."""
    _needs_alfworld_env()
    import evaluate
    from lightning_genenv.benchmarks import alfworld_build, alfworld_episode

    game = alfworld_episode.games(DATA, 1)[0]
    path = DATA / "alfworld" / game["game_file"]
    cached = {}
    if alfworld.cache_path(DATA / "alfworld").is_file():
        cached = {json.loads(line)["game"]: json.loads(line) for line in
                  alfworld.cache_path(DATA / "alfworld").read_text().splitlines() if line.strip()}
    record = cached.get(game["game_file"]) or alfworld_build.play(path, alfworld_build.import_alfworld())
    expert = iter([s["action"] for s in record["steps"]])
    won = alfworld_episode.play(path, lambda messages: next(expert, "look"))
    assert won["won"] and won["reason"] is None and len(won["steps"]) == len(record["steps"])
    assert "Admissible actions:" in alfworld_episode.render(record["initial"], won["steps"], 1)
    lost = alfworld_episode.play(path, lambda messages: "  ", max_steps=2)
    assert (lost["won"], lost["reason"], len(lost["steps"])) == (False, "max_steps", 2)
    summary = alfworld_episode.summarize([dict(won, game="a", task_type="t"), dict(lost, game="b", task_type="t")], 50)
    assert summary["success_rate"] == 0.5 and summary["mean_steps_won"] == len(record["steps"])
    assert summary["admissible_action_rate"] == len(record["steps"]) / (len(record["steps"]) + 2)

    out = evaluate.main(["benchmark=alfworld", "mode=episode", "model=tiny", "limit=1", "max_steps=2",
                         f"out={tmp_path}", "progress=false"])
    result = json.loads((out / "summary.json").read_text())
    assert result["metric"] == "success_rate" and result["games"] == 1 and result["max_steps"] == 2
