"""bench/train_step.py: before timing, ours and TRL's GRPOTrainer must do equal work on the same batch.

The script asserts it (the agent losses agree, both players' gradients agree); this runs that check on the tiny
model at a small shape, with and without a KL term. It rotted once unnoticed: after the agent began taking the
sampler's own log-probs as the old policy (``rollout=hf``, one iteration) and the default temperature moved to
0.7, the script's synthetic batch (sampler log-probs of 0, TRL at its temperature 1.0) no longer described the
same step on both sides, and at ``--beta 0`` it asked TRL for a reference model TRL does not build.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("trl", reason="trl not installed (pip install -e '.[bench]')")

from tests.bench_scripts import load_bench_script  # noqa: E402

bench = load_bench_script("train_step")


# The simulator's KL weight is kl_coef, not beta: it runs once.
@pytest.mark.parametrize("player, beta", [("agent", 0.0), ("agent", 0.04), ("simulator", 0.0)])
def test_ours_and_trl_do_equal_work(player, beta):
    args = SimpleNamespace(shape={"agent": (2, 4, 24, 8), "simulator": (2, 24, 8)}, beta=beta, kl_coef=0.1,
                           loss_type="dapo", lora=False, stored_ref=False, reps=3, no_memory=True)
    row = bench.compare(player, "tiny", args)  # raises when the losses or gradients differ
    assert row["grad_rel_diff"] < 1e-3
    if player == "agent":
        assert row["loss_ours"] == pytest.approx(row["loss_trl"], rel=1e-4, abs=1e-6)
    # the reported times are the medians of one measured step per repetition, and the rates follow from them
    for side in ("ours", "trl"):
        times = row["times"][side]
        assert len(times) == args.reps and len(row["cpu_times"][side]) == args.reps and min(times) > 0
        assert row[f"{side}_s"] == round(sorted(times)[1], 3)
        assert row[f"{side}_tok_s"] == round(row["completion_tokens"] / sorted(times)[1], 1)
    assert row["speedup"] == round(sorted(row["times"]["trl"])[1] / sorted(row["times"]["ours"])[1], 2)
