"""One co-evolution run on 2 CPU processes (gloo) with DDP and with FSDP2: both players train, and
every rank ends with identical weights and identical pools."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from transformers import AutoModelForCausalLM

from lightning_genenv.distributed import fingerprint, gather, shard
from lightning_genenv.models import load_causal_lm

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["strategy.accelerator=cpu", "strategy.devices=2", "data.families=[weather,qa_arith]", "data.num_val=4",
        "data.seeds_per_epoch=4", "data.tasks_per_epoch=8", "simulator.num_variations=2",
        "agent.max_completion_length=40", "simulator.max_completion_length=48", "trainer.max_epochs=2",
        "trainer.enable_progress_bar=false", "model.lora.enabled=false", "simulator.kl_max=10",
        "agent.learning_rate=1e-3", "simulator.learning_rate=1e-3", "curriculum.k_min=0.0",
        # the reference policy's forward and every epoch's validation are sharded and compared too
        "agent.beta=0.001", "trainer.val_every_n_epochs=1",
        # constant: a linear schedule spans the run's max_epochs, so the resume test's one-epoch first
        # half would decay faster than the uninterrupted run's
        "agent.lr_scheduler_type=constant"]


def test_shard_and_gather_are_inverse_over_three_ranks(monkeypatch):
    """Each rank's round-robin share (uneven: 7 items over 3 ranks), gathered through JSON with a codec, is the
    whole list in its order on every rank; ``all_gather_object`` is a stand-in that hands each rank every
    rank's JSON, as gloo would. With one process both are the identity."""
    import lightning_genenv.distributed as distributed

    items = [{"i": i} for i in range(7)]
    assert shard(items) == items and gather(items) == items
    size, shares = 3, {}
    for rank in range(size):
        monkeypatch.setattr(distributed, "world", lambda rank=rank: (rank, size))
        shares[rank] = shard(items)
    assert [[x["i"] for x in shares[r]] for r in range(size)] == [[0, 3, 6], [1, 4], [2, 5]]
    for rank in range(size):
        def all_gather_object(parts, obj, rank=rank):
            parts[:] = [obj if r == rank else json.dumps([x["i"] for x in shares[r]]) for r in range(size)]

        monkeypatch.setattr(distributed, "world", lambda rank=rank: (rank, size))
        monkeypatch.setattr(distributed.dist, "all_gather_object", all_gather_object)
        assert gather(shares[rank], encode=lambda x: x["i"], decode=lambda i: {"i": i}) == items


def _train(*args) -> None:
    proc = subprocess.run([sys.executable, "train.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]


def _reports(out: Path) -> list[dict]:
    return [json.loads((out / "ranks" / f"rank{r}.json").read_text()) for r in (0, 1)]


def _bench_root(root: Path) -> Path:
    """A 5-question Bamboogle copy for the benchmark validation hook (odd: the shares are 3 and 2)."""
    (root / "bamboogle").mkdir(parents=True, exist_ok=True)
    qa = [{"Question": f"What is {i} plus {i}?", "Answer": str(2 * i)} for i in range(5)]
    (root / "bamboogle" / "bamboogle_125.json").write_text(json.dumps(qa))
    return root


def _bench_args(tmp_path: Path) -> list[str]:
    return ["trainer.val_benchmarks=[bamboogle]", "trainer.val_benchmark_limit=5",
            f"trainer.benchmarks_root={_bench_root(tmp_path / 'bench')}"]


@pytest.fixture(scope="module", params=["ddp", "fsdp"])
def uninterrupted(request, tiny_sft_dir, tmp_path_factory) -> tuple[str, Path]:
    """``(strategy, run_dir)`` of a two-epoch run; both tests of a strategy share it, in any order."""
    strategy, tmp = request.param, tmp_path_factory.mktemp(f"uninterrupted-{request.param}")
    out = tmp / "run"
    _train(f"strategy={strategy}", f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}",
           f"run_dir={out}", *ARGS, *_bench_args(tmp))
    return strategy, out


@pytest.mark.slow
def test_two_process_run_keeps_ranks_identical(uninterrupted, tiny_sft_dir):
    """Also runs the benchmark validation hook on both ranks (under FSDP generation needs both)."""
    _, out = uninterrupted
    reports = _reports(out)
    assert reports[0] == reports[1], "ranks diverged"
    start = fingerprint(load_causal_lm(tiny_sft_dir)[0])
    assert reports[0]["agent"] != start and reports[0]["simulator"] != start, "a player did not train"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["simulator_epochs"] >= 1 and summary["agent_steps"] == 2 * (8 // 2 // 2)
    assert summary["val_bench/bamboogle/n_items"] == 5.0  # both ranks' shares, gathered
    assert "val_bench/bamboogle/exact_match" in summary
    d_env = (out / "pools" / "d_env.jsonl").read_text().splitlines()
    assert len(d_env) == 2 * 4 * 2  # every generation of both ranks, written once
    exported = AutoModelForCausalLM.from_pretrained(out / "final" / "agent")
    assert fingerprint(exported) == reports[0]["agent"]  # the export holds the full trained weights


@pytest.mark.slow
def test_two_process_resume_equals_uninterrupted_run(uninterrupted, tiny_sft_dir, tmp_path):
    """One epoch, stop, ``resume=`` for the second: the same weights and pools, bit for bit, as the
    uninterrupted two-epoch run, under DDP and FSDP2 (sharded checkpoints are gathered to one file and
    re-sharded)."""
    strategy, reference_dir = uninterrupted
    out = tmp_path / "run"
    _train(f"strategy={strategy}", f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}",
           f"run_dir={out}", *ARGS, *_bench_args(tmp_path), "trainer.max_epochs=1")
    _train(f"resume={out}", "trainer.max_epochs=2")
    reports, reference = _reports(out), _reports(reference_dir)[0]
    assert reports[0] == reports[1], "ranks diverged after resuming"
    assert reports[0] == reference
