"""Step 1 of an epoch as a pure function: the seeds the simulator writes from (:func:`draw_seeds`).

``data.seeds_per_epoch`` seeds drawn with the epoch's RNG from the base tasks. With ``simulator.seed_replay`` =
f > 0, ``round(f × seeds_per_epoch)`` of them are instead the simulator's own tasks of the last
``simulator.seed_replay_epochs`` epochs that the agent solved about α of the time (in band,
:func:`~.curriculum.in_band`), read from ``D_env``: a level once found is shown again as the example to vary, rather
than rediscovered from the base tasks each epoch (Absolute Zero's proposer conditions on its own earlier tasks).
Where there are fewer such tasks, all of them are used and the base fills the rest. With f = 0 (the default, the
paper's) the draw is the base sample alone, the RNG's calls unchanged. With ``simulator.seed_replay_pick=nearest``
the replayed ones are instead the window's tasks nearest α, whether in band or not (:func:`nearest_target`; ties
drawn at random), so that an epoch far from α still replays its closest tasks rather than falling back to the base,
whose level may be the one the run left. ``simulator.seed_replay_gain`` g > 0 aims that pick past α against the last
epoch's error, at ``α − g · (p̄ − α)`` within [0.05, 0.95] (:func:`~lightning_genenv.rewards.reward_target`): an epoch
too easy replays tasks harder than α, one too hard easier ones, since the writer mostly keeps a seed's level.

It returns :class:`Seeds`, the two kinds apart: a replayed seed's prompt shows the other replayed seeds as its
examples (:mod:`.sources`), not base tasks, which would pull its variations back to the base's level.

Deliberately left out: weighting the replayed tasks by their reward or recency within the window (each is drawn
alike, or ranked by its distance from α alone), and the tasks of a fixed set (GenEnv-Static), which are never
replayed as seeds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from lightning_genenv.coevolution.curriculum import epoch_p_bars, in_band
from lightning_genenv.pool_records import EnvRecord
from lightning_genenv.rewards import reward_target
from lightning_genenv.tasks import Task


@dataclass(frozen=True)
class Seeds:
    """Step 1's value: the epoch's seeds, base tasks and the simulator's own replayed ones."""

    base: list[Task]
    replayed: list[Task]  # its own tasks of the last epochs, in band or nearest the aim (simulator.seed_replay)
    aim: float | None = None  # the p-hat the replayed ones were picked nearest (seed_replay_pick=nearest)

    @property
    def tasks(self) -> list[Task]:
        """Every seed, in the order every rank shares: the base ones first."""
        return self.base + self.replayed


def on_target(env_pool: list[EnvRecord], epoch: int, window: int, alpha: float, width: float,
              attempts: int) -> list[Task]:
    """The simulator's valid tasks of epochs ``epoch - window`` to ``epoch - 1`` whose ``p̂`` was in band around
    ``alpha``, in ``D_env``'s order."""
    return [r.task for r in env_pool
            if r.source == "simulator" and r.task is not None and r.p_hat is not None
            and epoch - window <= r.epoch < epoch and in_band(r.p_hat, alpha, width, attempts)]


def nearest_target(env_pool: list[EnvRecord], epoch: int, window: int, alpha: float, count: int,
                   rng: random.Random) -> list[Task]:
    """The ``count`` simulator tasks of epochs ``epoch - window`` to ``epoch - 1`` whose ``p̂`` is nearest ``alpha``,
    nearest first, ties in a random order; a task never or always solved (``p̂`` 0 or 1, which says nothing about how
    far it is from α) is never one of them."""
    window_tasks = [(abs(r.p_hat - alpha), r.task) for r in env_pool
                    if r.source == "simulator" and r.task is not None and r.p_hat is not None
                    and 0.0 < r.p_hat < 1.0 and epoch - window <= r.epoch < epoch]
    shuffled = rng.sample(window_tasks, len(window_tasks))
    return [t for _, t in sorted(shuffled, key=lambda pair: pair[0])[:count]]


def draw_seeds(base: list[Task], env_pool: list[EnvRecord], epoch: int, count: int, sim_cfg, cur, attempts: int,
               rng: random.Random) -> Seeds:
    """The epoch's ``count`` seeds (fewer if the base is smaller): base tasks, and with ``sim_cfg.seed_replay`` > 0
    replayed ones, in band (``seed_replay_pick=in_band``) or nearest α, moved by ``seed_replay_gain`` (``nearest``).
    ``cur``: the curriculum config (``alpha``, ``in_band_width``); ``attempts``: the agent's attempts per task, the
    grid ``p̂`` lies on."""
    count = min(count, len(base))
    if sim_cfg.seed_replay > 0 and sim_cfg.seed_replay_pick == "nearest":
        aim = reward_target(cur.alpha, epoch_p_bars(env_pool)[-1:], sim_cfg.seed_replay_gain, 0.0)
        replayed = nearest_target(env_pool, epoch, sim_cfg.seed_replay_epochs, aim,
                                  round(sim_cfg.seed_replay * count), rng)
        return Seeds(rng.sample(base, count - len(replayed)), replayed, aim)
    replayable = on_target(env_pool, epoch, sim_cfg.seed_replay_epochs, cur.alpha, cur.in_band_width,
                           attempts) if sim_cfg.seed_replay > 0 else []
    replayed = min(round(sim_cfg.seed_replay * count), len(replayable))
    return Seeds(rng.sample(base, count - replayed), rng.sample(replayable, replayed))
