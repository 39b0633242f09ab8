"""Can the simulator be steered at all? Fit it on the generations of earlier runs whose tasks the agent solved,
and save it for a frozen-agent run to measure (issue 23).

    python bench/steer_simulator.py pools=[runs/a/pools/d_env.jsonl,...] out=runs/steered-simulator \\
        [min_p_hat=0.25] [epochs=1] [simulator.kl_max=1e9 ...]
    python train.py experiment=frozen_agent curriculum=random simulator.difficulty_hint=false \\
        model.simulator=runs/steered-simulator seed=2 run_dir=runs/steered-s2

RWR with the α-curriculum reward learns nothing against a frozen agent here (RESULTS.md): 1-3 rewarded tasks an
epoch, weights within e of each other. This is its upper bound: the simulator fitted, as the RWR step fits it
(:class:`~lightning_genenv.simulator.SimulatorModule`, its KL term and trust region included), on every recorded
generation whose task the agent solved at least ``min_p_hat`` of the time, each with weight 1: what a perfect
curriculum signal toward solvable tasks would fit. The run after it keeps the simulator fixed
(``curriculum=random``), so its ``p̂`` against GenEnv-Random's of the same seed (``bench/paired_epochs.py``) says
whether a 135M simulator writes more solvable tasks after such a fit. Give pools of other seeds than the run's:
the fit set then holds none of the run's base tasks.

Prints the fit set (records, families, mean ``p̂``) and the fit (steps, KL to the initial simulator), and writes
``out`` (a Hugging Face directory) and ``out/steer.json``.

Deliberately left out: generating and scoring tasks itself (the frozen-agent run does, with every metric of a
run), and any fit set other than "solved at least this often".
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from lightning_genenv.coevolution.simulator_updates import OneEpochPerFit, SimulatorUpdates
from lightning_genenv.config import compose
from lightning_genenv.models import export_hf, load_from_config
from lightning_genenv.simulator import SimulatorModule
from lightning_genenv.tasks import DataError, read_jsonl_strict
from lightning_genenv.trainers import make_trainer
from lightning_genenv.values import SimRecord

OWN_KEYS = ("pools", "out", "min_p_hat", "epochs")


def fit_set(pool: list[dict], min_p_hat: float) -> tuple[list[SimRecord], list[dict]]:
    """The generations whose task was attempted and solved at least ``min_p_hat`` of the time (weight 1), and
    their pool records."""
    records, kept = [], []
    for r in pool:
        if r.get("task") is not None and r.get("p_hat") is not None and r["p_hat"] >= min_p_hat:
            kept.append(r)
            records.append(SimRecord(list(r["prompt_ids"]), list(r["completion_ids"]), 1.0))
    return records, kept


def parse(argv: list[str]) -> tuple[dict, list[str]]:
    """This script's ``key=value`` arguments, and the rest (config overrides)."""
    own, rest = {}, []
    for arg in argv:
        key, _, value = arg.partition("=")
        if key in OWN_KEYS and value:
            own[key] = value
        else:
            rest.append(arg)
    if "pools" not in own or "out" not in own:
        raise SystemExit(__doc__)
    own["pools"] = [p for p in own["pools"].strip("[]").split(",") if p]
    return own, rest


def main(argv: list[str]) -> dict:
    own, overrides = parse(argv)
    min_p_hat, epochs = float(own.get("min_p_hat", 0.25)), int(own.get("epochs", 1))
    pool = []
    for path in own["pools"]:
        if not Path(path).is_file():
            raise SystemExit(f"{path}: no such pool file (a run's pools/d_env.jsonl)")
        try:
            pool += read_jsonl_strict(path)
        except DataError as e:
            raise SystemExit(str(e)) from None
    records, kept = fit_set(pool, min_p_hat)
    if not records:
        raise SystemExit(f"no generation in {len(own['pools'])} pool files was solved at least {min_p_hat} of the time")
    cfg = compose(["experiment=frozen_agent", "curriculum.train_simulator=true", "trainer.enable_progress_bar=false",
                   *overrides])
    model, tokenizer = load_from_config(cfg.model, cfg.model.simulator)
    sim = SimulatorModule(model, tokenizer, cfg.simulator, True, cfg.strategy.cpu_offload,
                          cfg.trainer.max_nonfinite_steps)
    trainer = make_trainer(cfg, False, [OneEpochPerFit()], max_epochs=-1, enable_checkpointing=False)
    updates = SimulatorUpdates(sim, trainer, None, cfg.simulator.batch_size)
    fits = [updates.update(records) for _ in range(epochs)]
    export_hf(cfg.model, cfg.model.simulator, sim.model, tokenizer, own["out"])
    report = {"pools": own["pools"], "min_p_hat": min_p_hat, "records": len(records),
              "p_hat_mean": sum(r["p_hat"] for r in kept) / len(kept),
              "families": dict(Counter(r["seed_id"].rsplit("-", 1)[0] for r in kept).most_common()),
              "epochs": fits, "overrides": overrides}
    (Path(own["out"]) / "steer.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
