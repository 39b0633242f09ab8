"""Wall time of one co-evolution epoch, split by phase, and how each phase grows.

    python bench/epoch_profile.py [--model tiny-sft|tiny|embedded] [--epochs 1] [--reps 1] [--clock wall|cpu]
                                  [--out profile.json]

Runs ``train.main`` (the real entry point) in a fresh subprocess per configuration and reads the
phase times the co-evolution callback already logs to TensorBoard (``time/*``): task generation,
agent rollouts, reward scoring (R_agent, p̂, R_env, advantages), pool write, agent update,
validation, simulator update, weight sync. The checkpoint (the agent's ``last.ckpt`` plus the
simulator's ``simulator-<k>.ckpt``) is written after the callback has logged, so its time is taken
by wrapping ``Trainer.save_checkpoint`` and adding up each epoch's saves.

Configurations: a base (``--model`` with a shrunk config), then the seeds doubled (with
``tasks_per_epoch``, so the epoch's data doubles) and ``num_generations`` doubled. A phase that
scales linearly grows 2x with the work it does; much more than 2x points at a quadratic scan.
With ``--epochs > 1`` the table is per epoch, to show phases that grow with the pools.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PHASES = ["generate_tasks", "agent_rollouts", "reward_scoring", "prepare_groups", "pool_write", "agent_update",
          "validation", "simulator_update", "weight_sync", "checkpoint"]
BASE = {"data.families": "[weather,qa_arith]", "data.num_val": 4, "data.seeds_per_epoch": 4, "data.tasks_per_epoch": 8,
        "data.replay_per_epoch": 2, "simulator.num_variations": 2, "agent.num_generations": 4,
        "agent.max_completion_length": 40, "simulator.max_completion_length": 48, "simulator.kl_max": 10.0,
        "trainer.enable_progress_bar": "false", "model.lora.enabled": "false", "trainer.save_hf": "false"}
EMBEDDED = {**BASE, "agent.max_completion_length": 24, "simulator.max_completion_length": 48,
            "agent.num_generations": 2, "data.seeds_per_epoch": 2, "data.tasks_per_epoch": 4, "data.num_val": 2}


def model_dir(name: str) -> str:
    """``tiny-sft``: the tiny model after the tests' short format SFT, so the simulator writes some valid tasks."""
    if name != "tiny-sft":
        return name
    from tests.tiny_sft import tiny_sft_model_dir

    return str(tiny_sft_model_dir())


def configs(model: str) -> list[tuple[str, dict]]:
    base = dict(EMBEDDED if model == "embedded" else BASE)
    seeds, tasks, n = base["data.seeds_per_epoch"], base["data.tasks_per_epoch"], base["agent.num_generations"]
    return [("base", base),
            ("seeds x2", {**base, "data.seeds_per_epoch": 2 * seeds, "data.tasks_per_epoch": 2 * tasks}),
            ("num_generations x2", {**base, "agent.num_generations": 2 * n})]


def one(spec: dict) -> dict:
    """In the child: one run of train.main, phase times per epoch from its TensorBoard events."""
    import lightning as L
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    import train
    from lightning_genenv.coevolution import telemetry

    checkpoint_times = []
    save = L.Trainer.save_checkpoint
    clock = telemetry.clock  # the callback's own timers' clock: the parent set LIGHTNING_GENENV_TIMER_CLOCK

    pending = [0.0]  # the simulator's save comes first in an epoch, then the agent's last.ckpt

    def timed_save(self, filepath, *args, **kwargs):
        start = clock()
        save(self, filepath, *args, **kwargs)
        pending[0] += clock() - start
        if "last.ckpt" in str(filepath):
            checkpoint_times.append(pending[0])
            pending[0] = 0.0

    L.Trainer.save_checkpoint = timed_save
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        args = [f"{k}={v}" for k, v in spec["overrides"].items()]
        start = time.perf_counter()
        train.main([f"model.agent={spec['model']}", f"model.simulator={spec['model']}", f"run_dir={run_dir}",
                    f"trainer.max_epochs={spec['epochs']}", *args])
        total = time.perf_counter() - start
        events = EventAccumulator(str(run_dir / "tb" / "agent"), size_guidance={"scalars": 0})
        events.Reload()
        epochs = [{} for _ in range(spec["epochs"])]
        for phase in PHASES[:-1]:
            tag = f"time/{phase}"
            values = [e.value for e in events.Scalars(tag)] if tag in events.Tags()["scalars"] else []
            for i, v in enumerate(values[:spec["epochs"]]):
                epochs[i][phase] = v
        for i, v in enumerate(checkpoint_times[:spec["epochs"]]):
            epochs[i]["checkpoint"] = v
        summary = json.loads((run_dir / "summary.json").read_text())
    return {"epochs": epochs, "run_s": total, "agent_steps": summary["agent_steps"], "checkpoint_saves": checkpoint_times}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny-sft", help="tiny-sft, tiny, embedded or a model directory")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--reps", type=int, default=1, help="runs per configuration (medians reported)")
    parser.add_argument("--clock", default="wall", choices=["wall", "cpu"],
                        help="cpu: the callback's timers read the process's CPU time (steadier on a shared machine)")
    parser.add_argument("--out", default=None)
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # internal: one run, as JSON
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(json.loads(args.one))))
        return

    model = model_dir(args.model)
    results = {name: [] for name, _ in configs(args.model)}
    for _ in range(args.reps):  # the configurations take turns, so that outside load hits them alike
        for name, overrides in configs(args.model):
            spec = json.dumps({"model": model, "epochs": args.epochs, "overrides": overrides, "clock": args.clock})
            proc = subprocess.run([sys.executable, __file__, "--one", spec], capture_output=True, text=True, cwd=ROOT,
                                  env={**os.environ, "LIGHTNING_GENENV_TIMER_CLOCK": args.clock})
            if proc.returncode:
                sys.exit(f"{name} failed:\n{proc.stderr[-3000:]}")
            results[name].append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(name, json.dumps(results[name][-1]), flush=True)

    def median(values):
        values = sorted(values)
        return values[len(values) // 2] if values else float("nan")

    table = {name: [{p: median([r["epochs"][e].get(p, float("nan")) for r in runs]) for p in PHASES}
                    for e in range(args.epochs)] for name, runs in results.items()}
    print()
    print(f"model {args.model}, {args.epochs} epoch(s), median of {args.reps} run(s); {args.clock} seconds per phase")
    print()
    names = list(table)
    head = " | ".join(f"{n} (s)" for n in names)
    print(f"| epoch | phase | {head} | seeds x2 / base | num_generations x2 / base |")
    print("|---|---|" + "---|" * (len(names) + 2))
    for e in range(args.epochs):
        for p in PHASES + ["total"]:
            values = [sum(v for v in table[n][e].values() if v == v) if p == "total" else table[n][e][p] for n in names]
            base = values[0]
            ratios = [f"{v / base:.2f}x" if base > 0.005 else "-" for v in values[1:]]
            print(f"| {e} | {p} | " + " | ".join(f"{v:.2f}" for v in values) + " | " + " | ".join(ratios) + " |")
    if args.out:
        Path(args.out).write_text(json.dumps({"table": table, "runs": results}, indent=1))


if __name__ == "__main__":
    main()
