"""bench/near_duplicates.py on hand-made D_env records: each near-duplicate attributed to the reference it copies."""

import json

import pytest

from lightning_genenv.pool_records import EnvRecord
from tests.bench_scripts import load_bench_script
from tests.samples import QA_SEED

near_duplicates = load_bench_script("near_duplicates")


def _gen(epoch, question, answer, recorded, source="simulator"):
    text = None if question is None else f'{question}","answer":"{answer}"}}'
    return EnvRecord(epoch, QA_SEED.id, source, None, None, text, None, None, novelty=recorded)


RECORDS = [
    _gen(0, "What is the capital city of France?", "Paris", 1 / 7),  # the seed reworded: 1 word of 7 inserted
    _gen(0, "Which river flows through Paris, France?", "Seine", 1.0),  # new
    _gen(0, "Which river flows through Paris?", "Seine", 1 / 6),  # the previous generation less one word of 6
    _gen(0, "Name the largest city of Spain", "Madrid", 0.1),  # near only to something the prompt showed
    _gen(0, "What is the capital of France today?", "Paris", 0.25),  # recorded above its distance to the seed (1/7)
    _gen(0, None, None, None),  # not JSON when written: a generation, nothing to attribute
    _gen(0, "Which river flows through Paris?", "Seine", 0.0, source="static"),  # not the simulator's
    _gen(1, "Which river flows through Paris?", "Seine", 1.0),  # a new epoch: epoch 0's generations are not references
]


def test_attribution_on_hand_made_records():
    table = near_duplicates.attribute(RECORDS, {QA_SEED.id: QA_SEED})
    e0, e1 = table[0], table[1]
    assert e0["generations"] == 6 and e0["near_duplicate"] == 4
    assert (e0["seed"], e0["earlier"], e0["shown"], e0["mismatch"]) == (1, 1, 1, 1)
    assert e1["generations"] == 1 and e1["near_duplicate"] == 0


def test_markdown_and_run_files(tmp_path):
    pools = tmp_path / "run" / "pools"
    pools.mkdir(parents=True)
    (pools / "d_train.jsonl").write_text(json.dumps({"task": QA_SEED.to_dict(), "source": "seed"}) + "\n")
    (pools / "d_env.jsonl").write_text("".join(json.dumps(r.to_json()) + "\n" for r in RECORDS))
    text = near_duplicates.markdown({"run": near_duplicates.run_table(tmp_path / "run")})
    assert "| run | 0 | 6 | 0.67 | 1 | 1 | 1 | 1 |" in text and "| run | 1 | 1 | 0.00 | 0 | 0 | 0 | 0 |" in text
    (pools / "d_env.jsonl").write_text("not json\n")
    assert near_duplicates.main([f"runs=[{tmp_path / 'run'}]"]) == 2  # a bad pool line: one message, no traceback
    assert near_duplicates.main([]) == 2


@pytest.mark.parametrize("recorded", [0.29, 0.3])
def test_the_threshold_is_the_generation_step_s(recorded):
    table = near_duplicates.attribute([_gen(0, "Name the largest city of Spain", "Madrid", recorded)],
                                      {QA_SEED.id: QA_SEED})
    assert table[0]["near_duplicate"] == (recorded < 0.3)
