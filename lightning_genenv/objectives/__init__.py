"""The simulator's objectives, one module each, chosen by ``simulator.objective``: how an epoch's scored
generations become the simulator's fit set, and a batch of it its loss.

* ``rwr`` (:mod:`.rwr`): the paper's reward-weighted regression on the generations that passed the filter;
* ``group_rwr`` (:mod:`.group_rwr`): RWR with weights from each seed's candidates' group-relative advantages;
* ``grpo`` (:mod:`.grpo`): a policy gradient on those advantages with a KL to the initial simulator (R-Zero);
* ``reinforce`` (:mod:`.reinforce`): signed weights from each generation's advantage over the whole epoch.

Adding one: a module with a class that has ``fit_set`` and ``loss`` (:class:`~.base.Objective`), built from the
``simulator`` and ``curriculum`` config groups, and its name in :data:`OBJECTIVES` (the config schema reads the
names from there). The reward every objective
sees is :mod:`.shaping`'s.

Deliberately left out: when the simulator updates and on what trainer (:mod:`lightning_genenv.coevolution`).
"""

from __future__ import annotations

import importlib

# name -> "module:class"; imported when chosen, so that the config schema reads the names without torch
OBJECTIVES = {"rwr": "lightning_genenv.objectives.rwr:RWR",
              "group_rwr": "lightning_genenv.objectives.group_rwr:GroupRWR",
              "grpo": "lightning_genenv.objectives.grpo:GRPO",
              "reinforce": "lightning_genenv.objectives.reinforce:Reinforce"}
# the objectives that compare a seed's candidates with each other: they need simulator.num_variations >= 2
GROUP_OBJECTIVES = ("group_rwr", "grpo")


def make_objective(sim_cfg, cur_cfg):
    """The objective ``simulator.objective`` names (:class:`~.base.Objective`), built from its config groups."""
    module, _, name = OBJECTIVES[sim_cfg.objective].partition(":")
    return getattr(importlib.import_module(module), name)(sim_cfg, cur_cfg)
