"""CoEvolutionCallback: one GenEnv epoch's data flow (GENENV.md §5), around the agent's training.

``on_train_epoch_start`` (before the agent's GRPO steps):
  1. sample seeds from the base pool;
  2. the simulator writes ``num_variations`` tasks per seed; each is parsed and validated, and
     invalid ones are counted by reason (``curriculum.task_source=static`` samples a fixed set
     instead, ``none`` adds no new tasks);
  3. the agent makes ``num_generations`` attempts at every valid new task, at replayed tasks from
     ``D_train`` and at base tasks (filling ``tasks_per_epoch``); each attempt is scored with
     ``R_agent``. These attempts are the GRPO groups: nothing is rolled out twice;
  4. ``p̂`` and ``R_env`` per generated task; ``D_env`` and ``D_train`` grow and are persisted.

``on_train_epoch_end`` (after the agent's update and validation):
  5. the simulator's RWR update, run by its own Lightning trainer (re-entered each epoch, so its
     optimizer state and step counter carry over); skipped for ``curriculum=random``;
  6. the rollout engines follow the new weights (``sync``; also after every agent batch). An
     external engine (vLLM) pushes them before its next generation; ``time/weight_sync`` is the
     epoch's push time and ``rollout/weight_syncs`` their number.

Under data parallelism each rank writes from its share of the seeds and attempts its share of
the tasks; the results are gathered so that every rank holds the same pools and groups, rank 0
writes the pools, and each rank trains on its slice of every optimizer step.

Resuming (``python train.py resume=<run_dir>``) is exact: every epoch reseeds all random number
generators from ``(seed, epoch)`` before its rollouts, the pools travel in the agent's checkpoint
(the data module's state), and the simulator's trainer writes ``checkpoints/simulator-<k>.ckpt``
after its ``k``-th update (weights, optimizer, loop counters, logger step); the agent's checkpoint
names ``k``, and the simulator's trainer restores it before the first rollout.

Deliberately left out: conditioning the simulator on the agent's per-family results, and resuming
from inside an epoch (a killed epoch is replayed from its start, identically).
"""

from __future__ import annotations

import dataclasses
import os
import random
import time
from collections import Counter
from pathlib import Path

import lightning as L
import numpy as np
import torch
from lightning.fabric.utilities.seed import seed_everything
from lightning.pytorch.utilities import rank_zero_warn

from lightning_genenv.config import ConfigError
from lightning_genenv.data import Group, collate_groups
from lightning_genenv.distributed import gather, shard
from lightning_genenv.losses import group_advantages
from lightning_genenv.metrics import group_reward_stats
from lightning_genenv.prompts import length_warning
from lightning_genenv.generation import static_records, write_tasks
from lightning_genenv.rewards import ENV_REWARDS, agent_reward, passes_filter, rwr_weights, success_rate
from lightning_genenv.rollout import HFEngine, SamplingParams, build_engine
from lightning_genenv.tasks import Task


class CoEvolutionCallback(L.Callback):
    def __init__(self, cfg, datamodule, simulator, sim_trainer: L.Trainer | None):
        self.cfg = cfg
        self.dm = datamodule
        self.sim = simulator
        self.sim_trainer = sim_trainer
        self.sim_epochs = 0
        self.invalid = Counter()  # simulator generations rejected, by reason (cumulative)
        self.times: dict[str, float] = {}
        self.num_generated_used = 0  # generated tasks that joined D_train (data efficiency axis)
        self._p_hats: list[float] = []
        self.ckpt_dir = Path(cfg.run_dir) / "checkpoints" if cfg.run_dir else None
        self._sim_resume: Path | None = None  # the simulator checkpoint to resume from, once
        self._checkpoint_time: float | None = None  # the last save's, logged with the next epoch's metrics
        self._train_tokens = 0  # prompt + completion tokens this rank trains on this epoch

    # ------------------------------------------------------------------ setup
    def setup(self, trainer: L.Trainer, agent, stage: str) -> None:
        cfg, dm = self.cfg, self.dm
        progress = trainer.is_global_zero and cfg.trainer.enable_progress_bar
        self.agent_engine = build_engine(cfg.rollout.backend, agent.model, agent.tokenizer,
                                         cfg.rollout.batch_size, progress, cfg.rollout)
        self.sim_engine = None
        if self.sim is not None:  # vllm: one shared engine when both players have one architecture
            self.sim_engine = build_engine(cfg.rollout.backend, self.sim.model, self.sim.tokenizer,
                                           cfg.rollout.batch_size, progress, cfg.rollout,
                                           share_with=self.agent_engine)
        agent.engine = self.agent_engine
        external = not isinstance(self.agent_engine, HFEngine)  # an external sampler: correct for its log-probs
        agent.is_cap = (cfg.rollout.vllm_importance_sampling_clip_max
                        if external and cfg.rollout.vllm_importance_sampling_correction else None)
        agent.shots_for = lambda task: dm.family_examples(task, cfg.agent.num_shots)
        dm.rank, dm.world_size = trainer.global_rank, trainer.world_size
        warning = length_warning(dm.base + dm.val, agent.tokenizer, cfg.agent.max_completion_length)
        if warning:
            rank_zero_warn(warning)
        per_step = trainer.world_size * dm.groups_per_optimizer_step
        if cfg.data.tasks_per_epoch % per_step or cfg.data.seeds_per_epoch % trainer.world_size:
            raise ConfigError(
                f"with {trainer.world_size} processes, data.tasks_per_epoch={cfg.data.tasks_per_epoch} must be "
                f"divisible by processes x agent.groups_per_step x trainer.accumulate_grad_batches={per_step} "
                f"and data.seeds_per_epoch={cfg.data.seeds_per_epoch} by {trainer.world_size}")

    def on_train_start(self, trainer: L.Trainer, agent) -> None:
        """Validation before the first update, logged at step 0: where every curve starts from."""
        if not self.cfg.trainer.val_before_training or trainer.global_step > 0:
            return
        t0 = time.perf_counter()
        metrics, _ = agent.evaluate(self.dm.val)
        self._log(trainer, {**metrics, "time/validation": time.perf_counter() - t0}, epoch=-1)  # before epoch 0

    # ------------------------------------------------------------------ steps 1-4
    def on_train_epoch_start(self, trainer: L.Trainer, agent) -> None:
        cfg, dm, epoch = self.cfg, self.dm, trainer.current_epoch
        self.times = {}
        seed_everything(cfg.seed * 1_000_003 + epoch, verbose=False)  # a resumed epoch samples alike
        dm.reseed(epoch)
        t0 = time.perf_counter()
        seeds = dm.sample_seeds(cfg.data.seeds_per_epoch)
        generated = self.candidate_tasks(seeds, epoch)
        self.times["generate_tasks"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        self.times["reward_scoring"] = 0.0  # R_agent of each attempt, added up inside attempt()
        valid = [r for r in generated if r["task"] is not None]
        for r in valid:
            r["attempted"] = True
        attempted = self.attempt(agent, [r["task"] for r in valid])  # every valid task: p̂ for the simulator
        stats = self.score_generations(valid, attempted, epoch)
        # The agent's batch: a generated_fraction share of generated tasks (those that passed the filter),
        # topped up from the replay pool, and base tasks for the rest, as the paper mixes them.
        share = round(cfg.data.generated_fraction * cfg.data.tasks_per_epoch)
        nearest = sorted((abs(r["p_hat"] - cfg.curriculum.alpha), i) for i, r in enumerate(valid) if r["trained_on"])
        kept = [attempted[i] for _, i in nearest[:share]]  # closest to α first: the most informative groups
        replay = dm.replay_tasks(min(cfg.data.replay_per_epoch, share - len(kept)), before_epoch=epoch)
        base = dm.sample_seeds(cfg.data.tasks_per_epoch - len(kept) - len(replay))
        groups = kept + self.attempt(agent, replay + base)
        self.times["agent_rollouts"] = time.perf_counter() - t0 - self.times["reward_scoring"]

        t0 = time.perf_counter()
        dm.record_results(attempted + groups[len(kept):], cfg.agent.success_threshold)
        dm.set_epoch_groups(groups)
        self.prepare_groups(agent, groups)
        self.times["reward_scoring"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        dm.add_env_records([self.env_record(r) for r in generated])
        written = dm.save_pools(epoch) if trainer.is_global_zero else {}
        self.times["pool_write"] = time.perf_counter() - t0

        kinds = {"generated": kept, "replay": groups[len(kept):len(kept) + len(replay)],
                 "base": groups[len(kept) + len(replay):]}
        metrics = {f"rollout/reward/{k}": _mean([r for g in gs for r in g.rewards])
                   for k, gs in {**kinds, "generated": attempted}.items() if gs}
        metrics.update({f"rollout/num_tasks/{k}": float(len(gs)) for k, gs in kinds.items()})
        metrics["curriculum/attempted_tasks"] = float(len(attempted))
        metrics["rollout/response_length"] = _mean([len(c) for g in groups for c in g.completion_ids])
        metrics["rollout/truncated_fraction"] = _mean([float(t) for g in groups for t in g.truncated])
        metrics.update({f"rollout/{k}": float(v) for k, v in group_reward_stats(
            torch.tensor([r for g in groups for r in g.rewards]), cfg.agent.num_generations).items()})
        sampled = sum(len(c) for g in attempted + groups[len(kept):] for c in g.completion_ids)
        metrics["rollout/tokens_per_second/agent"] = sampled / max(self.times["agent_rollouts"], 1e-9)
        written_tokens = sum(len(r["completion_ids"] or []) for r in generated)
        if written_tokens:
            metrics["rollout/tokens_per_second/simulator"] = written_tokens / max(self.times["generate_tasks"], 1e-9)
        self._train_tokens = sum(len(g.prompt_ids) + sum(len(c) for c in g.completion_ids) for g in dm.local_groups())
        metrics.update(stats)
        metrics.update({f"pools/{k}": float(v) for k, v in written.items()})
        if self._checkpoint_time is not None:  # the previous epoch's
            metrics["time/checkpoint"] = self._checkpoint_time
        self.log_epoch(trainer, metrics, generated, groups)

    def candidate_tasks(self, seeds: list, epoch: int) -> list[dict]:
        """Step 2, by ``curriculum.task_source``: the simulator writes tasks, or a fixed set is
        sampled (GenEnv-Static, offline teacher), or there are none (plain GRPO on the base data)."""
        source, dm = self.cfg.curriculum.task_source, self.dm
        if source == "simulator":  # each rank writes from its share of the seeds
            local = write_tasks(self.sim_engine, self.sim.tokenizer, shard(seeds),
                                lambda s: dm.family_examples(s, self.cfg.simulator.num_examples),
                                self.cfg.simulator, epoch, Counter(), results_for=dm.family_results,
                                alpha=self.cfg.curriculum.alpha)
            records = gather(local, self.env_record, _record_from_json)
            self.invalid.update(r["reason"] for r in records if r["reason"])
            return records
        if source == "static":
            k = self.cfg.data.seeds_per_epoch * self.cfg.simulator.num_variations
            return static_records(dm.rng.sample(dm.static_tasks, min(k, len(dm.static_tasks))), epoch)
        return []

    def attempt(self, agent, tasks: list) -> list[Group]:
        """Step 3: ``num_generations`` attempts per task, scored with ``R_agent``."""
        cfg = self.cfg.agent
        prompts = [agent.encode_task(t, self.dm.family_examples(t, cfg.num_shots)) for t in tasks]
        params = SamplingParams(n=cfg.num_generations, temperature=cfg.temperature, top_p=cfg.top_p,
                                max_new_tokens=cfg.max_completion_length)
        groups = []
        tasks, prompts = shard(tasks), shard(prompts)  # each rank attempts its share
        for task, prompt, samples in zip(tasks, prompts, self.agent_engine.generate(prompts, params, "agent: attempts")):
            t0 = time.perf_counter()
            rewards = [agent_reward(task, s.text, cfg.subset_match)[0] for s in samples]
            self.times["reward_scoring"] = self.times.get("reward_scoring", 0.0) + time.perf_counter() - t0
            groups.append(Group(task=task, prompt_ids=prompt, rewards=rewards,
                                completion_ids=[s.completion_ids for s in samples],
                                logprobs=[s.logprobs for s in samples],
                                truncated=[s.truncated for s in samples], texts=[s.text for s in samples]))
        return gather(groups, _group_to_json, _group_from_json)

    def score_generations(self, valid: list[dict], groups: list[Group], epoch: int) -> dict:
        """Step 4: ``p̂``, ``R_env`` and the filter for each valid generated task."""
        cur, agent_cfg = self.cfg.curriculum, self.cfg.agent
        env_reward = ENV_REWARDS[cur.env_reward]
        kept, p_hats, r_envs = [], [], []
        for record, group in zip(valid, groups):
            p_hat = success_rate(group.rewards, agent_cfg.success_threshold)
            record["p_hat"] = p_hat
            record["r_env"] = env_reward(p_hat, alpha=cur.alpha, beta=cur.beta, band=cur.band)
            p_hats.append(p_hat)
            r_envs.append(record["r_env"])
            if passes_filter(p_hat, cur.k_min, cur.alpha, cur.band):
                record["trained_on"] = True
                kept.append(record)
                self.dm.add_train_records([{"task": record["task"].to_dict(), "source": "generated",
                                            "epoch": epoch, "p_hat": p_hat, "rewards": group.rewards,
                                            "completions": group.texts}])
        self.num_generated_used += len(kept)
        trainable = [r for r in kept if r["source"] == "simulator"]
        weights = rwr_weights([r["r_env"] for r in trainable], self.cfg.simulator.lam)
        self.dm.sim_records = [{"prompt_ids": r["prompt_ids"], "completion_ids": r["completion_ids"],
                                "weight": w} for r, w in zip(trainable, weights)]
        band = cur.band if cur.band is not None else 0.1
        stats = {"curriculum/valid_tasks": float(len(valid)),
                 "curriculum/kept_tasks": float(len(kept)),
                 "curriculum/synthetic_tasks_used": float(self.num_generated_used)}
        if p_hats:
            stats.update({
                "curriculum/p_hat_mean": _mean(p_hats),
                "curriculum/in_band_fraction": _mean([float(abs(p - cur.alpha) <= band) for p in p_hats]),
                "curriculum/r_env_mean": _mean(r_envs),
                "curriculum/r_env_std": float(torch.tensor(r_envs).std()) if len(r_envs) > 1 else 0.0,
            })
        self._p_hats = p_hats
        return stats

    def prepare_groups(self, agent, groups: list[Group]) -> None:
        """Advantages, the dapo normalizer per optimizer step, and old log-probs if needed."""
        cfg, dm = self.cfg.agent, self.dm
        rewards = torch.tensor([r for g in groups for r in g.rewards])
        adv = group_advantages(rewards, cfg.num_generations, cfg.scale_rewards).tolist()
        for i, g in enumerate(groups):
            g.advantages = adv[i * cfg.num_generations:(i + 1) * cfg.num_generations]
        # dapo's normalizer: completion tokens of the global optimizer step, over the ranks (whose
        # gradients DDP/FSDP average)
        per_step = dm.world_size * dm.groups_per_optimizer_step
        for start in range(0, len(groups), per_step):
            window = groups[start:start + per_step]
            tokens = sum(len(c) for g in window for c, t in zip(g.completion_ids, g.truncated)
                         if not (cfg.mask_truncated_completions and t))
            for g in window:
                g.num_items_in_batch = float(tokens) / dm.world_size
        if cfg.num_iterations > 1:  # the rollout policy's and the reference's log-probs, once, before any
            local = dm.local_groups()  # update: each of the num_iterations passes reuses them
            with torch.no_grad():
                for start in range(0, len(local), dm.groups_per_step):
                    chunk = local[start:start + dm.groups_per_step]
                    batch = collate_groups(chunk, dm.pad_id)
                    batch = {k: v.to(agent.device) if torch.is_tensor(v) else v for k, v in batch.items()}
                    logp = agent.logprobs(batch, cfg.temperature).cpu()
                    ref = agent.anchor_logprobs(batch, cfg.temperature)
                    rows = iter(logp)
                    for g in chunk:
                        g.old_logprobs = [next(rows)[:len(c)].tolist() for c in g.completion_ids]
                    if ref is not None:
                        rows = iter(ref.cpu())
                        for g in chunk:
                            g.ref_logprobs = [next(rows)[:len(c)].tolist() for c in g.completion_ids]

    # ------------------------------------------------------------------ step 5
    def on_validation_epoch_start(self, trainer, agent) -> None:
        if trainer.sanity_checking:
            return
        self._mark("agent_update")
        self._t_val = time.perf_counter()

    def on_validation_epoch_end(self, trainer, agent) -> None:
        if not trainer.sanity_checking:
            self.times["validation"] = time.perf_counter() - self._t_val

    def on_train_batch_start(self, trainer, agent, batch, batch_idx) -> None:
        if batch_idx == 0:
            self._t_update = time.perf_counter()

    def on_train_batch_end(self, trainer, agent, outputs, batch, batch_idx) -> None:
        # After each (possible) optimizer update the engine must follow the agent's weights; an
        # external engine pushes them lazily, before its next generation (validation, next epoch).
        self.agent_engine.sync()

    def _mark(self, name: str) -> None:
        if name not in self.times and hasattr(self, "_t_update"):
            self.times[name] = time.perf_counter() - self._t_update

    def on_train_epoch_end(self, trainer: L.Trainer, agent) -> None:
        self._mark("agent_update")
        metrics = {}
        t0 = time.perf_counter()
        if self.cfg.curriculum.train_simulator and self.dm.sim_records and self.sim_trainer is not None:
            self.sim_trainer.fit_loop.max_epochs = self.sim_epochs + 1
            loader = self.dm.simulator_dataloader(self.cfg.simulator.batch_size, self.sim.tokenizer.pad_token_id)
            self.sim_trainer.fit(self.sim, train_dataloaders=loader)
            self.sim_epochs += 1
            self.save_simulator()
            metrics["sim/steps"] = float(self.sim.steps_this_epoch)
            metrics["sim/kl_to_initial"] = self.sim.last_kl
            metrics["sim/kl_cap_hit_epoch"] = float(self.sim.kl_exceeded)
        self.times["simulator_update"] = time.perf_counter() - t0
        self.agent_engine.sync()
        if self.sim_engine is not None:
            self.sim_engine.sync()
        # Weight pushes into an external engine this epoch (they happen lazily, at generation).
        pushes = [t for e in (self.agent_engine, self.sim_engine) if hasattr(e, "pop_sync_times")
                  for t in e.pop_sync_times()]
        self.times["weight_sync"] = sum(pushes)
        metrics["rollout/weight_syncs"] = float(len(pushes))
        metrics.update({f"time/{k}": v for k, v in self.times.items()})
        if self.times.get("agent_update"):  # prompt + completion tokens through forward and backward
            metrics["train/tokens_per_second"] = self._train_tokens / self.times["agent_update"]
        metrics.update({f"sim/invalid/{k}": float(v) for k, v in sorted(self.invalid.items())})
        self._log(trainer, metrics)
        self.save_checkpoint(trainer)

    def save_checkpoint(self, trainer) -> None:
        """``checkpoints/last.ckpt``, once both players have updated: a temp file, then a rename, so
        a kill never leaves a torn checkpoint."""
        if self.ckpt_dir is None:
            return
        last, tmp = self.ckpt_dir / "last.ckpt", self.ckpt_dir / ".last.ckpt.tmp"
        t0 = time.perf_counter()
        trainer.save_checkpoint(tmp, weights_only=False)  # the full state: optimizer, loops, callbacks
        trainer.strategy.barrier()
        if trainer.is_global_zero:
            os.replace(tmp, last)
        self._checkpoint_time = time.perf_counter() - t0

    # ------------------------------------------------------------------ logging and state
    def log_epoch(self, trainer, metrics, generated, groups) -> None:
        written = [r for r in generated if r["source"] == "simulator"]
        if written:
            metrics["sim/valid_rate"] = sum(r["task"] is not None for r in written) / len(written)
            metrics["sim/generations"] = float(len(written))
        epoch_invalid = Counter(r["reason"] for r in generated if r["reason"])
        metrics.update({f"sim/invalid_epoch/{k}": float(v) for k, v in sorted(epoch_invalid.items())})
        self._log(trainer, metrics)
        logger = trainer.logger
        if logger is None or not trainer.is_global_zero:
            return
        writer = getattr(logger, "experiment", None)
        if writer is None or not hasattr(writer, "add_text"):
            return
        step = trainer.global_step
        if self._p_hats:
            writer.add_histogram("curriculum/p_hat", torch.tensor(self._p_hats), step)
        k = self.cfg.logger.num_text_samples
        for r in generated[:k]:
            writer.add_text("samples/simulator", _md(f"seed {r['seed_id']} | {r['reason'] or 'valid'} | "
                                                      f"p_hat={r['p_hat']}", r["text"]), step)
        for g in groups[:k]:
            writer.add_text("samples/agent", _md(f"{g.task.id}: {g.task.question} | rewards {g.rewards}",
                                                 "\n---\n".join(g.texts)), step)

    def _log(self, trainer, metrics: dict, epoch: int | None = None) -> None:
        if trainer.logger is not None and trainer.is_global_zero:
            epoch = trainer.current_epoch if epoch is None else epoch
            trainer.logger.log_metrics({**metrics, "epoch": float(epoch)}, step=trainer.global_step)

    @staticmethod
    def env_record(r: dict) -> dict:
        return {**r, "task": r["task"].to_dict() if r["task"] is not None else None}

    def state_dict(self) -> dict:
        return {"sim_epochs": self.sim_epochs, "invalid": dict(self.invalid),
                "num_generated_used": self.num_generated_used,
                "rng": {"python": random.getstate(), "numpy": _numpy_state(), "torch": torch.get_rng_state()}}

    def load_state_dict(self, state: dict) -> None:
        self.sim_epochs = state["sim_epochs"]
        self.invalid = Counter(state["invalid"])
        self.num_generated_used = state["num_generated_used"]
        random.setstate(state["rng"]["python"])
        kind, key, pos, has_gauss, gauss = state["rng"]["numpy"]
        np.random.set_state((kind, key.numpy().astype(np.uint32), pos, has_gauss, gauss))
        torch.set_rng_state(state["rng"]["torch"])
        if self.sim is not None and self.sim_epochs:
            self._sim_resume = self.simulator_ckpt(self.sim_epochs)
            if not self._sim_resume.is_file():
                raise FileNotFoundError(f"{self._sim_resume}: the agent's checkpoint needs the simulator "
                                        f"after {self.sim_epochs} updates, and its checkpoint is missing")

    def simulator_ckpt(self, k: int) -> Path:
        return self.ckpt_dir / f"simulator-{k}.ckpt"

    def save_simulator(self) -> None:
        """The simulator's trainer checkpoint after its ``sim_epochs``-th update; the previous one is
        kept until the agent's next checkpoint names this one."""
        if self.ckpt_dir is None:
            return
        self.sim_trainer.save_checkpoint(self.simulator_ckpt(self.sim_epochs), weights_only=False)
        if self.sim_trainer.is_global_zero and self.sim_epochs > 2:
            self.simulator_ckpt(self.sim_epochs - 2).unlink(missing_ok=True)

    def on_fit_start(self, trainer, agent) -> None:
        if self.sim is None:
            return
        if self._sim_resume is not None:
            # The simulator's trainer restores its checkpoint (weights, optimizer, loop counters and
            # logger step; sharded as in the first run) and stops at once: max_epochs is reached.
            self.sim_trainer.fit_loop.max_epochs = self.sim_epochs
            loader = self.dm.simulator_dataloader(1, self.sim.tokenizer.pad_token_id)
            self.sim_trainer.fit(self.sim, train_dataloaders=loader, ckpt_path=self._sim_resume, weights_only=True)
            self._sim_resume = None
        elif not getattr(self.sim, "_sharded", False):
            self.sim.to(trainer.strategy.root_device)  # its own trainer moves it only at its first update


def _numpy_state() -> tuple:
    """numpy's global RNG state in types that ``torch.load(weights_only=True)`` accepts."""
    kind, key, pos, has_gauss, gauss = np.random.get_state()
    return kind, torch.from_numpy(key.astype(np.int64)), int(pos), int(has_gauss), float(gauss)


def _record_from_json(d: dict) -> dict:
    return {**d, "task": Task(**d["task"]) if d["task"] is not None else None}


def _group_to_json(g: Group) -> dict:
    return {**dataclasses.asdict(g), "task": g.task.to_dict()}


def _group_from_json(d: dict) -> Group:
    return Group(**{**d, "task": Task(**d["task"])})


def _mean(values) -> float:
    values = list(values)
    return float(sum(values) / len(values)) if values else 0.0


def _md(title: str, body: str) -> str:
    return f"**{title}**\n\n```\n{body}\n```"
