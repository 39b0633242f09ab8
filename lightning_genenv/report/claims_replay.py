"""The calibrated solver's figures with replayed seeds (``simulator.seed_replay``; RESULTS.md "Calibrated solver")
as :class:`~lightning_genenv.report.claim.Claim` values, recomputed from the archived runs
``docs/results/calibrated-shaped/replay-*`` through :mod:`~lightning_genenv.report.calibrated_views`. Left out: the
runs' per-epoch tables, which ``bench/calibration_table.py`` prints.
"""

from __future__ import annotations

from lightning_genenv.report.calibrated_views import (
    SHAPED,
    end_difficulty,
    last_d,
    last_epochs,
    level_share,
    seed_runs,
    tail_means,
    trained_minus_untrained,
)
from lightning_genenv.report.calibration import Setting
from lightning_genenv.report.claim import Claim, R

# Each setting's tag in the archived runs' names, as RESULTS.md names it
_SETTINGS = {"a08": "α = 0.8, d₀ = 2.75", "a05": "α = 0.5, d₀ = 2", "a02": "α = 0.2, d₀ = 5",
             "a08-d369": "α = 0.8, d₀ = 3.69"}

# grpo with 0.75 of the seeds replayed, 3 seeds a setting, as RESULTS.md's table prints it: |p-bar - alpha| at
# epoch 10 and over epochs 5-10, then paired over epochs 5-10 with the never-trained simulator and with grpo
# without replay (both archived from earlier grids, the same seeds)
_ROWS = {
    "a05": ("0.033 / 0.033 / 0.004", "0.101 / 0.155 / 0.078", "−0.285 [−0.356, −0.214]", "−0.031 [−0.105, +0.042]"),
    "a02": ("0.281 / 0.075 / 0.079", "0.100 / 0.249 / 0.125", "−0.331 [−0.536, −0.126]", "−0.241 [−0.648, +0.166]"),
    "a08": ("0.226 / 0.144 / 0.026", "0.198 / 0.210 / 0.118", "−0.404 [−0.614, −0.193]", "−0.001 [−0.031, +0.029]"),
    "a08-d369": ("0.012 / 0.011 / 0.047", "0.161 / 0.113 / 0.122", "−0.275 [−0.449, −0.100]",
                 "−0.116 [−0.319, +0.087]"),
}

# one seed each: replay without the simulator's update (never trained), and replay with base tasks as the
# replayed seeds' examples (the first design, its own folder): (folder, run, |p-bar - alpha| at epoch 10, over
# epochs 5-10)
FIRST = "calibrated-replay-first"
_SINGLE = (
    (SHAPED, "replay-untrained-a08-s0", "0.477", "0.509"),
    (SHAPED, "replay-untrained-a05-s0", "0.281", "0.359"),
    (SHAPED, "replay-untrained-a02-s0", "0.204", "0.350"),
    (FIRST, "grpo-a08-s0", "0.316", "0.370"),
    (FIRST, "untrained-a08-s0", "0.530", "0.538"),
    (SHAPED, "replay1-grpo-a08-s0", "0.407", "0.331"),  # every seed replayed (simulator.seed_replay=1)
    (SHAPED, "replay-grpo-a02-s3", "0.018", "0.132"),  # a fourth seed at alpha 0.2, d0 5
    (SHAPED, "untrained-a02-s3", "0.175", "0.390"),  # its never-trained pair, without replay
)


# the figures the answers' table quotes too: (setting, column)
_HEADLINE = {("a05", 0), ("a02", 0), ("a02", 2), ("a08", 0), ("a08-d369", 0)}
_ANSWER = "| Does the simulator learn a curriculum? Calibrated solver |"

# the share of each seed's tasks from epoch 5 on at the reward's peak level: (setting, level, value)
_AT_PEAK = (("a02", 6.0, "0.55 / 0.37 / 0.47"), ("a05", 2.0, "0.73 / 0.63 / 0.78"), ("a08", 2.0, "0.61 / 0.60 / 0.74"),
            ("a08-d369", 3.0, "0.35 / 0.58 / 0.67"))

# the target moving from d0 4.3 by 0.2 an epoch, seeds 0-2, with replay and never trained: (run stem, what, view,
# value); then replay - never trained, paired by seed: (what, view, value)
_MOVING = tuple((stem, what, view, value) for stem, values in (
    ("replay-grpo-move-a05-d43", ("6.13 / 6.00 / 5.19", "0.026 / 0.032 / 0.264", "0.175 / 0.086 / 0.216")),
    ("untrained-move-a05-d43", ("3.80 / 4.13 / 3.44", "0.282 / 0.241 / 0.108", "0.202 / 0.171 / 0.156")))
    for (what, view), value in zip((("mean d at epoch 10", last_d), ("|p-bar - alpha| at epoch 10", last_epochs),
                                    ("mean |p-bar - alpha| over epochs 5-10", tail_means)), values))
_MOVING_PAIRED = (("mean d at epoch 10", end_difficulty, "+1.983 [+1.224, +2.741]"),
                  ("|p-bar - alpha| at epoch 10", Setting.last, "−0.103 [−0.664, +0.458]"),
                  ("mean |p-bar - alpha| over epochs 5-10", Setting.tail_mean, "−0.017 [−0.198, +0.164]"))

REPLAY_CLAIMS: tuple[Claim, ...] = (
    *(Claim(f"calibrated solver, replayed seeds, {tag}: {what}", value, compute,
            ((R, f"| {_SETTINGS[tag]} |"), *(((R, _ANSWER),) if (tag, i) in _HEADLINE else ())),
            f"{SHAPED}/replay-grpo-{tag}-s*")
      for tag, row in _ROWS.items()
      for i, (what, value, compute) in enumerate(zip(
          ("|p-bar - alpha| at epoch 10 per seed", "mean |p-bar - alpha| over epochs 5-10 per seed",
           "mean |p-bar - alpha| over epochs 5-10, - never trained, 3 pairs",
           "mean |p-bar - alpha| over epochs 5-10, - grpo without replay, 3 pairs"), row,
          (last_epochs(SHAPED, *seed_runs(f"replay-grpo-{tag}")), tail_means(SHAPED, *seed_runs(f"replay-grpo-{tag}")),
           trained_minus_untrained(f"replay-grpo-{tag}", f"untrained-{tag}", Setting.tail_mean),
           trained_minus_untrained(f"replay-grpo-{tag}", f"grpo-{tag}", Setting.tail_mean))))),
    *(Claim(f"calibrated solver, replayed seeds, {folder}/{run}: {what}", value, compute(folder, run),
            ((R, f"`{folder}/{run}`"),), f"{folder}/{run}")
      for folder, run, last, tail in _SINGLE
      for what, value, compute in (("|p-bar - alpha| at epoch 10", last, last_epochs),
                                   ("mean |p-bar - alpha| over epochs 5-10", tail, tail_means))),
    *(Claim(f"calibrated solver, replayed seeds, {tag}: share of tasks at d = {level:g} from epoch 5 on, per seed",
            value, level_share(level, *seed_runs(f"replay-grpo-{tag}")), ((R, f"**{value}**"),),
            f"{SHAPED}/replay-grpo-{tag}-s*/calibration_tasks.jsonl.gz")
      for tag, level, value in _AT_PEAK),
    *(Claim(f"calibrated solver, moving target, {stem}: {what} per seed", value,
            view(SHAPED, *seed_runs(stem)), ((R, f"**{value}**"),), f"{SHAPED}/{stem}-s*")
      for stem, what, view, value in _MOVING),
    *(Claim(f"calibrated solver, moving target, replay - never trained: {what}, 3 pairs", value,
            trained_minus_untrained("replay-grpo-move-a05-d43", "untrained-move-a05-d43", view),
            ((R, f"**{value}**"),), f"{SHAPED}/replay-grpo-move-a05-d43-s*, {SHAPED}/untrained-move-a05-d43-s*")
      for what, view, value in _MOVING_PAIRED),
)
