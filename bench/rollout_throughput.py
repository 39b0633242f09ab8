"""Rollout-phase throughput: transformers backend vs vLLM backend vs TRL's GRPOTrainer generation.

    python bench/rollout_throughput.py [--model embedded] [--tasks 16] [--n 8] [--max-new 48]
                                       [--parts hf,vllm,vllm_shm,trl] [--out results.json]

Same work for every part: the agent prompts of ``--tasks`` embedded seed tasks (2 worked
examples each, as in training), ``--n`` samples each (the GRPO group), up to ``--max-new`` new
tokens, temperature 1, fp32. Each part runs in a fresh subprocess (one vLLM engine at a time) and
reports completion tokens, seconds and tokens/s, and its peak RSS:

* ``hf``: :class:`HFEngine` (``rollout=hf``: chunks of 16 prompts, shared-prefix KV cache);
* ``vllm``: :class:`VLLMEngine` in process (``rollout=vllm``): engine start, weight pushes
  (in-process ``reload_weights``), and generation twice (the first call includes one-time kernel
  set-up). ``with sync`` charges ``--pushes-per-epoch`` pushes (3 with one shared engine: the
  simulator's tasks, the agent's attempts, validation) to the rollout phase;
* ``vllm_shm``: the fallback path, with the engine core in a child process
  (``VLLM_ENABLE_V1_MULTIPROCESSING=1``): pushes through ``/dev/shm`` + ``collective_rpc``;
* ``trl``: TRL's ``GRPOTrainer._generate_single_turn`` (transformers ``generate``; rows are the
  prompts repeated ``n`` times, as TRL's sampler makes them), in generation batches of ``--trl-batch`` rows.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import random
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _setup(args):
    from lightning_genenv.config import compose
    from lightning_genenv.data import GenEnvDataModule
    from lightning_genenv.models import load_causal_lm
    from lightning_genenv.prompts import agent_messages
    from lightning_genenv.rollout import SamplingParams, encode_chat

    cfg = compose([])
    model, tok = load_causal_lm(args.model)
    model.eval()
    dm = GenEnvDataModule(cfg.data, cfg.agent, tok.pad_token_id)
    dm.setup()
    tasks = random.Random(cfg.data.seed).sample(dm.base, min(args.tasks, len(dm.base)))  # a fixed sample
    prompts = [encode_chat(tok, agent_messages(t, dm.family_examples(t, cfg.agent.num_shots))) for t in tasks]
    params = SamplingParams(n=args.n, temperature=1.0, top_p=1.0, max_new_tokens=args.max_new)
    return cfg, model, tok, prompts, params


def _timed_generate(engine, prompts, params) -> dict:
    t0 = time.perf_counter()
    groups = engine.generate(prompts, params)
    seconds = time.perf_counter() - t0
    tokens = sum(len(s.completion_ids) for g in groups for s in g)
    return {"tokens": tokens, "seconds": round(seconds, 2), "tok_s": round(tokens / seconds, 1)}


def part_hf(args) -> dict:
    from lightning_genenv.rollout import HFEngine

    _, model, tok, prompts, params = _setup(args)
    engine = HFEngine(model, tok, batch_size=16, progress=False)
    return {"generate": _timed_generate(engine, prompts, params),
            "prompt_tokens_mean": round(sum(map(len, prompts)) / len(prompts))}


def part_vllm(args) -> dict:
    from lightning_genenv.rollout import build_engine

    cfg, model, tok, prompts, params = _setup(args)
    t0 = time.perf_counter()
    engine = build_engine("vllm", model, tok, 16, progress=False, rollout_cfg=cfg.rollout)
    start = time.perf_counter() - t0
    out = {"engine_start_s": round(start, 1), "in_process": engine.host.in_process}
    if engine.host.in_process:  # the direct path TRL uses on GPUs, tried first: model.load_weights
        from lightning_genenv.rollout.vllm import checkpoint_weights

        vmodel = engine.host.llm.llm_engine.engine_core.engine_core.model_executor.driver_worker.worker \
            .model_runner.get_model()
        try:
            t0 = time.perf_counter()
            vmodel.load_weights(checkpoint_weights(model))
            out["direct_load_weights"] = f"ok in {time.perf_counter() - t0:.3f} s"
        except Exception as e:  # the CPU backend repacked the linear weights into empty params
            out["direct_load_weights"] = f"fails: {type(e).__name__}: {str(e)[:120]}"
    out["push_s"] = [round(engine.push_weights(), 3) for _ in range(args.pushes)]
    if args.gen:
        out["generate_first"] = _timed_generate(engine, prompts, params)
        out["generate"] = _timed_generate(engine, prompts, params)
    return out


def part_vllm_shm(args) -> dict:
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "1"  # engine core in a child process
    args.gen = False
    return part_vllm(args)


def part_trl(args) -> dict:
    try:
        import trl
        from datasets import Dataset
        from trl import GRPOConfig, GRPOTrainer
    except ImportError as e:
        return {"skipped": f"TRL not importable here ({e})"}
    import tempfile

    _, model, tok, prompts, params = _setup(args)
    with tempfile.TemporaryDirectory() as tmp:
        targs = GRPOConfig(output_dir=tmp, per_device_train_batch_size=args.n, num_generations=args.n,
                           max_completion_length=args.max_new, temperature=1.0, top_p=1.0, top_k=0,
                           use_cpu=True, report_to=[], bf16=False, logging_steps=1000)
        trainer = GRPOTrainer(model=model, reward_funcs=lambda completions, **kw: [0.0] * len(completions),
                              args=targs, train_dataset=Dataset.from_list([{"prompt": "x"}] * args.n),
                              processing_class=tok)
        rows = [p for p in prompts for _ in range(args.n)]
        t0 = time.perf_counter()
        tokens = 0
        for start in range(0, len(rows), args.trl_batch):
            completion_ids, _ = trainer._generate_single_turn(rows[start:start + args.trl_batch], None, {}, args.n)
            tokens += sum(len(c) for c in completion_ids)
        seconds = time.perf_counter() - t0
    return {"trl_version": trl.__version__, "rows_per_generate": args.trl_batch,
            "generate": {"tokens": tokens, "seconds": round(seconds, 2), "tok_s": round(tokens / seconds, 1)}}


PARTS = {"hf": part_hf, "vllm": part_vllm, "vllm_shm": part_vllm_shm, "trl": part_trl}


def _table(results: dict, pushes_per_epoch: int) -> str:
    hf = results.get("hf", {}).get("generate", {}).get("tok_s")
    lines = ["| backend | tokens | seconds | tok/s | vs hf | notes |", "|---|---|---|---|---|---|"]

    def row(name, g, note=""):
        ratio = f"{g['tok_s'] / hf:.2f}x" if hf else "-"
        lines.append(f"| {name} | {g['tokens']} | {g['seconds']} | {g['tok_s']} | {ratio} | {note} |")

    if "hf" in results:
        row("hf (transformers generate)", results["hf"]["generate"])
    v = results.get("vllm", {})
    if "generate" in v:
        push = sum(v["push_s"]) / len(v["push_s"])
        row("vllm, first call", v["generate_first"], "includes one-time kernel set-up")
        row("vllm", v["generate"], f"engine start {v['engine_start_s']} s (once per run)")
        g = dict(v["generate"])
        g["seconds"] = round(g["seconds"] + pushes_per_epoch * push, 2)
        g["tok_s"] = round(g["tokens"] / g["seconds"], 1)
        row(f"vllm + {pushes_per_epoch} pushes/epoch", g, f"push {push:.3f} s (in process)")
    t = results.get("trl", {})
    if "generate" in t:
        row(f"trl {t['trl_version']} GRPOTrainer (transformers)", t["generate"], f"{t['rows_per_generate']} rows per generate")
    elif "skipped" in t:
        lines.append(f"| trl | - | - | - | - | {t['skipped']} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--tasks", type=int, default=16)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--max-new", type=int, default=48)
    ap.add_argument("--pushes", type=int, default=3)
    ap.add_argument("--pushes-per-epoch", type=int, default=3)
    ap.add_argument("--trl-batch", type=int, default=32)
    ap.add_argument("--parts", default="hf,vllm,vllm_shm,trl")
    ap.add_argument("--part", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    args.gen = True
    if args.part:  # child: run one part, print one JSON line
        result = PARTS[args.part](args)
        result["peak_rss_gib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)
        print("RESULT " + json.dumps(result), flush=True)
        return
    results = {"config": {k: getattr(args, k) for k in ("model", "tasks", "n", "max_new", "pushes_per_epoch")}}
    for part in args.parts.split(","):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, __file__, "--part", part, *sys.argv[1:]],
                              capture_output=True, text=True)
        line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
        results[part] = json.loads(line[7:]) if line else {"failed": proc.stderr.strip().splitlines()[-3:]}
        results[part]["wall_s"] = round(time.perf_counter() - t0, 1)
        print(part, json.dumps(results[part]), flush=True)
    print()
    print(_table(results, args.pushes_per_epoch))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
