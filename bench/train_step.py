"""One training step, ours against TRL's GRPOTrainer, side by side in one process.

    python bench/train_step.py [--models tiny,embedded] [--reps 5] [--loss-type dapo] [--beta 0.04] [--lora]
                               [--groups G --n N --prompt P --completion C] [--sim-rows R --sim-prompt P --sim-completion C]
                               [--out results.json]

For each model, on one synthetic batch (random token ids; prompt lengths in [3P/4, P], completion
lengths in [C/2, C], rewards in [0, 1], group-relative advantages):

* agent: our ``AgentModule.training_step`` + backward (shared-prefix log-probs, reference log-probs
  from the frozen anchor under no_grad, ``grpo_loss``) against TRL's step on the same batch:
  reference log-probs with its ``ref_model`` under no_grad (what ``_generate_and_score_completions``
  does once per generation batch) + ``GRPOTrainer.compute_loss`` + backward.
* simulator: our ``SimulatorModule.training_step`` + backward (KL-regularized RWR) against TRL's
  GRPO step on the same tokens configured to have the same gradient: one completion per prompt,
  advantages = RWR weights, ``loss_type=grpo``, ``beta=kl_coef``, no KL bias correction. On-policy,
  the GRPO gradient is then ``-w ∇logp + beta ∇KL`` per token, averaged per sequence: RWR's.

Both sides start from the same weights (the policy is moved slightly off the reference, identically,
so that the KL term is not 0). Before timing, the script asserts equal work: the agent losses agree
and, for both players, the parameter gradients agree. The optimizer step is excluded on both sides.

Timing: ``--reps`` repetitions after one warm-up, alternating which side goes first, in the same
process, so that load from other jobs on the machine hits both sides alike; medians are reported.
Throughput is trained completion tokens (mask sum) per second of wall time. The CPU time of the
process (``time.process_time``, all threads) is recorded too: on a machine shared with other jobs
it is less disturbed by them than wall time, so its ratio is a second estimate.

Peak memory: each side runs again in a fresh subprocess (``--memory``) that builds only that side,
then takes one step while a thread samples the resident set size (``/proc/self/statm``) every 2 ms.
Reported: the step's peak RSS above the RSS just before it (activations, gradients, temporaries),
and the process's peak RSS (``VmHWM``: libraries, weights, reference copy and the step).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from contextlib import nullcontext
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lightning_genenv.config import AgentConfig, LoraConfig, SimulatorConfig, fit_temperature  # noqa: E402

import torch  # noqa: E402

SHAPES = {  # model -> agent (groups, n, prompt, completion), simulator (rows, prompt, completion)
    "tiny": {"agent": (2, 8, 300, 48), "simulator": (4, 300, 96)},
    "embedded": {"agent": (1, 8, 128, 32), "simulator": (2, 128, 64)},
}
EPSILON, EPSILON_HIGH = 0.2, 0.28
# the temperature each player's log-probs are taken at (the schema's defaults): TRL's side is given the same
TEMPERATURE = {"agent": AgentConfig().temperature, "simulator": fit_temperature(SimulatorConfig())}


# ----------------------------------------------------------------------------- batches

def agent_batch(vocab: int, pad_id: int, groups: int, n: int, prompt: int, completion: int, seed: int = 0) -> dict:
    from lightning_genenv.epoch_values import pad_batch
    from lightning_genenv.losses import group_advantages

    g = torch.Generator().manual_seed(seed)
    rand_len = lambda lo, hi: int(torch.randint(lo, hi + 1, (), generator=g))  # noqa: E731
    prompts = [torch.randint(3, vocab, (rand_len(3 * prompt // 4, prompt),), generator=g).tolist() for _ in range(groups)]
    completions = [torch.randint(3, vocab, (rand_len(max(1, completion // 2), completion),), generator=g).tolist()
                   for _ in range(groups * n)]
    batch = pad_batch(prompts, completions, pad_id)
    rows, width = batch["completion_ids"].shape
    batch["rewards"] = torch.rand(rows, generator=g)
    batch["advantages"] = group_advantages(batch["rewards"], n) if n > 1 else torch.zeros(rows)
    batch["sampling_logprobs"] = torch.zeros(rows, width)
    batch["num_items_in_batch"] = float(batch["completion_mask"].sum())
    batch["weights"] = torch.softmax(batch["rewards"], 0) * rows  # RWR: self-normalized to mean 1
    return batch


def flat_inputs(batch: dict) -> dict:
    """The batch as TRL lays it out: every row is its own prompt + completion (no shared prefix)."""
    n = batch["completion_ids"].size(0) // batch["prompt_ids"].size(0)
    return {"prompt_ids": batch["prompt_ids"].repeat_interleave(n, 0),
            "prompt_mask": batch["prompt_mask"].repeat_interleave(n, 0),
            "completion_ids": batch["completion_ids"], "completion_mask": batch["completion_mask"].long(),
            "num_items_in_batch": torch.tensor(batch["num_items_in_batch"])}


# ----------------------------------------------------------------------------- the two sides

LORA = {k: v for k, v in asdict(LoraConfig()).items() if k != "enabled"}  # the schema's LoRA (config/schema.py)


def load(model_name: str, lora: bool):
    """The model (same seed, so both sides get the same LoRA initialization) and its tokenizer."""
    from lightning_genenv.models import load_causal_lm

    torch.manual_seed(0)
    return load_causal_lm(model_name, lora=LORA if lora else None)


def perturb(model, seed: int = 1) -> None:
    """Move the trainable weights off the reference, the same way on both sides, so the KL is not 0.
    LoRA adapters (which each side initializes on its own) are overwritten, so they are equal too."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.requires_grad:
                noise = torch.randn(p.shape, generator=g)
                p.copy_(noise * 0.02) if "lora_" in name else p.add_(noise * 0.01)


def ours(player: str, model_name: str, args):
    """Our module (its frozen anchor is a copy of the initial weights) and its step function."""
    from lightning_genenv.agent import AgentModule
    from lightning_genenv.config import compose
    from lightning_genenv.simulator import SimulatorModule

    model, tok = load(model_name, args.lora)
    if player == "agent":
        _, _, _, completion = args.shape["agent"]
        full = compose(["model=tiny", f"agent.loss_type={args.loss_type}", f"agent.beta={args.beta}",
                        f"agent.epsilon={EPSILON}", f"agent.epsilon_high={EPSILON_HIGH}",
                        f"agent.max_completion_length={completion}"])
        cfg = full.agent
        module = AgentModule(model, tok, cfg, full.trainer.accumulate_grad_batches, full.strategy.cpu_offload,
                             full.trainer.max_nonfinite_steps, trainable=full.curriculum.train_agent)
    else:
        full = compose(["model=tiny", f"simulator.kl_coef={args.kl_coef}", "simulator.kl_max=1e9"])
        cfg = full.simulator
        module = SimulatorModule(model, tok, cfg, full.curriculum.train_simulator, full.strategy.cpu_offload,
                                 full.trainer.max_nonfinite_steps)
    module.log_dict = lambda *a, **k: None  # no trainer attached: nothing to log to, one process
    module._on_any_rank = lambda flag: flag
    perturb(model)

    def step(batch):
        loss = module.training_step(batch, 0)
        loss.backward()
        return loss.detach()

    step.module = module
    return model, tok, step


def trl_side(player: str, model_name: str, args):
    """A GRPOTrainer around the same model, and its step: ref log-probs (no grad) + compute_loss + backward."""
    import trl
    from datasets import Dataset

    model, tok = load(model_name, lora=False)  # with --lora, TRL wraps it from peft_config (its usual path)
    if player == "agent":
        groups, n, _, completion = args.shape["agent"]
        rows, loss_type, beta, correction = groups * n, args.loss_type, args.beta, True
    else:
        rows, _, completion = args.shape["simulator"]
        n, loss_type, beta, correction = 2, "grpo", args.kl_coef, False
    cfg = trl.GRPOConfig(output_dir="/tmp/train_step_trl", per_device_train_batch_size=rows, num_generations=n,
                         beta=beta, temperature=TEMPERATURE[player], epsilon=EPSILON, epsilon_high=EPSILON_HIGH, loss_type=loss_type,
                         max_completion_length=completion, use_bias_correction_kl=correction, report_to="none",
                         use_cpu=not torch.cuda.is_available(), save_strategy="no", bf16=False)
    peft_config = None
    if args.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(task_type="CAUSAL_LM", r=LORA["r"], lora_alpha=LORA["alpha"],
                                 lora_dropout=LORA["dropout"], target_modules=LORA["target_modules"])
    trainer = trl.GRPOTrainer(model=model, reward_funcs=lambda completions, **_: [0.0] * len(completions), args=cfg,
                              train_dataset=Dataset.from_dict({"prompt": ["x"] * rows}), processing_class=tok,
                              peft_config=peft_config)
    model = trainer.model
    trainer.current_gradient_accumulation_steps = 1  # normally set by Trainer's loop, which we do not run
    trainer.model.train()
    perturb(model)

    def step(batch):
        inputs = flat_inputs(batch)
        width = inputs["completion_ids"].size(1)
        ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], 1)
        att = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], 1)
        if trainer.beta != 0.0:  # as in TRL's _generate_and_score_completions: ref_model, or LoRA's base; none at beta 0
            lora_base = trainer.ref_model is None
            with torch.no_grad(), (trainer.model.disable_adapter() if lora_base else nullcontext()):
                ref_model = trainer.model if lora_base else trainer.ref_model
                inputs["ref_per_token_logps"] = trainer._get_per_token_logps_and_entropies(
                    ref_model, ids, att, width, batch_size=rows)[0]
        inputs["advantages"] = batch["advantages"] if player == "agent" else batch["weights"]
        loss = trainer.compute_loss(trainer.model, inputs)
        loss.backward()
        return loss.detach()

    return model, tok, step


def make_batch(player: str, vocab: int, pad_id: int, shape) -> dict:
    if player == "agent":
        return agent_batch(vocab, pad_id, *shape)
    rows, prompt, completion = shape
    return agent_batch(vocab, pad_id, rows, 1, prompt, completion)


# ----------------------------------------------------------------------------- measuring

def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def hwm_mb() -> float:
    """The process's peak RSS (VmHWM; ru_maxrss would carry the parent's peak across fork + exec)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


def memory_of_one_step(player: str, model_name: str, side: str, args) -> dict:
    """Fresh process: build one side, then one step while a thread samples RSS every 2 ms."""
    model, tok, step = (ours if side == "ours" else trl_side)(player, model_name, args)
    batch = make_batch(player, model.config.vocab_size, tok.pad_token_id, args.shape[player])
    import gc

    gc.collect()
    before = rss_mb()
    peak, done = [before], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_mb())
            time.sleep(0.002)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    step(batch)
    done.set()
    thread.join()
    peak[0] = max(peak[0], rss_mb())
    return {"step_peak_mb": round(peak[0] - before), "process_peak_mb": round(hwm_mb())}


def grads(model) -> torch.Tensor:
    return torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.requires_grad])


def zero(model) -> None:
    for p in model.parameters():
        p.grad = None


def compare(player: str, model_name: str, args) -> dict:
    ours_model, tok, ours_step = ours(player, model_name, args)
    trl_model, _, trl_step = trl_side(player, model_name, args)
    batch = make_batch(player, ours_model.config.vocab_size, tok.pad_token_id, args.shape[player])
    tokens = int(batch["completion_mask"].sum())
    if player == "agent":  # on-policy, as rollout=hf returns them: the sampler's log-probs are the policy's own
        with torch.no_grad():
            batch["sampling_logprobs"] = ours_step.module.logprobs(batch, TEMPERATURE["agent"])

    # equal work: same loss (agent) and same gradients (both), on the first (warm-up) step
    loss_ours, loss_trl = ours_step(batch), trl_step(batch)
    g_ours, g_trl = grads(ours_model), grads(trl_model)
    grad_rel = float((g_ours - g_trl).norm() / g_trl.norm())
    if player == "agent":
        torch.testing.assert_close(loss_ours, loss_trl, rtol=1e-4, atol=1e-6)
    assert grad_rel < 1e-3, f"{player} gradients differ from TRL's: relative L2 difference {grad_rel:.2e}"
    zero(ours_model), zero(trl_model)

    sides = [("ours", ours_step, ours_model, batch), ("trl", trl_step, trl_model, batch)]
    if args.stored_ref and player == "agent":  # num_iterations > 1: passes after the first reuse stored ref log-probs
        with torch.no_grad():
            stored = {**batch, "ref_logprobs": ours_step.module.anchor_logprobs(batch)}
        sides.append(("ours_stored_ref", ours_step, ours_model, stored))
    times = {side[0]: [] for side in sides}
    cpu = {side[0]: [] for side in sides}
    for rep in range(args.reps):
        for side, step, model, step_batch in sides if rep % 2 == 0 else sides[::-1]:
            start, start_cpu = time.perf_counter(), time.process_time()
            step(step_batch)
            times[side].append(time.perf_counter() - start)
            cpu[side].append(time.process_time() - start_cpu)
            zero(model)
    t_ours, t_trl = statistics.median(times["ours"]), statistics.median(times["trl"])
    c_ours, c_trl = statistics.median(cpu["ours"]), statistics.median(cpu["trl"])
    row = {"model": model_name, "player": player, "mode": "LoRA r=16" if args.lora else "full", "shape": args.shape[player], "completion_tokens": tokens,
           "loss_ours": round(float(loss_ours), 6), "loss_trl": round(float(loss_trl), 6), "grad_rel_diff": grad_rel,
           "ours_s": round(t_ours, 3), "trl_s": round(t_trl, 3),
           "ours_tok_s": round(tokens / t_ours, 1), "trl_tok_s": round(tokens / t_trl, 1),
           "speedup": round(t_trl / t_ours, 2), "ours_cpu_s": round(c_ours, 3), "trl_cpu_s": round(c_trl, 3),
           "cpu_speedup": round(c_trl / c_ours, 2), "times": times, "cpu_times": cpu}
    if "ours_stored_ref" in times:
        row["ours_stored_ref_s"] = round(statistics.median(times["ours_stored_ref"]), 3)
        row["ours_stored_ref_cpu_s"] = round(statistics.median(cpu["ours_stored_ref"]), 3)
    del ours_model, trl_model
    if args.no_memory:
        return row
    for side in ("ours", "trl"):
        spec = json.dumps({"player": player, "model_name": model_name, "side": side})
        proc = subprocess.run([sys.executable, __file__, *sys.argv[1:], "--memory", spec], capture_output=True, text=True)
        if proc.returncode:
            sys.exit(f"memory run {spec} failed:\n{proc.stderr[-3000:]}")
        mem = json.loads(proc.stdout.strip().splitlines()[-1])
        row.update({f"{side}_{k}": v for k, v in mem.items()})
    row["step_memory_ratio"] = round(row["ours_step_peak_mb"] / max(row["trl_step_peak_mb"], 1), 2)
    row["process_memory_ratio"] = round(row["ours_process_peak_mb"] / row["trl_process_peak_mb"], 2)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="tiny,embedded")
    parser.add_argument("--players", default="agent,simulator")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--loss-type", default="dapo", choices=["grpo", "bnpo", "dr_grpo", "dapo"])
    parser.add_argument("--beta", type=float, default=0.04)
    parser.add_argument("--kl-coef", type=float, default=0.1)
    parser.add_argument("--lora", action="store_true", help="LoRA r=16 on q,k,v,o on both sides (reference: adapters off)")
    for name in ("groups", "n", "prompt", "completion", "sim-rows", "sim-prompt", "sim-completion"):
        parser.add_argument(f"--{name}", type=int, default=None, help="override the per-model default shape")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (1 keeps a shared, oversubscribed machine from stalling thread syncs)")
    parser.add_argument("--stored-ref", action="store_true",
                        help="also time our agent step with reference log-probs stored once per rollout batch")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory subprocesses (timing only)")
    parser.add_argument("--out", default=None, help="write all rows as JSON here")
    parser.add_argument("--memory", default=None, help=argparse.SUPPRESS)  # internal: one side's memory
    args = parser.parse_args()

    def shape_for(model_name):
        (g, n, p, c), (r, sp, sc) = SHAPES[model_name]["agent"], SHAPES[model_name]["simulator"]
        pick = lambda v, d: d if v is None else v  # noqa: E731
        return {"agent": (pick(args.groups, g), pick(args.n, n), pick(args.prompt, p), pick(args.completion, c)),
                "simulator": (pick(args.sim_rows, r), pick(args.sim_prompt, sp), pick(args.sim_completion, sc))}

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.memory:
        spec = json.loads(args.memory)
        args.shape = shape_for(spec["model_name"])
        print(json.dumps(memory_of_one_step(spec["player"], spec["model_name"], spec["side"], args)))
        return

    import trl
    import transformers

    print(f"torch {torch.__version__}, transformers {transformers.__version__}, trl {trl.__version__}, "
          f"threads {torch.get_num_threads()}, {'LoRA r=16' if args.lora else 'full fine-tuning'}, loss_type {args.loss_type}, beta {args.beta}, kl_coef {args.kl_coef}")
    rows = []
    for model_name in args.models.split(","):
        args.shape = shape_for(model_name)
        for player in args.players.split(","):
            row = compare(player, model_name, args)
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k not in ("times", "cpu_times")}), flush=True)
    print()
    print("| model | player | mode | shape | tokens | ours (s) | TRL (s) | ours tok/s | TRL tok/s | speed ratio | "
          "CPU-time ratio | step peak ours / TRL (MB) | process peak ours / TRL (MB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "step_memory_ratio" not in r:
            r.update({k: "-" for k in ("ours_step_peak_mb", "trl_step_peak_mb", "step_memory_ratio", "ours_process_peak_mb",
                                        "trl_process_peak_mb", "process_memory_ratio")})
        print(f"| {r['model']} | {r['player']} | {r['mode']} | {'x'.join(map(str, r['shape']))} | {r['completion_tokens']} | "
              f"{r['ours_s']} | {r['trl_s']} | {r['ours_tok_s']} | {r['trl_tok_s']} | **{r['speedup']}x** | {r['cpu_speedup']}x | "
              f"{r['ours_step_peak_mb']} / {r['trl_step_peak_mb']} ({r['step_memory_ratio']}x) | "
              f"{r['ours_process_peak_mb']} / {r['trl_process_peak_mb']} ({r['process_memory_ratio']}x) |")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
