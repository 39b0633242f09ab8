"""The shared stand-ins of the unit tests (imported, like ``tests/samples.py``): one scripted rollout
engine, one character tokenizer, one trainer that records its fits and checkpoints, one player without a
model, and the small ``Task``/``Group`` builders and module constructors that several test files need.

Deliberately left out: anything with a model inside (the tests that need one use the tiny model of
``conftest.py``'s ``tiny_dir``).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import torch

from lightning_genenv.config import Config
from lightning_genenv.epoch_values import Group
from lightning_genenv.rollout import Sample
from lightning_genenv.tasks import Task

DEFAULTS = Config()  # the schema's defaults, for the arguments a test does not care about


class ScriptedEngine:
    """A rollout engine that answers from a script: ``script(i, n)`` gives the ``n`` texts of the
    ``i``-th prompt of a call (a list of lists works too: ``script[i][j]``). Sample ``j`` of prompt
    ``i`` has completion ids ``[100 + i, 200 + j]`` and log-probs ``[-1.0, -2.0]``; ``calls`` records
    every call's ``(prompts, params, desc)``."""

    def __init__(self, script):
        self.script = script if callable(script) else (lambda i, n: [script[i][j] for j in range(n)])
        self.calls = []

    def generate(self, prompts, params, desc=None):
        self.calls.append((prompts, params, desc))
        return [[Sample(prompt_ids=p, completion_ids=[100 + i, 200 + j], text=text, logprobs=[-1.0, -2.0],
                        truncated=False) for j, text in enumerate(self.script(i, params.n))]
                for i, p in enumerate(prompts)]

    def sync(self):
        pass

    def pop_sync_times(self):
        return []


class CharTok:
    """A tokenizer with one id per character (its code point); the chat template joins the contents by
    ``|`` and opens an assistant turn: every prompt's ids can be written out (:func:`char_ids`)."""

    pad_token_id = 0

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=True):
        assert not tokenize and add_generation_prompt
        return "|".join(m["content"] for m in messages) + "|assistant:"

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [ord(c) for c in text]}


class RecordingTrainer:
    """The part of a Lightning trainer that the simulator's updates and the checkpoints use. ``fits``:
    ``(ckpt_path, batches)`` of every ``fit`` (the loader's batches, collated); ``saved``: every
    ``save_checkpoint`` path, each written as a small whole torch archive."""

    is_global_zero = True
    current_epoch = 0  # the epoch a checkpoint closes (lightning_genenv.stopping.saved reads it)

    def __init__(self):
        self.strategy = SimpleNamespace(barrier=lambda: None)
        self.fits, self.saved = [], []

    def fit(self, module, train_dataloaders=None, ckpt_path=None, weights_only=None):
        self.fits.append((ckpt_path, list(train_dataloaders or [])))

    def save_checkpoint(self, path, weights_only=None):
        torch.save({"saved": len(self.saved)}, path)
        self.saved.append(Path(path))


class FakePolicy:
    """Either player, as the co-evolution epoch sees it: the simulator (a tokenizer) or the agent (prompts,
    and the pure part of its batch preparation)."""

    tokenizer = CharTok()
    model = None

    def __init__(self, cfg=None):
        self.cfg = cfg
        self.tasks = []  # every task prompted, in order
        self.aimed = []  # as the simulator: the (|p̄ - α|, epoch) each update was given

    def aim(self, off_target, epoch):
        self.aimed.append((off_target, epoch))

    def prompt(self, task):
        self.tasks.append(task)
        return [1, 2, 3]

    def prepare_groups(self, groups, layout):
        from lightning_genenv.agent import prepared_groups

        return prepared_groups(groups, layout, self.cfg.agent)


def char_ids(messages, prefix: str = "") -> list[int]:
    """What :class:`CharTok` makes of a chat and an assistant prefix, written out without ``encode_chat``."""
    return [ord(c) for c in "|".join(m["content"] for m in messages) + "|assistant:" + prefix]


def task(i: int, family: str = "qa", **changes) -> Task:
    """A small exact-match task: id ``t<i>``, question ``q<i>?``, answer ``<i>``."""
    fields = dict(id=f"t{i}", family=family, question=f"q{i}?", check="exact", answer=str(i))
    return Task(**{**fields, **changes})


def group(task: Task | None, rewards: list[float], **fields) -> Group:
    """A GRPO group of ``len(rewards)`` attempts at ``task``: one-token completions, prompt ``[1]``, unless
    ``fields`` (any :class:`~lightning_genenv.epoch_values.Group` field) say otherwise."""
    n = len(rewards)
    defaults = dict(prompt_ids=[1], completion_ids=[[2]] * n, logprobs=[[-1.0]] * n, truncated=[False] * n,
                    texts=["t"] * n)
    return Group(task=task, rewards=list(rewards), **{**defaults, **fields})


def solved(k: int, n: int) -> list[float]:
    """The rewards of ``n`` attempts of which the first ``k`` succeed."""
    return [1.0] * k + [0.0] * (n - k)


def agent_module(model, tokenizer, agent_cfg, **kwargs):
    """An :class:`~lightning_genenv.agent.AgentModule` with the schema's trainer and strategy defaults."""
    from lightning_genenv.agent import AgentModule

    kwargs.setdefault("max_nonfinite_steps", DEFAULTS.trainer.max_nonfinite_steps)
    kwargs.setdefault("trainable", DEFAULTS.curriculum.train_agent)
    return AgentModule(model, tokenizer, agent_cfg, DEFAULTS.trainer.accumulate_grad_batches,
                       DEFAULTS.strategy.cpu_offload, **kwargs)


def simulator_module(model, tokenizer, sim_cfg, **kwargs):
    """A :class:`~lightning_genenv.simulator.SimulatorModule` with the schema's defaults for the rest."""
    from lightning_genenv.simulator import SimulatorModule

    kwargs.setdefault("max_nonfinite_steps", DEFAULTS.trainer.max_nonfinite_steps)
    return SimulatorModule(model, tokenizer, sim_cfg, DEFAULTS.curriculum.train_simulator,
                           DEFAULTS.strategy.cpu_offload, **kwargs)
