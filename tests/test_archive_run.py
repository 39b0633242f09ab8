"""bench/archive_run.py on hand-made run directories: everything but the weights copied byte for byte with its
hash, refusals before anything is written, and the copy read by held_out_gain as the run."""

import hashlib
import json

import pytest

from tests.bench_scripts import load_bench_script

archive_module = load_bench_script("archive_run")
gain_module = load_bench_script("held_out_gain")


def _run(root, name, finished=True):
    run = root / name
    for rel, text in [("config.yaml", "seed: 0\n"), ("tb/agent/events.out.tfevents.1", "scalars"),
                      ("pools/d_env.jsonl", '{"task": "g"}\n'),
                      ("validation/step0.jsonl", '{"task": "a", "sampled_rewards": [0.0, 0.5]}\n'),
                      ("validation/end.jsonl", '{"task": "a", "sampled_rewards": [1.0, 0.5]}\n'),
                      ("checkpoints/last.ckpt", "weights"), ("final/agent/model.safetensors", "weights")]:
        (run / rel).parent.mkdir(parents=True, exist_ok=True)
        (run / rel).write_text(text)
    if finished:
        (run / "summary.json").write_text('{"wall_time_s": 1.0}\n')
    return run


def test_copies_all_but_the_weights_with_hashes(tmp_path):
    run = _run(tmp_path, "r0")
    (run / "big.bin").write_bytes(b"x" * 2048)
    [target] = archive_module.main([f"runs=[{run}]", f"out={tmp_path / 'kept'}", "max_file_mb=0.001"])
    assert target == tmp_path / "kept" / "r0"
    record = json.loads((target / "archive.json").read_text())
    assert sorted(record["files"]) == ["config.yaml", "pools/d_env.jsonl", "summary.json",
                                       "tb/agent/events.out.tfevents.1", "validation/end.jsonl",
                                       "validation/step0.jsonl"]
    assert record["left_out"] == {"big.bin": "2048 bytes, over max_file_mb", "checkpoints/": "weights",
                                  "final/": "weights"}
    assert not (target / "checkpoints").exists() and not (target / "final").exists()
    for rel, entry in record["files"].items():
        data = (run / rel).read_bytes()
        assert (target / rel).read_bytes() == data
        assert entry == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    assert gain_module.start_end(target) == gain_module.start_end(run)  # an analysis reads the copy as the run


def test_refusals_name_each_run_and_write_nothing(tmp_path):
    good, unfinished = _run(tmp_path, "good"), _run(tmp_path, "half", finished=False)
    (tmp_path / "not_a_run").mkdir()
    out = tmp_path / "kept"
    with pytest.raises(SystemExit) as e:
        archive_module.main([f"runs=[{good},{unfinished},{tmp_path / 'not_a_run'}]", f"out={out}"])
    assert "half: no summary.json (unfinished" in str(e.value) and "not_a_run: not a run directory" in str(e.value)
    assert not out.exists()
    archive_module.main([f"runs=[{unfinished}]", f"out={out}", "unfinished=true"])
    with pytest.raises(SystemExit, match="half: exists"):
        archive_module.main([f"runs=[{unfinished}]", f"out={out}", "unfinished=true"])
    with pytest.raises(SystemExit, match="same directory name"):
        archive_module.main([f"runs=[{good},{tmp_path / 'other' / 'good'}]", f"out={tmp_path / 'k2'}"])


def test_a_file_already_kept_is_linked_not_stored_twice(tmp_path):
    first, second = _run(tmp_path, "s0"), _run(tmp_path, "s1")  # the same files byte for byte, but their names
    (second / "validation" / "end.jsonl").write_text('{"task": "a", "sampled_rewards": [1.0, 1.0]}\n')
    out = tmp_path / "kept"
    archive_module.main([f"runs=[{first}]", f"out={out}"])
    [target] = archive_module.main([f"runs=[{second}]", f"out={out}"])  # a later call links to the first's files
    record = json.loads((target / "archive.json").read_text())
    assert record["linked"]["validation/step0.jsonl"] == "../s0/validation/step0.jsonl"
    assert (target / "validation" / "step0.jsonl").is_symlink()
    assert "validation/end.jsonl" not in record["linked"] and not (target / "validation" / "end.jsonl").is_symlink()
    for rel, entry in record["files"].items():  # every file reads as the run's, linked or not
        assert (target / rel).read_bytes() == (second / rel).read_bytes()
        assert entry["sha256"] == hashlib.sha256((second / rel).read_bytes()).hexdigest()
    assert gain_module.start_end(target) == gain_module.start_end(second)


def test_link_within_finds_a_file_kept_outside_out(tmp_path):
    first, second = _run(tmp_path, "s0"), _run(tmp_path, "s1")
    kept = tmp_path / "results"
    archive_module.main([f"runs=[{first}]", f"out={kept / 'a'}"])
    [alone] = archive_module.main([f"runs=[{second}]", f"out={kept / 'b'}"])  # searches only its own out
    assert not json.loads((alone / "archive.json").read_text())["linked"]
    [target] = archive_module.main([f"runs=[{second}]", f"out={kept / 'c'}", f"link_within={kept / 'a'}"])
    record = json.loads((target / "archive.json").read_text())
    assert record["linked"]["validation/step0.jsonl"] == "../../a/s0/validation/step0.jsonl"
    assert (target / "validation" / "step0.jsonl").read_bytes() == (first / "validation" / "step0.jsonl").read_bytes()
    with pytest.raises(SystemExit, match="link_within=.*: not a folder"):
        archive_module.main([f"runs=[{second}]", f"out={kept / 'd'}", f"link_within={kept / 'none'}"])
    assert not (kept / "d").exists()


def test_claims_only_leaves_out_the_records_and_keeps_what_the_figures_read(tmp_path):
    run = _run(tmp_path, "r0")
    (run / "pools" / "manifest.json").write_text('{"version": 1}\n')
    (run / "static_tasks.jsonl").write_text('{"task": "s"}\n')
    [target] = archive_module.main([f"runs=[{run}]", f"out={tmp_path / 'kept'}", "claims_only=true"])
    record = json.loads((target / "archive.json").read_text())
    assert "pools/manifest.json" in record["files"] and "validation/step0.jsonl" in record["files"]
    assert record["left_out"]["pools/d_env.jsonl"] == record["left_out"]["static_tasks.jsonl"] == \
        "records no figure reads (claims_only)"
    assert gain_module.start_end(target) == gain_module.start_end(run)
