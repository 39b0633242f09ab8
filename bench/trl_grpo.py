"""The same GRPO in TRL, side by side: an outside check that our agent learns as well.

    python bench/trl_grpo.py [our overrides...] --out DIR [--ours RUN_DIR]

Composes ``experiment=base_grpo`` plus the overrides with our own config composer and trains TRL's
``GRPOTrainer`` (transformers generation, CPU, fp32) on what ``python train.py experiment=base_grpo
[overrides]`` trains on, so that the settings are equal by construction:

* model: ``model.agent`` with ``model.lora`` as a peft ``LoraConfig`` handed to TRL (TRL wraps it);
* data: our data module's base (train) tasks, each prompt our agent's chat prompt with the same
  few-shot examples (``family_examples``), rendered by the tokenizer's chat template and passed as
  text; the script checks that TRL's tokenization of it is our ``encode_chat``'s, token for token;
* reward: ``agent_reward(task, completion, agent.subset_match)``, the task looked up by a ``task_id`` column;
* GRPO: every ``agent.*`` setting under TRL's own name; AdamW at ``agent.lr_scheduler_type``'s schedule, the
  gradient clipped at ``trainer.gradient_clip_val``;
* batches: ``agent.groups_per_step`` groups per micro-batch, ``trainer.accumulate_grad_batches`` per
  optimizer step, and one generation batch of ``data.tasks_per_epoch`` groups spanning several
  optimizer steps (TRL's ``steps_per_generation``), as one of our epochs does (``--steps-per-generation``
  sets fewer: see below); optimizer steps:
  ``trainer.max_epochs x agent.num_iterations x data.tasks_per_epoch / (groups_per_step x accumulate)``.

Held-out tasks (our data module's validation set) are scored before and after training through our
own validation (``AgentModule.validate``): greedy (``val/score``) and ``agent.val_num_generations`` samples at the
training temperature (``val/reward_mean``), on the engine ``rollout.backend`` resolves to, as
``train.py`` resolves it (vLLM when it can run the model, so it scores TRL's model as our run's
validation scores ours). Both evaluations run after ``trainer.train()``, so that vLLM's engine (which
initializes ``torch.distributed``) never exists while TRL trains; "before" is the trained model with
its LoRA adapter disabled, which is the initial model (with full fine-tuning: the initial weights,
kept aside and loaded back for it).

``DIR/trl_grpo.json`` gets TRL's reward curve (``log_history``'s ``reward``: TRL logs it once per
generation batch, by default once per epoch of ours), both held-out scores and the wall times.
``--ours RUN_DIR`` reads our run (``tb/agent``, ``summary.json``) and writes a side-by-side markdown
table to ``DIR/comparison.md`` (and stdout).

Memory: TRL generates a whole generation batch in one transformers ``generate`` call, so one epoch
of ours (16 tasks x 8 = 128 completions of prompts of ~600 tokens) holds an fp32 KV cache of more than
10 GB and the process passed 15.8 GB on the 24 GB machine beside another run (killed).
``--steps-per-generation 1`` makes TRL sample each micro-batch's groups right before it
(on-policy, 16 completions at a time): the same tasks, samples and steps, less stale than ours.

Deliberately left out: vLLM generation for TRL's training, GPUs (the comparison is CPU-only, like CI), and the order
of tasks: we draw ``tasks_per_epoch`` base tasks per epoch at random, TRL walks a shuffled dataset.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from lightning_genenv.config import compose  # noqa: E402
from lightning_genenv.data import GenEnvDataModule  # noqa: E402
from lightning_genenv.batch_layout import BatchLayout  # noqa: E402
from lightning_genenv.models import load_causal_lm  # noqa: E402
from lightning_genenv.prompts import agent_messages  # noqa: E402
from lightning_genenv.rewards import agent_reward  # noqa: E402
from lightning_genenv.rollout import encode_chat  # noqa: E402

EXPERIMENT = "experiment=base_grpo"


def layout(cfg) -> BatchLayout:
    """Our batch layout in one process, for ``curriculum=none`` (every epoch: tasks_per_epoch groups)."""
    return BatchLayout.from_config(cfg.data, cfg.agent, cfg.trainer.accumulate_grad_batches, 1)


def optimizer_steps(cfg) -> int:
    """Our optimizer steps over the whole run, counted as ``train.py`` counts them for the
    learning-rate schedule."""
    return cfg.trainer.max_epochs * layout(cfg).optimizer_steps_per_epoch


def grpo_config(cfg, out_dir: Path, steps_per_generation: int | None = None):
    """TRL's ``GRPOConfig`` with our settings; ``steps_per_generation`` defaults to one epoch of ours."""
    from trl import GRPOConfig

    a, t = cfg.agent, cfg.trainer
    return GRPOConfig(
        output_dir=str(out_dir / "trl"), seed=cfg.seed, use_cpu=True, bf16=False, fp16=False, report_to="none",
        save_strategy="no", logging_steps=1, disable_tqdm=True,
        gradient_checkpointing=cfg.model.gradient_checkpointing,
        # optimizer: ours is torch's AdamW, its schedule over the run's optimizer steps, clipped by Lightning
        optim="adamw_torch", learning_rate=a.learning_rate, weight_decay=a.weight_decay,
        lr_scheduler_type=a.lr_scheduler_type, warmup_steps=0, max_grad_norm=t.gradient_clip_val or 0.0,
        # batches: one micro-batch = groups_per_step groups; one generation batch = one epoch of ours
        per_device_train_batch_size=a.groups_per_step * a.num_generations,
        gradient_accumulation_steps=t.accumulate_grad_batches,
        steps_per_generation=steps_per_generation or layout(cfg).micro_batches_per_pass,
        max_steps=optimizer_steps(cfg),
        # GRPO, under the same names
        num_generations=a.num_generations, num_iterations=a.num_iterations, beta=a.beta, epsilon=a.epsilon,
        epsilon_high=a.epsilon_high, loss_type=a.loss_type, scale_rewards=a.scale_rewards,
        use_bias_correction_kl=a.use_bias_correction_kl, mask_truncated_completions=a.mask_truncated_completions,
        temperature=a.temperature, top_p=a.top_p, top_k=0, max_completion_length=a.max_completion_length,
    )


def lora_config(model_cfg):
    if not model_cfg.lora.enabled:
        return None
    from peft import LoraConfig

    lora = model_cfg.lora
    return LoraConfig(task_type="CAUSAL_LM", r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                      target_modules=list(lora.target_modules))


def data_module(cfg, tokenizer) -> GenEnvDataModule:
    dm = GenEnvDataModule(cfg.data, cfg.agent, tokenizer.pad_token_id, cfg.trainer.accumulate_grad_batches,
                          cfg.trainer.benchmarks_root)
    dm.setup()
    return dm


def prompt_dataset(dm: GenEnvDataModule, tokenizer, num_shots: int):
    """The base tasks as TRL text prompts (``prompt``, ``task_id``); each one tokenizes, as TRL
    tokenizes text prompts, to exactly the ids our agent samples from."""
    from datasets import Dataset

    rows = {"prompt": [], "task_id": []}
    for task in dm.base:
        messages = agent_messages(task, dm.family_examples(task, num_shots))
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        if tokenizer(text=text)["input_ids"] != encode_chat(tokenizer, messages):
            raise RuntimeError(f"task {task.id}: TRL would tokenize the prompt differently from our agent")
        rows["prompt"].append(text)
        rows["task_id"].append(task.id)
    return Dataset.from_dict(rows)


def reward_function(tasks: list, subset_match: bool):
    """A TRL reward function: ``R_agent`` of each completion, its task found by the ``task_id`` column."""
    by_id = {t.id: t for t in tasks}
    if len(by_id) != len(tasks):
        raise ValueError("task ids are not unique")

    def agent_reward_fn(completions: list[str], task_id: list[str], **_) -> list[float]:
        return [agent_reward(by_id[i], text, subset_match)[0] for i, text in zip(task_id, completions)]

    return agent_reward_fn


def eval_backend(cfg, model) -> str:
    from lightning_genenv.rollout import choose_backend, describe

    return choose_backend(cfg.rollout.backend, [describe(model)])[0]


def evaluator(model, tokenizer, cfg, dm: GenEnvDataModule, backend: str):
    """A function that runs our validation (``AgentModule.validate``) on the held-out tasks with the
    current weights of ``model``, through one engine of ``backend`` (see :func:`eval_backend`)."""
    from lightning_genenv.agent import AgentModule
    from lightning_genenv.rollout import build_engine
    from lightning_genenv.rollout.players import Rollouts
    from lightning_genenv.validation import ValidationBatch

    from omegaconf import OmegaConf

    engine = build_engine(backend, model, tokenizer, cfg.rollout.batch_size, False, cfg.rollout)
    no_reference = OmegaConf.merge(cfg.agent, {"beta": 0.0})  # evaluation needs no reference model (copy)
    agent = AgentModule(model, tokenizer, no_reference, cfg.trainer.accumulate_grad_batches, cfg.strategy.cpu_offload,
                        cfg.trainer.max_nonfinite_steps, trainable=cfg.curriculum.train_agent,
                        rollouts=Rollouts.of(engine),
                        shots_for=lambda task: dm.family_examples(task, cfg.agent.num_shots))

    def evaluate() -> dict[str, float]:
        torch.manual_seed(cfg.seed)
        engine.sync()  # the weights (or the adapter's switch) may have changed since the last call
        return agent.validate(ValidationBatch(dm.val, None), full=False).metrics  # val/* on every task

    return evaluate


def run(cfg, out_dir: str | Path, steps_per_generation: int | None = None) -> dict:
    """Train with TRL on ``cfg`` (composed as for ``train.py``); write and return the results."""
    from transformers import set_seed
    from trl import GRPOTrainer

    start = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    set_seed(cfg.seed)
    model, tokenizer = load_causal_lm(cfg.model.agent, cfg.model.dtype, None, cfg.model.gradient_checkpointing,
                                      cfg.model.cache_dir)
    dm = data_module(cfg, tokenizer)
    times, lora = {}, lora_config(cfg.model)
    # full fine-tuning changes the model in place: keep its initial weights to score after training
    initial = None if lora else {k: v.detach().clone() for k, v in model.state_dict().items()}

    args = grpo_config(cfg, out_dir, steps_per_generation)
    trainer = GRPOTrainer(model=model, reward_funcs=reward_function(dm.base, cfg.agent.subset_match), args=args,
                          train_dataset=prompt_dataset(dm, tokenizer, cfg.agent.num_shots),
                          processing_class=tokenizer, peft_config=lora)
    t0 = time.perf_counter()
    trainer.train()
    times["train"] = time.perf_counter() - t0

    backend = eval_backend(cfg, model)
    evaluate = evaluator(trainer.model, tokenizer, cfg, dm, backend)
    t0 = time.perf_counter()
    if initial is None:  # the initial model is the trained one with its adapter off
        with trainer.model.disable_adapter():
            before = evaluate()
    else:
        trained = {k: v.detach().clone() for k, v in model.state_dict().items()}
        model.load_state_dict(initial)
        before = evaluate()
        model.load_state_dict(trained)
    times["eval_before"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    after = evaluate()
    times["eval_after"] = time.perf_counter() - t0
    times["total"] = time.perf_counter() - start
    history = trainer.state.log_history
    result = {
        "optimizer_steps": {"expected": optimizer_steps(cfg), "trl": trainer.state.global_step},
        "settings": {k: getattr(args, k) for k in (
            "learning_rate", "beta", "epsilon", "epsilon_high", "loss_type", "scale_rewards", "num_generations",
            "num_iterations", "temperature", "top_p", "max_completion_length", "mask_truncated_completions",
            "per_device_train_batch_size", "gradient_accumulation_steps", "steps_per_generation",
            "generation_batch_size", "max_steps", "max_grad_norm", "seed")},
        "model": cfg.model.agent, "lora": bool(cfg.model.lora.enabled), "eval_backend": backend,
        "train_tasks": len(dm.base), "held_out_tasks": len(dm.val),
        "reward_curve": [{"step": h["step"], "reward": h["reward"], "reward_std": h.get("reward_std")}
                         for h in history if "reward" in h],
        "held_out": {"before": before, "after": after},
        "wall_time_s": {k: round(v, 1) for k, v in times.items()},
    }
    (out_dir / "trl_grpo.json").write_text(json.dumps(result, indent=2))
    (out_dir / "trl_log_history.json").write_text(json.dumps(history, indent=2))
    return result


# ----------------------------------------------------------------------------- side by side


def read_ours(run_dir: str | Path, epochs: int) -> dict:
    """Our run's reward per epoch (the mean of ``agent/reward`` over its steps), held-out scores
    before (step 0, ``trainer.val_before_training``) and after, and its wall time."""
    from lightning_genenv.report import load_run

    ours = load_run(run_dir)
    steps = ours.step_scalars.get("agent/reward", [])
    per_epoch = len(steps) // epochs if steps else 0
    rewards = [sum(v for _, v in steps[e * per_epoch:(e + 1) * per_epoch]) / per_epoch
               for e in range(epochs)] if per_epoch else []
    held = {}
    for name in ("val/score", "val/reward_mean"):
        values = ours.step_scalars.get(name, [])
        if values:
            held[name] = {"before": values[0][1] if values[0][0] == 0 else None, "after": values[-1][1]}
    validation = ours.step_scalars.get("time/validation")  # each epoch's, and the one before training
    return {"reward_by_epoch": rewards, "steps": len({s for s, _ in steps}), "reward_curve": steps, "held_out": held,
            "wall_time_s": (ours.summary or {}).get("wall_time_s"),
            "validation_s": sum(v for _, v in validation) if validation else None}


def _num(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def markdown(trl: dict, ours: dict, epochs: int) -> str:
    spe = trl["optimizer_steps"]["expected"] // epochs  # optimizer steps per epoch of ours
    lines = ["| epoch of ours | optimizer steps | TRL reward | our reward |", "|---|---|---|---|"]
    by_epoch = [[] for _ in range(epochs)]  # TRL logs the reward once per generation batch
    for point in trl["reward_curve"]:
        if 0 < point["step"] <= epochs * spe:
            by_epoch[(point["step"] - 1) // spe].append(point["reward"])
    for e in range(epochs):
        trl_r = sum(by_epoch[e]) / len(by_epoch[e]) if by_epoch[e] else None
        our_r = ours["reward_by_epoch"][e] if e < len(ours["reward_by_epoch"]) else None
        lines.append(f"| {e} | {e * spe + 1}–{(e + 1) * spe} | {_num(trl_r)} | {_num(our_r)} |")
    lines += ["", "| held-out | TRL before | TRL after | ours before | ours after |", "|---|---|---|---|---|"]
    for name in ("val/score", "val/reward_mean"):
        o = ours["held_out"].get(name, {})
        lines.append(f"| {name} | {_num(trl['held_out']['before'].get(name))} | "
                     f"{_num(trl['held_out']['after'].get(name))} | {_num(o.get('before'))} | {_num(o.get('after'))} |")
    tw, ow, ov = trl["wall_time_s"], ours["wall_time_s"], ours.get("validation_s")
    ratio = f"{ow / tw['total']:.2f}x" if ow and tw["total"] else "–"
    lines += ["", f"Wall time in all: TRL {tw['total']} s (training {tw['train']} s, held-out evaluation "
              f"{tw['eval_before']} + {tw['eval_after']} s); ours {ow} s (`summary.json`); ours / TRL = {ratio}."]
    if ow and ov is not None:  # ours validates after every epoch, TRL here only before and after
        lines.append(f"Without held-out evaluation: TRL {tw['train']} s (`trainer.train()`), ours {ow - ov:.1f} s "
                     f"(minus {ov:.1f} s of `time/validation`); ours / TRL = {(ow - ov) / tw['train']:.2f}x.")
    lines += [f"Optimizer steps: TRL {trl['optimizer_steps']['trl']}, ours {ours['steps']} "
              "(the steps at which ours logged `agent/reward`)."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("overrides", nargs="*",
                        help="our config overrides, as for train.py (experiment=base_grpo is added first)")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--ours", help="our run directory (train.py experiment=base_grpo ...) to compare with")
    parser.add_argument("--steps-per-generation", type=int, default=None,
                        help="micro-batches per TRL generation batch, TRL's steps_per_generation (default: one epoch of ours)")
    opts = parser.parse_args(argv)
    cfg = compose([EXPERIMENT, *opts.overrides])
    if cfg.curriculum.task_source != "none":
        parser.error("the comparison is plain GRPO on the base tasks: keep curriculum=none")
    spg = opts.steps_per_generation
    per_epoch = layout(cfg).micro_batches_per_pass
    if spg is not None and not 0 < spg <= per_epoch:
        parser.error(f"--steps-per-generation must be 1..{per_epoch}")
    result = run(cfg, opts.out, spg)
    print(json.dumps({k: result[k] for k in ("optimizer_steps", "held_out", "wall_time_s")}, indent=2))
    if opts.ours:
        table = markdown(result, read_ours(opts.ours, cfg.trainer.max_epochs), cfg.trainer.max_epochs)
        (Path(opts.out) / "comparison.md").write_text(table + "\n")
        print(table)


if __name__ == "__main__":
    main()
