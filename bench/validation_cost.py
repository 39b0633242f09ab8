"""What one validation pass costs: the old default (46 held-out tasks x (1 greedy + 4 samples)), the per-epoch
subset (``data.num_val_subset`` tasks x (1 + ``agent.val_num_generations``)) and the whole held-out set
(``data.num_held_out`` tasks x (1 + ``agent.val_num_generations``)), with the default run's model, engine
(``rollout.backend`` as ``auto`` resolves it) and prompts, in one process (the engine starts once).

    python bench/validation_cost.py [overrides...] [--out validation_cost.json]

Prints one JSON line per pass (tasks, generations, seconds) and the default run's validation time estimated
from them: step 0 and the last epoch validate the whole set, the other ``trainer.max_epochs - 1`` epochs the
subset; the old default validated its 46 tasks ``trainer.max_epochs + 1`` times.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OLD_VAL_TASKS, OLD_VAL_GENERATIONS = 46, 4  # the default before the held-out set grew: num_held_out=0, val_num_generations=4


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("overrides", nargs="*")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    from lightning_genenv.agent import AgentModule
    from lightning_genenv.config import compose
    from lightning_genenv.data import GenEnvDataModule
    from lightning_genenv.models import load_from_config
    from lightning_genenv.rollout import choose_backend, describe
    from lightning_genenv.rollout.players import Rollouts
    from lightning_genenv.validation import ValidationBatch

    cfg = compose(args.overrides)
    model, tok = load_from_config(cfg.model, cfg.model.agent)
    backend, why = choose_backend(cfg.rollout.backend, [describe(model)])
    dm = GenEnvDataModule(cfg.data, cfg.agent, tok.pad_token_id)
    dm.setup()
    rollouts = Rollouts(cfg.rollout, backend, (model, tok))
    t0 = time.perf_counter()
    rollouts.start(progress=False)
    start_s = time.perf_counter() - t0
    agent = AgentModule(model, tok, cfg.agent, cfg.trainer.accumulate_grad_batches, cfg.strategy.cpu_offload,
                        cfg.trainer.max_nonfinite_steps, trainable=False, rollouts=rollouts,
                        shots_for=partial(dm.family_examples, k=cfg.agent.num_shots))
    results = {"backend": backend, "chosen_because": why, "engine_start_s": round(start_s, 1)}
    old = dm.val[:OLD_VAL_TASKS]  # the split's held-out tasks come first (seeds.top_up_held_out)
    passes = [("old_default", old, OLD_VAL_GENERATIONS), ("subset", dm.val_subset, cfg.agent.val_num_generations),
              ("whole", dm.val, cfg.agent.val_num_generations)]
    for name, tasks, n in passes:
        agent.cfg.val_num_generations = n
        host = getattr(rollouts.agent, "host", None)
        if host is not None:  # vLLM: no prefix cached by an earlier pass (a run's weight pushes reset it too)
            host.llm.reset_prefix_cache()
        t0 = time.perf_counter()
        metrics = agent.validate(ValidationBatch(tasks, None), full=False).metrics  # val/* on every task
        seconds = time.perf_counter() - t0
        results[name] = {"tasks": len(tasks), "samples_per_task": n, "generations": len(tasks) * (1 + n),
                         "seconds": round(seconds, 1), "val/score": round(metrics["val/score"], 4),
                         "val/reward_mean": round(metrics.get("val/reward_mean", float("nan")), 4)}
        print(name, json.dumps(results[name]), flush=True)
    epochs = cfg.trainer.max_epochs
    before = (epochs + 1) * results["old_default"]["seconds"]
    after = 2 * results["whole"]["seconds"] + (epochs - 1) * results["subset"]["seconds"]
    results["run_estimate"] = {"epochs": epochs, "validation_before_s": round(before), "validation_after_s": round(after),
                               "added_s": round(after - before)}
    print("run_estimate", json.dumps(results["run_estimate"]), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
