"""The pool log: appends, commits, and detection and repair of torn and corrupted files; the pools in memory."""

import json

import pytest

from lightning_genenv import pools
from lightning_genenv.pool_records import EnvRecord, TrainRecord, read_pool
from lightning_genenv.pools import POOLS, PoolError, PoolLog, Pools


def _records(epoch: int, n: int) -> dict:
    return {"d_train": [{"epoch": epoch, "i": i, "text": f"task é {i}"} for i in range(n)],
            "d_env": [{"epoch": epoch, "i": i, "ids": list(range(i))} for i in range(2 * n)]}


def _log(tmp_path, epochs=3) -> tuple[PoolLog, dict]:
    log, everything = PoolLog(tmp_path / "pools"), {p: [] for p in POOLS}
    for e in range(epochs):
        new = _records(e, e + 2)
        log.append(e, new)
        for p in POOLS:
            everything[p] += new[p]
    return log, everything


def test_append_commits_and_reloads(tmp_path):
    log, everything = _log(tmp_path)
    again = PoolLog(tmp_path / "pools")
    assert again.counts() == {p: len(everything[p]) for p in POOLS} == log.counts()
    assert again.recover() == []
    for p in POOLS:
        assert again.load(p) == everything[p]


def test_torn_last_line_is_detected_and_set_aside(tmp_path):
    log, everything = _log(tmp_path)
    path = log.path("d_env")
    with open(path, "ab") as f:  # a kill in the middle of the next epoch's append
        f.write(b'{"epoch": 3, "i": 0, "ids": [1, 2')
    assert pools.main([f"run_dir={tmp_path}"]) == 1  # the CLI reports it
    actions = PoolLog(tmp_path / "pools").recover()
    assert len(actions) == 1 and "d_env" == actions[0]["pool"] and "1 lines" in actions[0]["action"]
    assert PoolLog(tmp_path / "pools").load("d_env") == everything["d_env"]
    quarantined = list((tmp_path / "pools" / "quarantine").glob("d_env.*"))
    assert quarantined[0].read_bytes() == b'{"epoch": 3, "i": 0, "ids": [1, 2'  # set aside, not deleted
    assert pools.main([f"run_dir={tmp_path}"]) == 0


def test_uncommitted_epoch_is_cut_back_to_the_checkpoint(tmp_path):
    log, everything = _log(tmp_path, epochs=3)
    keep = _log(tmp_path / "two", epochs=2)[1]
    actions = PoolLog(tmp_path / "pools").recover(keep=2)  # the checkpoint saw two epochs
    assert {a["pool"] for a in actions} == set(POOLS)
    log = PoolLog(tmp_path / "pools")
    assert len(log.segments) == 2 and all(log.load(p) == keep[p] for p in POOLS)
    log.append(2, _records(2, 4))  # the replayed epoch appends cleanly after the repair
    assert PoolLog(tmp_path / "pools").recover() == []


@pytest.mark.parametrize("offset", [5, -40])
def test_flipped_bytes_are_detected_and_rebuilt_from_the_checkpoint(tmp_path, offset):
    log, everything = _log(tmp_path)
    path = log.path("d_train")
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x20  # still valid-looking JSON, different content: only the checksum can tell
    path.write_bytes(bytes(data))
    assert PoolLog(tmp_path / "pools").verify("d_train") < 3
    actions = PoolLog(tmp_path / "pools").recover(records=everything)
    assert len(actions) == 1 and "rebuilt" in actions[0]["action"]
    assert PoolLog(tmp_path / "pools").load("d_train") == everything["d_train"]
    assert PoolLog(tmp_path / "pools").verify("d_train") == 3


def test_flipped_bytes_without_a_checkpoint_cut_back_to_the_last_good_epoch(tmp_path):
    log, everything = _log(tmp_path)
    path = log.path("d_env")
    data = bytearray(path.read_bytes())
    second = log.segments[1]["pools"]["d_env"]
    data[second["start"] + 3] ^= 0x01
    path.write_bytes(bytes(data))
    assert pools.main([f"run_dir={tmp_path}", "repair=true"]) == 0
    log = PoolLog(tmp_path / "pools")
    assert len(log.segments) == 1  # both pools cut back to epoch 0, the rest in quarantine
    first = _records(0, 2)
    assert all(log.load(p) == first[p] for p in POOLS)
    assert len(list((tmp_path / "pools" / "quarantine").iterdir())) == 2


def test_truncated_file_and_bad_manifest_are_clear_errors(tmp_path):
    log, _ = _log(tmp_path)
    path = log.path("d_train")
    path.write_bytes(path.read_bytes()[:10])
    with pytest.raises(PoolError, match="shorter than its manifest"):
        PoolLog(tmp_path / "pools").append(3, _records(3, 1))
    assert PoolLog(tmp_path / "pools").recover() and len(PoolLog(tmp_path / "pools").segments) == 0
    (tmp_path / "pools" / "manifest.json").write_text("{not json")
    with pytest.raises(PoolError, match="unreadable manifest"):
        PoolLog(tmp_path / "pools")
    assert pools.main([f"run_dir={tmp_path}"]) == 2


def test_checkpoint_newer_than_the_log_is_refused(tmp_path):
    _log(tmp_path, epochs=1)
    with pytest.raises(PoolError, match="older than the checkpoint"):
        PoolLog(tmp_path / "pools").recover(keep=2)


def test_encoding_is_stable():
    record = {"b": 1, "a": "é", "n": None}
    assert pools.encode(record) == pools.encode(json.loads(pools.encode(record)))


def _seed(i: int):
    from lightning_genenv.tasks import Task

    return Task(id=f"s{i}", family="qa", question=f"q{i}?", check="exact", answer=str(i))


def _env(epoch: int, reason: str) -> EnvRecord:
    return EnvRecord(epoch, "s0", "simulator", [1], [2], "x", None, reason)


def test_pools_commit_only_what_is_new_and_restore_from_state(tmp_path):
    """D_train starts as the base seeds; each commit appends the records added since the last one;
    a checkpoint taken after epoch 0 restores the pools and cuts the log back to it."""
    pools = Pools(tmp_path / "pools")
    pools.start([_seed(0), _seed(1)])
    pools.add([], [_env(0, "not_json")])
    assert pools.commit(0) == {"d_train": 2, "d_env": 1}
    state = json.loads(json.dumps(pools.state_dict()))  # what the checkpoint holds: the records' JSON objects
    assert state["d_train"][0] == {"task": _seed(0).to_dict(), "source": "seed"}
    pools.add([TrainRecord(_seed(2), "generated", 1, 0.5, [1.0, 0.0], ["a", "b"])], [_env(1, "too_long")])
    assert pools.commit(1) == {"d_train": 3, "d_env": 2}
    assert [r.reason for r in read_pool(tmp_path / "pools" / "d_env.jsonl", EnvRecord)] == ["not_json", "too_long"]
    assert not list((tmp_path / "pools").glob(".*.tmp"))
    fresh = Pools(tmp_path / "pools")
    fresh.load_state_dict(state, repair=True)
    assert fresh.as_json("d_env") == state["d_env"] and fresh.d_env == [_env(0, "not_json")]
    assert sorted(r["pool"] for r in fresh.repairs) == ["d_env", "d_train"]
    assert read_pool(tmp_path / "pools" / "d_env.jsonl", EnvRecord) == fresh.d_env
    other_rank = Pools(tmp_path / "pools")
    other_rank.load_state_dict(state, repair=False)
    assert other_rank.as_json("d_train") == state["d_train"] and other_rank.repairs == []


def test_pools_replay_only_generated_records_of_earlier_epochs():
    pools = Pools(None)
    pools.start([_seed(0)])
    pools.add([TrainRecord(_seed(i), "generated", e, 0.5, [], []) for i, e in [(1, 0), (2, 1), (3, 0)]], [])
    assert [r.task.id for r in pools.replayable(1)] == ["s1", "s3"]
    assert pools.replayable(0) == [] and pools.commit(1) == {}  # no run directory: no log
