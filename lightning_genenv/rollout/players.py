"""The two players' rollout engines as one value that the agent, the task source and the
co-evolution callback are built with.

The engines themselves are made by :meth:`Rollouts.start`, at the trainer's setup: vLLM's colocated
mode needs the process group, which the trainer starts, and its memory is claimed before the
training weights reach the device. Under vLLM the simulator shares the agent's ``vllm.LLM`` when
the architectures match (:func:`~lightning_genenv.rollout.build_engine`).

Deliberately left out: choosing the backend (``train.py`` resolves ``rollout.backend=auto`` first and
passes the chosen one; the config keeps what was asked for).
"""

from __future__ import annotations

from contextlib import nullcontext

from lightning_genenv import rollout_engines
from lightning_genenv.rollout import RolloutEngine, build_engine


def importance_sampling_cap(rollout_cfg, backend: str) -> float | None:
    """TRL's truncated importance-sampling cap for an engine whose samples need the correction (vLLM's, an
    external sampler; ``backend``: the chosen one, its capability in :mod:`lightning_genenv.rollout_engines`),
    or None."""
    if rollout_engines.engine(backend).correction is not None and rollout_cfg.vllm_importance_sampling_correction:
        return rollout_cfg.vllm_importance_sampling_clip_max
    return None


class Rollouts:
    """``agent`` and ``simulator`` engines (the latter None without a simulator), once started."""

    def __init__(self, rollout_cfg, backend: str | None, agent: tuple | None = None, simulator: tuple | None = None):
        """``backend``: the chosen one (``hf`` or ``vllm``); ``agent`` / ``simulator``: ``(model, tokenizer)``."""
        self.cfg, self.backend = rollout_cfg, backend
        self._players = {"agent": agent, "simulator": simulator}
        self.agent: RolloutEngine | None = None
        self.simulator: RolloutEngine | None = None

    @classmethod
    def of(cls, agent: RolloutEngine, simulator: RolloutEngine | None = None) -> "Rollouts":
        """Already built engines (tests, benchmarks)."""
        rollouts = cls(None, None)
        rollouts.agent, rollouts.simulator = agent, simulator
        return rollouts

    def start(self, progress: bool, forward_context=nullcontext) -> None:
        """Build the engines (once); ``progress``: show their progress bars; ``forward_context``: the trainer's
        precision context, which an in-process engine generates in."""
        if self.agent is not None:
            return
        cfg, agent, sim = self.cfg, self._players["agent"], self._players["simulator"]
        self.agent = build_engine(self.backend, *agent, cfg.batch_size, progress, cfg, forward_context=forward_context)
        if sim is not None:  # vllm: one shared engine when both players have one architecture
            self.simulator = build_engine(self.backend, *sim, cfg.batch_size, progress, cfg, share_with=self.agent,
                                          forward_context=forward_context)

    def engines(self) -> list[RolloutEngine]:
        return [e for e in (self.agent, self.simulator) if e is not None]

    def sync(self) -> None:
        for engine in self.engines():
            engine.sync()

    def pop_sync_times(self) -> list[float]:
        """Seconds of each weight push into the engines since the last call."""
        return [t for e in self.engines() for t in e.pop_sync_times()]
