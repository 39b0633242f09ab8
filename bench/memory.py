"""Peak memory of one agent (GRPO) update and one simulator (RWR) update.

    python bench/memory.py [--models tiny,embedded] [--shape default|small] [--out table.md]

Each configuration runs in a fresh subprocess: load the player, build its module (full
fine-tuning keeps a frozen copy as reference / initial simulator; LoRA uses the base with adapters
disabled), run one forward + backward + AdamW step on a fixed synthetic batch, and report the
process's peak RSS (CPU) or peak allocated CUDA memory (GPU), before and after the step.
Batch shapes (``--shape``): ``default`` follows the CPU defaults (agent 2 groups x 8 completions,
prompt 300 + completion 48 tokens; simulator 4 generations, prompt 300 + 96 tokens), where
activations dominate; ``small`` (agent 1 group x 4, 128 + 32; simulator 1 x 128 + 64) shows the
weights, the reference copy, gradients and optimizer state.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lightning_genenv.config import LoraConfig  # noqa: E402

SHAPES = {  # player -> (groups, completions per group, prompt tokens, completion tokens)
    "default": {"agent": (2, 8, 300, 48), "simulator": (4, 1, 300, 96)},
    "small": {"agent": (1, 4, 128, 32), "simulator": (1, 1, 128, 64)},
}
LORA = {k: v for k, v in asdict(LoraConfig()).items() if k != "enabled"}  # the schema's LoRA (config/schema.py)


def peak_mb() -> float:
    import torch

    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one(model_name: str, player: str, lora: bool, checkpointing: bool, shape: str = "default") -> dict:
    import torch

    from lightning_genenv.agent import AgentModule
    from lightning_genenv.config import compose
    from lightning_genenv.epoch_values import pad_batch
    from lightning_genenv.models import load_causal_lm
    from lightning_genenv.simulator import SimulatorModule

    torch.manual_seed(0)
    model, tok = load_causal_lm(model_name, lora=LORA if lora else None, gradient_checkpointing=checkpointing)
    cfg = compose(["model=tiny"])
    vocab = model.config.vocab_size
    common = (cfg.strategy.cpu_offload, cfg.trainer.max_nonfinite_steps)
    module = (AgentModule(model, tok, cfg.agent, cfg.trainer.accumulate_grad_batches, *common,
                          trainable=cfg.curriculum.train_agent) if player == "agent"
              else SimulatorModule(model, tok, cfg.simulator, cfg.curriculum.train_simulator, *common))
    groups, n, p_len, c_len = SHAPES[shape][player]
    module.log_dict = lambda *a, **k: None  # no trainer attached in a micro-benchmark
    device = "cuda" if torch.cuda.is_available() else "cpu"
    module.to(device)
    prompts = [torch.randint(3, vocab, (p_len,)).tolist() for _ in range(groups)]
    completions = [torch.randint(3, vocab, (c_len,)).tolist() for _ in range(groups * n)]
    batch = pad_batch(prompts, completions, tok.pad_token_id)
    batch["advantages"] = torch.randn(groups * n)
    batch["rewards"] = torch.rand(groups * n)
    batch["sampling_logprobs"] = torch.zeros(groups * n, c_len)
    batch["weights"] = torch.ones(groups * n)
    batch = {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}
    optimizer = module.configure_optimizers()
    before = peak_mb()
    start = time.perf_counter()
    loss = module.training_step(batch, 0)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    seconds = time.perf_counter() - start
    return {"model": model_name, "player": player, "shape": shape, "mode": "LoRA r=16" if lora else "full",
            "checkpointing": checkpointing, "peak_mb_after_load": round(before), "peak_mb": round(peak_mb()),
            "step_s": round(seconds, 2), "trainable": sum(p.numel() for p in module.trainable_parameters()),
            "separate_reference_copy": module.anchor is not None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="tiny,embedded")
    parser.add_argument("--shape", default="default", choices=sorted(SHAPES))
    parser.add_argument("--out", default=None, help="write the markdown table here")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # internal: one config as JSON
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(**json.loads(args.one))))
        return
    rows = []
    for model in args.models.split(","):
        for player in ("agent", "simulator"):
            for lora in (False, True):
                for ckpt in (False, True):
                    spec = json.dumps({"model_name": model, "player": player, "lora": lora, "checkpointing": ckpt,
                                       "shape": args.shape})
                    proc = subprocess.run([sys.executable, __file__, "--one", spec], capture_output=True, text=True)
                    if proc.returncode:
                        sys.exit(f"{spec} failed:\n{proc.stderr[-2000:]}")
                    rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
                    print(rows[-1], flush=True)
    lines = [f"Batch shape: {args.shape} ({SHAPES[args.shape]})", "",
             "| model | player | mode | grad. ckpt | separate ref copy | peak after load (MB) | peak after step (MB) | step (s) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['player']} | {r['mode']} | {'yes' if r['checkpointing'] else 'no'} | "
                     f"{'yes' if r['separate_reference_copy'] else 'no (adapters off)'} | {r['peak_mb_after_load']} | "
                     f"{r['peak_mb']} | {r['step_s']} |")
    for model in args.models.split(","):
        for player in ("agent", "simulator"):
            full = next(r for r in rows if (r["model"], r["player"], r["mode"], r["checkpointing"]) == (model, player, "full", False))
            lora = next(r for r in rows if (r["model"], r["player"], r["mode"], r["checkpointing"]) == (model, player, "LoRA r=16", False))
            lines.append("")
            lines.append(f"{model} {player}: LoRA with adapter-disabled reference / full fine-tuning with a separate "
                         f"reference copy = {lora['peak_mb']} / {full['peak_mb']} MB = {lora['peak_mb'] / full['peak_mb']:.2f}x")
    table = "\n".join(lines)
    print(table)
    if args.out:
        Path(args.out).write_text(table + "\n")


if __name__ == "__main__":
    main()
