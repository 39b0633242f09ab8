"""``data=<benchmark>``: benchmark items as training seeds, with no overlap with evaluation.

Overlap is checked by canonical content (normalized question text, and question plus canonical
answer), not just by ids: on a small synthetic fixture always, and on the real shared data when
``../shared/benchmarks`` is present."""

import json
from collections import Counter
from pathlib import Path

import pytest

from lightning_genenv.benchmarks import BENCHMARKS, BenchmarkDataError
from lightning_genenv.benchmarks import train_seeds as ts
from lightning_genenv.config import ConfigError, compose
from lightning_genenv.tasks import Task, canonical_json, validate_task

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "benchmarks"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared benchmark data not found at {DATA}")
DERIVED = [name for name, kind in ts.SPLITS.items() if kind == "derived"]

_SYSTEM = (
    "You are a helpful assistant.\n\n**Available Tools**\nIn your response, you can use the following tools:\n"
    "1. Name: {name}\nDescription: Does {name}.\nParameters: {{'city': {{'type': 'str', 'description': 'A city'}}, "
    "'days': {{'type': 'int', 'description': 'Days'}}}}\n"
    "2. Name: Other\nDescription: Another tool.\nParameters: {{}}\n\n**Steps for Each Turn**\n1. Think."
)


def _write_fixture(root: Path) -> Path:
    """A tiny API-Bank (ToolRL format) and Bamboogle copy, with duplicates and bad items."""
    qa = [{"Question": f"What is the capital of country number {i}?", "Answer": f"city {i}"} for i in range(30)]
    qa += [{"Question": "  WHAT is the capital of country number 3? ", "Answer": "city 3"},  # a duplicate
           {"Question": "", "Answer": "x"}]  # bad record
    (root / "bamboogle").mkdir(parents=True)
    (root / "bamboogle" / "bamboogle_125.json").write_text(json.dumps(qa))
    items = []
    for d in range(12):  # 12 dialogues of 2 calls each
        for turn in range(2):
            user = f"**Dialogue Records History**\n<user>Weather in town {d}, for {turn + 1} days?</user>"
            items.append({"system": _SYSTEM.format(name=f"Tool{d % 3}"), "user": user,
                          "answer": [{"name": f"Tool{d % 3}", "parameters": {"city": f"town {d}", "days": turn + 1}}],
                          "other": {"file": f"dialogue-{d}.jsonl", "id": turn}})
    items.append(dict(items[0], answer=[{"name": "Tool0", "parameters": {"country": "x"}}],
                      other={"file": "bad-argument.jsonl", "id": 0}))
    items.append(dict(items[0], system="no tools listed here", other={"file": "no-tools.jsonl", "id": 0}))
    folder = root / "api-bank" / "toolrl_processed"
    folder.mkdir(parents=True)
    (folder / "level-1-api_processed.json").write_text(json.dumps(items))
    return root


def _content(task_or_text) -> str:
    return ts.normalize(task_or_text.question if isinstance(task_or_text, Task) else task_or_text)


def _assert_no_overlap(name: str, root: Path) -> tuple[list[Task], list]:
    """Train seeds vs the held-out evaluation items, by content; returns (seeds, held-out items)."""
    bench = BENCHMARKS[name]
    items = bench.load(root / bench.subdir, Counter())
    seeds, _ = ts.seeds_from_items(name, items, Counter())
    heldout = ts.heldout_items(name, items)
    assert seeds and heldout
    assert not {s.id for s in seeds} & {i.id for i in heldout}
    held_questions = {ts.normalize(ts.question_of(name, i)) for i in heldout}
    assert not {_content(s) for s in seeds} & held_questions, "a seed's question is a held-out question"
    held_tasks = [t for t in (ts.to_task(name, i) for i in heldout) if isinstance(t, Task)]
    pairs = {(_content(t), canonical_json(t.answer)) for t in held_tasks}
    assert not {(_content(s), canonical_json(s.answer)) for s in seeds} & pairs
    prompts = [ts.normalize(" ".join(m["content"] for m in i.messages)) for i in heldout]
    leaked = [s.id for s in seeds if any(_content(s) in p for p in prompts)]
    assert not leaked, f"seed questions inside held-out prompts: {leaked[:5]}"
    return seeds, heldout


# ----------------------------------------------------------------------------- synthetic, always


@pytest.mark.parametrize("name", ["bamboogle", "api_bank"])
def test_no_overlap_on_synthetic_fixture(name, tmp_path):
    root = _write_fixture(tmp_path)
    seeds, heldout = _assert_no_overlap(name, root)
    assert all(validate_task(s) is None and s.source == "import" for s in seeds)
    if name == "api_bank":
        for s in seeds:  # tool specs are kept, typed, and hold the gold tool
            assert s.answer["name"] in {t["name"] for t in s.tools}
            assert s.tools[0]["parameters"]["properties"]["days"]["type"] == "integer"
        dialogues = Counter(i.meta["dialogue"] for i in heldout)
        assert all(n == 2 for name_, n in dialogues.items() if name_.startswith("dialogue-"))  # never split


def test_split_is_deterministic_and_counts_bad_items(tmp_path):
    root = _write_fixture(tmp_path)
    items = BENCHMARKS["api_bank"].load(root / "api-bank", Counter())
    assert ts.partition("api_bank", items) == ts.partition("api_bank", list(items))
    skipped = Counter()
    seeds, val = ts.seeds_from_items("api_bank", items, skipped)
    bad = {"bad-argument.jsonl": "unknown_argument", "no-tools.jsonl": "unreadable_tools"}
    expected = Counter(reason if ts.split_of("api_bank", f) == "train" else f"heldout:{reason}"
                       for f, reason in bad.items())
    assert skipped == expected
    assert len(seeds) + len(val) + sum(skipped.values()) == len(items)  # every item accounted for


def test_duplicate_questions_stay_on_one_side(tmp_path):
    root = _write_fixture(tmp_path)
    items = BENCHMARKS["bamboogle"].load(root / "bamboogle", Counter())
    train, heldout = ts.partition("bamboogle", items)
    dup = [i for i in items if ts.normalize(i.meta["question"]) == "what is the capital of country number 3?"]
    assert len(dup) == 2 and (all(i in train for i in dup) or all(i in heldout for i in dup))


def test_refused_benchmarks_one_line(tmp_path):
    for name in ("alfworld", "travelplanner"):
        with pytest.raises(ConfigError, match="no (usable )?train split") as e:
            compose([f"data={name}"])
        assert "\n" not in str(e.value)
        with pytest.raises(BenchmarkDataError, match="train split"):
            ts.benchmark_seeds(name, tmp_path, Counter())
    from lightning_genenv.benchmarks.eval_config import compose_eval

    with pytest.raises(ConfigError, match="split=heldout: alfworld"):
        compose_eval(["benchmark=alfworld", "split=heldout", f"data_root={tmp_path}"])


def test_datamodule_seeds_from_a_benchmark(tmp_path):
    from lightning_genenv.data import GenEnvDataModule

    root = _write_fixture(tmp_path)
    cfg = compose(["data=api_bank", f"trainer.benchmarks_root={root}"])
    dm = GenEnvDataModule(cfg.data, cfg.agent, pad_id=0, benchmarks_root=cfg.trainer.benchmarks_root)
    dm.setup()
    items = BENCHMARKS["api_bank"].load(root / "api-bank", Counter())
    train_ids = {i.id for i in ts.partition("api_bank", items)[0]}
    assert dm.base and {t.id for t in dm.base} <= train_ids
    assert dm.val and not {t.id for t in dm.val} & train_ids  # val/score on the held-out part
    assert all(t.tools for t in dm.base)
    reasons = ("unknown_argument", "unreadable_tools")
    assert set(dm.skipped) <= {f"api_bank:{p}{r}" for p in ("", "heldout:") for r in reasons}


def test_validation_hook_restricts_the_trained_benchmark(tmp_path):
    from lightning_genenv.callbacks.benchmarks import BenchmarkValidation

    root = _write_fixture(tmp_path)
    items = BENCHMARKS["bamboogle"].load(root / "bamboogle", Counter())
    hook = BenchmarkValidation(["bamboogle"], root, limit=None, heldout_for="bamboogle")
    assert [i.id for i in hook.items["bamboogle"]] == [i.id for i in ts.heldout_items("bamboogle", items)]
    assert len(BenchmarkValidation(["bamboogle"], root, limit=None).items["bamboogle"]) == len(items)


# ----------------------------------------------------------------------------- real data


@needs_data
@pytest.mark.parametrize("name", DERIVED)
def test_no_overlap_on_shared_data(name):
    seeds, heldout = _assert_no_overlap(name, DATA)
    assert all(validate_task(s) is None for s in seeds)
    if name != "bamboogle":
        assert all(s.tools and s.answer["name"] in {t["name"] for t in s.tools} for s in seeds)


@pytest.mark.parametrize("trained_on", ["bamboogle", "paper"])  # data=paper trains on bamboogle's train part too
def test_evaluate_defaults_to_heldout_for_a_run_trained_on_the_benchmark(tiny_dir, tmp_path, trained_on):
    import evaluate

    root = _write_fixture(tmp_path / "data")
    run = tmp_path / "run"
    (run / "final").mkdir(parents=True)
    (run / "final" / "agent").symlink_to(tiny_dir, target_is_directory=True)
    (run / "config.yaml").write_text(f"data:\n  benchmark: {trained_on}\n")
    heldout = ts.heldout_items("bamboogle", BENCHMARKS["bamboogle"].load(root / "bamboogle", Counter()))
    common = [f"model={run}", f"data_root={root}", "limit=2", "max_new_tokens=4", "progress=false"]
    out = evaluate.main(["benchmark=bamboogle", *common])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["split"] == "heldout" and summary["items_available"] == len(heldout)
    ids = {json.loads(line)["id"] for line in (out / "items.jsonl").read_text().splitlines()}
    assert ids <= {i.id for i in heldout}
    out = evaluate.main(["benchmark=bamboogle", "split=all", f"out={tmp_path / 'all'}", *common])
    assert json.loads((out / "summary.json").read_text())["split"] == "all"
