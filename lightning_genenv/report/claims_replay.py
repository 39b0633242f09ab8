"""The calibrated solver's figures with replayed seeds (``simulator.seed_replay``; RESULTS.md "Calibrated solver")
as :class:`~lightning_genenv.report.claim.Claim` values, recomputed from the archived runs
``docs/results/calibrated-shaped/replay-*`` (a constant learning rate), ``lin-*`` (decaying linearly), ``os3-*``
and ``og-*`` (keyed to the epoch's distance from alpha, scale 0.3 and 0.1), ``n16-*`` (16 attempts a task),
``k8-*`` (8 candidates a seed), ``kl01-*`` (a tenth of the KL's weight), ``imit05-*`` (an imitation term on the
in-band tasks, ``simulator.imitate_in_band=0.5``), ``replay1-*`` (every seed replayed), ``k8b8-*`` (8 candidates of
every seed, 8 a step), ``temp05-*`` (written at temperature 0.5), ``grwr-*`` (``group_rwr``) and ``tg1-*``
(``curriculum.target_gain=1``), ``tm-*`` (with ``curriculum.target_memory=0.5``) and ``rs-*`` (a task always
solved scored ``R_env(1)``, ``simulator.reward_solved=null``) through
:mod:`~lightning_genenv.report.calibrated_views`. Left out: the runs' per-epoch tables, which
``bench/calibration_table.py`` prints.
"""

from __future__ import annotations

from lightning_genenv.report.calibrated_views import (
    SHAPED,
    end_difficulty,
    epoch_noise,
    last_d,
    last_epochs,
    late_hits,
    level_share,
    replay_hits,
    seed_runs,
    success_by_seed_kind,
    tail_means,
    trained_minus_untrained,
    variations_of_level,
)
from lightning_genenv.report.calibration import Setting
from lightning_genenv.report.claim import Claim, R

# Each setting's tag in the archived runs' names, as RESULTS.md names it
_SETTINGS = {"a08": "α = 0.8, d₀ = 2.75", "a05": "α = 0.5, d₀ = 2", "a02": "α = 0.2, d₀ = 5",
             "a08-d369": "α = 0.8, d₀ = 3.69", "a02-d43": "α = 0.2, d₀ = 4.3"}

# grpo with 0.75 of the seeds replayed, 3 seeds a setting, as RESULTS.md's table prints it: |p-bar - alpha| at
# epoch 10 and over epochs 5-10, then paired over epochs 5-10 with the never-trained simulator and with grpo
# without replay (both archived from earlier grids, the same seeds)
_ROWS = {
    "a05": ("0.033 / 0.033 / 0.004", "0.101 / 0.155 / 0.078", "−0.285 [−0.356, −0.214]", "−0.031 [−0.105, +0.042]"),
    "a02": ("0.281 / 0.075 / 0.079", "0.100 / 0.249 / 0.125", "−0.331 [−0.536, −0.126]", "−0.241 [−0.648, +0.166]"),
    "a08": ("0.226 / 0.144 / 0.026", "0.198 / 0.210 / 0.118", "−0.404 [−0.614, −0.193]", "−0.001 [−0.031, +0.029]"),
    "a08-d369": ("0.012 / 0.011 / 0.047", "0.161 / 0.113 / 0.122", "−0.275 [−0.449, −0.100]",
                 "−0.116 [−0.319, +0.087]"),
    "a02-d43": ("0.198 / 0.179 / 0.047", "0.172 / 0.154 / 0.153", "−0.188 [−0.350, −0.027]",
                "−0.135 [−0.458, +0.188]"),
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
    (SHAPED, "replay1-grpo-a02-s0", "0.069", "0.075"),
    (SHAPED, "replay1-grpo-a02-d43-s0", "0.161", "0.228"),
    (SHAPED, "replay1-grpo-a08-d369-s0", "0.118", "0.124"),
    (SHAPED, "replay-grpo-a02-s3", "0.018", "0.132"),  # a fourth seed at alpha 0.2, d0 5
    (SHAPED, "untrained-a02-s3", "0.175", "0.390"),  # its never-trained pair, without replay
    (SHAPED, "n16-grpo-a02-s0", "0.014", "0.187"),  # 16 attempts a task (agent.num_generations=16), alpha 0.2
    (SHAPED, "n16-grpo-a02-s1", "0.257", "0.218"),
    (SHAPED, "og-grpo-a02-s0", "0.244", "0.102"),  # the rate keyed to |p-bar - alpha| with lr_off_target_scale 0.1
    (SHAPED, "og-grpo-a05-s0", "0.073", "0.112"),
    (SHAPED, "replay-untrained-a02-d43-s0", "0.316", "0.422"),  # replay, never trained, alpha 0.2, d0 4.3
    (SHAPED, "k8-grpo-a02-d43-s0", "0.030", "0.165"),  # 8 candidates a seed, alpha 0.2, d0 4.3
    (SHAPED, "kl01-grpo-a02-d43-s0", "0.159", "0.133"),  # a tenth of the KL's weight (simulator.kl_coef=0.01)
    (SHAPED, "temp05-grpo-a02-d43-s0", "0.040", "0.212"),  # written at temperature 0.5 (simulator.temperature)
    (SHAPED, "temp05-grpo-a02-d43-s1", "0.161", "0.206"),
    (SHAPED, "grwr-a02-d43-s0", "0.268", "0.401"),  # group_rwr with replay
    (SHAPED, "tg1-grpo-a02-d43-s0", "0.138", "0.113"),  # R_env aimed past alpha by the epoch's error (target_gain=1)
    (SHAPED, "tg1-grpo-a02-d43-s1", "0.234", "0.161"),
    (SHAPED, "tg1-grpo-a05-s0", "0.071", "0.095"),
    (SHAPED, "tg1-grpo-a08-d369-s0", "0.281", "0.213"),
    (SHAPED, "tm-grpo-move-a05-d43-s0", "0.122", "0.140"),  # the target memory's run on the moving target
    (SHAPED, "rs-grpo-move-a05-d43-s0", "0.046", "0.149"),  # p-hat 1 scored R_env(1), on the moving target
    (SHAPED, "np-grpo-move-a05-d43-s0", "0.115", "0.192"),  # ... with the seeds nearest alpha replayed
    (SHAPED, "ng-grpo-move-a05-d43-s0", "0.112", "0.098"),  # ... nearest a point moved against the last error
)


# the same with the learning rate decaying linearly over the 10 updates (simulator.lr_scheduler_type=linear), its
# last column paired with the constant step's runs above
_LINEAR = {
    "a02": ("0.005 / 0.008 / 0.082", "0.080 / 0.152 / 0.090", "−0.382 [−0.518, −0.246]", "−0.051 [−0.151, +0.049]"),
    "a05": ("0.030 / 0.089 / 0.190", "0.195 / 0.168 / 0.136", "−0.230 [−0.300, −0.159]", "+0.055 [−0.046, +0.156]"),
    "a08-d369": ("0.238 / 0.093 / 0.344", "0.214 / 0.063 / 0.217", "−0.242 [−0.572, +0.087]",
                 "+0.032 [−0.154, +0.218]"),
}

# the same with each update's rate keyed to its epoch's distance from alpha (simulator.lr_scheduler_type=off_target,
# lr_off_target_scale 0.3), its last column paired with the constant step's runs
_OFF_TARGET = {
    "a02": ("0.006 / 0.428 / 0.061", "0.070 / 0.389 / 0.083", "−0.308 [−0.726, +0.110]", "+0.023 [−0.231, +0.277]"),
    "a05": ("0.052 / 0.062 / 0.212", "0.156 / 0.165 / 0.153", "−0.238 [−0.249, −0.227]", "+0.046 [−0.035, +0.128]"),
    "a08-d369": ("0.026 / 0.025 / 0.096", "0.169 / 0.085 / 0.150", "−0.272 [−0.502, −0.042]",
                 "+0.002 [−0.067, +0.072]"),
}

# the same at the constant rate with 8 candidates a seed (simulator.num_variations=8, data.seeds_per_epoch=5: the
# same 40 tasks an epoch), its last column paired with the 4-candidate runs above
_K8 = {
    "a02": ("0.016 / 0.082 / 0.054", "0.169 / 0.090 / 0.061", "−0.383 [−0.473, −0.293]", "−0.052 [−0.335, +0.232]"),
    "a05": ("0.003 / 0.144 / 0.050", "0.088 / 0.132 / 0.079", "−0.296 [−0.340, −0.252]", "−0.012 [−0.041, +0.018]"),
    "a08-d369": ("0.443 / 0.008 / 0.026", "0.317 / 0.148 / 0.082", "−0.224 [−0.365, −0.084]",
                 "+0.050 [−0.195, +0.296]"),
}

# the same at the constant rate with 8 candidates of each of the family's 10 seeds, 8 generations a step
# (simulator.num_variations=8 simulator.batch_size=8: 80 tasks an epoch), a probe at alpha 0.2, d0 4.3
_K8B8 = {"a02-d43": ("0.122 / 0.130 / 0.107", "0.134 / 0.150 / 0.141", "−0.207 [−0.324, −0.089]",
                     "−0.018 [−0.063, +0.026]")}

# the same at the constant rate with an imitation term on each epoch's in-band tasks (simulator.imitate_in_band=0.5),
# its last column paired with the replay runs above
_IMITATION = {
    "a02": ("0.021 / 0.013 / 0.028", "0.121 / 0.156 / 0.061", "−0.376 [−0.435, −0.318]", "−0.045 [−0.191, +0.101]"),
    "a05": ("0.125 / 0.054 / 0.000", "0.150 / 0.106 / 0.119", "−0.271 [−0.345, −0.197]", "+0.013 [−0.121, +0.148]"),
    "a08-d369": ("0.032 / 0.349 / 0.040", "0.284 / 0.261 / 0.065", "−0.203 [−0.316, −0.091]",
                 "+0.071 [−0.208, +0.350]"),
}

# the same at the constant rate with R_env's target moved by the run's error, each earlier epoch's faded by half
# (curriculum.target_gain=1 curriculum.target_memory=0.5), its last column paired with the replay runs above
_TARGET_MEMORY = {
    "a02": ("0.024 / 0.030 / 0.050", "0.108 / 0.204 / 0.104", "−0.351 [−0.493, −0.208]", "−0.019 [−0.084, +0.046]"),
    "a05": ("0.250 / 0.077 / 0.134", "0.175 / 0.095 / 0.097", "−0.274 [−0.397, −0.150]", "+0.011 [−0.155, +0.177]"),
    "a08-d369": ("0.295 / 0.248 / 0.100", "0.216 / 0.203 / 0.220", "−0.194 [−0.412, +0.024]",
                 "+0.081 [+0.024, +0.137]"),
}

# the same at the constant rate with a task always solved scored R_env(1) instead of 0 (simulator.reward_solved=null),
# its last column paired with the replay runs above
_SOLVED_SCORED = {
    "a02": ("0.209 / 0.091 / 0.013", "0.270 / 0.154 / 0.213", "−0.276 [−0.460, −0.093]", "+0.055 [−0.281, +0.391]"),
    "a05": ("0.015 / 0.036 / 0.086", "0.064 / 0.155 / 0.092", "−0.292 [−0.387, −0.198]", "−0.008 [−0.073, +0.057]"),
    "a08-d369": ("0.012 / 0.024 / 0.070", "0.114 / 0.075 / 0.037", "−0.331 [−0.447, −0.215]",
                 "−0.057 [−0.118, +0.004]"),
}

# the same with the replayed seeds the window's tasks nearest alpha, in band or not (simulator.seed_replay_pick=nearest,
# p-hat 1 scored R_env(1) as above), its last column paired with the runs above, which pick from the in-band ones
_NEAREST = {
    "a02": ("0.205 / 0.015 / 0.024", "0.238 / 0.133 / 0.144", "−0.317 [−0.452, −0.182]", "−0.041 [−0.104, +0.022]"),
    "a05": ("0.043 / 0.031 / 0.050", "0.092 / 0.094 / 0.140", "−0.288 [−0.375, −0.200]", "+0.005 [−0.140, +0.149]"),
    "a08-d369": ("0.007 / 0.065 / 0.064", "0.121 / 0.054 / 0.180", "−0.288 [−0.616, +0.040]",
                 "+0.043 [−0.174, +0.260]"),
}

# the same with the nearest pick aimed past alpha against the last epoch's error (simulator.seed_replay_gain=1), its
# last column paired with the nearest pick's runs above
_NEAREST_GAIN = {
    "a02": ("0.149 / 0.144 / 0.032", "0.072 / 0.170 / 0.174", "−0.350 [−0.593, −0.107]", "−0.033 [−0.319, +0.253]"),
    "a05": ("0.025 / 0.084 / 0.000", "0.107 / 0.089 / 0.073", "−0.307 [−0.353, −0.261]", "−0.019 [−0.125, +0.088]"),
    "a08-d369": ("0.155 / 0.007 / 0.116", "0.120 / 0.062 / 0.136", "−0.301 [−0.562, −0.040]",
                 "−0.012 [−0.080, +0.056]"),
}

# of every trained run with replayed seeds at a fixed target, whatever its other settings, those within 0.1 at
# epoch 10: (alpha, d0, value); these grow as runs are archived
_BY_TARGET = ((0.2, 5.0, "24 of 32"), (0.2, 4.3, "3 of 14"), (0.5, 2.0, "23 of 29"), (0.8, 3.69, "19 of 29"),
              (0.8, 2.75, "1 of 4"))

# an epoch's p-bar's sampling error at each of the bar's targets, the chance a simulator exactly on alpha ends within
# 0.1, and that all 9 runs do (and with twice the seeds an epoch)
_NOISE_TARGETS = ((0.2, 5.0), (0.5, 2.0), (0.8, 3.69))
_NOISE = "SE 0.065, chance 0.88; SE 0.047, chance 0.97; SE 0.055, chance 0.93; all 0.49; twice the seeds 0.88"

# the mean success of the tasks written from base seeds (their share) and from replayed ones, epochs 5-10
_SEED_KINDS = (("replay-grpo-a02-d43", "base 0.53 (share 0.22 of 659) / replayed 0.31"),
               ("replay-grpo-a02", "base 0.53 (share 0.32 of 655) / replayed 0.23"),
               ("replay-grpo-a08-d369", "base 0.69 (share 0.22 of 579) / replayed 0.67"),
               ("k8b8-grpo-a02-d43", "base 0.50 (share 0.21 of 1325) / replayed 0.29"))

# of the last four epochs (7-10) of each schedule's 9 runs (3 alphas x 3 seeds), those within 0.1 of alpha:
# (stem, the words after the value in RESULTS.md, value)
_LATE = (("replay-grpo", "at a constant rate", "21 of 36"), ("lin-grpo", "decaying", "18 of 36"),
         ("os3-grpo", "keyed to the distance", "21 of 36"), ("k8-grpo", "(4 candidates", "21 of 36"),
         ("imit05-grpo", "with the imitation term", "18 of 36"), ("rs-grpo", "with p̂ = 1 scored", "22 of 36"),
         ("np-grpo", "with the nearest pick", "21 of 36"), ("ng-grpo", "with the gain", "21 of 36"))

# the share of each seed's tasks from epoch 5 on at the reward's peak level: (setting, level, value)
_AT_PEAK = (("a02", 6.0, "0.55 / 0.37 / 0.47"), ("a05", 2.0, "0.73 / 0.63 / 0.78"), ("a08", 2.0, "0.61 / 0.60 / 0.74"),
            ("a08-d369", 3.0, "0.35 / 0.58 / 0.67"), ("a02-d43", 5.0, "0.39 / 0.47 / 0.39"))

# the share of each seed's tasks from epoch 5 on at the levels either side of the reward's peak (d = 3), at alpha 0.8,
# d0 3.69: (stem, level, value)
_BESIDE_PEAK = (("replay-grpo-a08-d369", 4.0, "0.23 / 0.22 / 0.16"), ("tm-grpo-a08-d369", 4.0, "0.44 / 0.49 / 0.27"),
                ("rs-grpo-a08-d369", 4.0, "0.07 / 0.13 / 0.12"), ("rs-grpo-a08-d369", 2.0, "0.46 / 0.18 / 0.50"),
                ("replay-grpo-a08-d369", 2.0, "0.27 / 0.15 / 0.11"))

# of the tasks written from epoch 5 on from a replayed seed at the target's level, the shares easier, at the level,
# harder and unrated, over a stem's seeds: (stem, seeds, level, value)
_TRAINED, _SEED_0 = (0, 1, 2), (0,)
_VARIATIONS = (
    ("replay-grpo-a02-d43", _TRAINED, 5.0, "easier 0.29 / same 0.50 / harder 0.17 / unrated 0.04 of 429"),
    ("replay-grpo-a05", _TRAINED, 2.0, "easier 0.00 / same 0.77 / harder 0.19 / unrated 0.04 of 400"),
    ("replay-grpo-a08-d369", _TRAINED, 3.0, "easier 0.14 / same 0.61 / harder 0.19 / unrated 0.07 of 413"),
    ("replay-grpo-a08", _TRAINED, 2.0, "easier 0.00 / same 0.67 / harder 0.23 / unrated 0.10 of 396"),
    ("imit05-grpo-a05", _TRAINED, 2.0, "easier 0.01 / same 0.72 / harder 0.26 / unrated 0.02 of 371"),
    ("imit05-grpo-a08-d369", _TRAINED, 3.0, "easier 0.09 / same 0.61 / harder 0.24 / unrated 0.06 of 379"),
    ("k8b8-grpo-a02-d43", _TRAINED, 5.0, "easier 0.21 / same 0.62 / harder 0.16 / unrated 0.02 of 904"),
    ("tm-grpo-a08-d369", _TRAINED, 3.0, "easier 0.11 / same 0.45 / harder 0.39 / unrated 0.04 of 405"),
    ("np-grpo-a02", _SEED_0, 5.0, "easier 0.24 / same 0.48 / harder 0.23 / unrated 0.04 of 94"),
    ("np-grpo-a02", _SEED_0, 6.0, "easier 0.43 / same 0.27 / harder 0.19 / unrated 0.12 of 75"),
    ("replay-grpo-a02", _SEED_0, 5.0, "easier 0.14 / same 0.21 / harder 0.64 / unrated 0.00 of 28"),
    ("replay-grpo-a02", _SEED_0, 6.0, "easier 0.22 / same 0.66 / harder 0.12 / unrated 0.01 of 155"),
    ("temp05-grpo-a02-d43", _SEED_0, 5.0, "easier 0.39 / same 0.45 / harder 0.15 / unrated 0.01 of 151"),
    ("replay-untrained-a02-d43", _SEED_0, 5.0, "easier 0.64 / same 0.07 / harder 0.07 / unrated 0.21 of 14"),
    ("replay-untrained-a05", _SEED_0, 2.0, "easier 0.01 / same 0.29 / harder 0.50 / unrated 0.20 of 96"),
    ("replay-untrained-a08", _SEED_0, 2.0, "easier 0.03 / same 0.20 / harder 0.51 / unrated 0.26 of 113"))

# the target moving from d0 4.3 by 0.2 an epoch, seeds 0-2, with replay (the rate constant, decaying linearly, and
# keyed to the distance from alpha)
# and never trained: (run stem, what, view, value); then each trained stem - never trained, paired by seed: (stem,
# what, view, value)
_MOVING = tuple((stem, what, view, value) for stem, values in (
    ("replay-grpo-move-a05-d43", ("6.13 / 6.00 / 5.19", "0.026 / 0.032 / 0.264", "0.175 / 0.086 / 0.216")),
    ("untrained-move-a05-d43", ("3.80 / 4.13 / 3.44", "0.282 / 0.241 / 0.108", "0.202 / 0.171 / 0.156")),
    ("lin-grpo-move-a05-d43", ("6.32 / 5.77 / 6.32", "0.017 / 0.125 / 0.138", "0.140 / 0.123 / 0.097")),
    ("os3-grpo-move-a05-d43", ("5.81 / 8.03 / 6.97", "0.033 / 0.193 / 0.227", "0.194 / 0.160 / 0.093")))
    for (what, view), value in zip((("mean d at epoch 10", last_d), ("|p-bar - alpha| at epoch 10", last_epochs),
                                    ("mean |p-bar - alpha| over epochs 5-10", tail_means)), values))
_MOVING_PAIRED = tuple((stem, what, view, value) for stem, values in (
    ("replay-grpo-move-a05-d43", ("+1.983 [+1.224, +2.741]", "−0.103 [−0.664, +0.458]", "−0.017 [−0.198, +0.164]")),
    ("lin-grpo-move-a05-d43", ("+2.345 [+0.766, +3.924]", "−0.117 [−0.484, +0.249]", "−0.056 [−0.074, −0.039]")),
    ("os3-grpo-move-a05-d43", ("+3.146 [+0.668, +5.625]", "−0.059 [−0.518, +0.399]", "−0.027 [−0.103, +0.049]")))
    for (what, view), value in zip((("mean d at epoch 10", end_difficulty),
                                    ("|p-bar - alpha| at epoch 10", Setting.last),
                                    ("mean |p-bar - alpha| over epochs 5-10", Setting.tail_mean)), values))


def _table(stem: str, control: str, rows: dict[str, tuple[str, ...]], label: str = "") -> tuple[Claim, ...]:
    """A table of RESULTS.md's calibrated section, one row per setting (``<stem>-<tag>-s{0,1,2}``; its first cell
    ``_SETTINGS[tag]`` and ``label``): ``|p̄ − α|`` at epoch 10 and over epochs 5–10 per seed, then paired by seed
    over epochs 5–10 with the never-trained simulator and with ``<control>-<tag>``."""
    return tuple(
        Claim(f"calibrated solver, {stem}-{tag}: {what}", value, compute,
              ((R, f"| {_SETTINGS[tag]}{label} |"),),
              f"{SHAPED}/{stem}-{tag}-s*")
        for tag, row in rows.items()
        for what, value, compute in zip(
            ("|p-bar - alpha| at epoch 10 per seed", "mean |p-bar - alpha| over epochs 5-10 per seed",
             "mean |p-bar - alpha| over epochs 5-10, - never trained, 3 pairs",
             f"mean |p-bar - alpha| over epochs 5-10, - {control}, 3 pairs"), row,
            (last_epochs(SHAPED, *seed_runs(f"{stem}-{tag}")), tail_means(SHAPED, *seed_runs(f"{stem}-{tag}")),
             trained_minus_untrained(f"{stem}-{tag}", f"untrained-{tag}", Setting.tail_mean),
             trained_minus_untrained(f"{stem}-{tag}", f"{control}-{tag}", Setting.tail_mean))))


# single figures of the linear schedule's runs: (run, what, view, value)
_LINEAR_SINGLE = (("lin-grpo-a05-s2", "mean d at epoch 10", last_d, "2.15"),)

REPLAY_CLAIMS: tuple[Claim, ...] = (
    *_table("replay-grpo", "grpo", _ROWS),
    *_table("lin-grpo", "replay-grpo", _LINEAR, ", linear"),
    *_table("os3-grpo", "replay-grpo", _OFF_TARGET, ", off-target"),
    *_table("k8-grpo", "replay-grpo", _K8, ", 8 candidates"),
    *_table("imit05-grpo", "replay-grpo", _IMITATION, ", in-band imitation"),
    *_table("k8b8-grpo", "replay-grpo", _K8B8, ", 10 seeds × 8 candidates"),
    *_table("tm-grpo", "replay-grpo", _TARGET_MEMORY, ", target memory"),
    *_table("rs-grpo", "replay-grpo", _SOLVED_SCORED, ", p̂ = 1 scored R_env(1)"),
    *_table("np-grpo", "rs-grpo", _NEAREST, ", nearest α replayed"),
    *_table("ng-grpo", "np-grpo", _NEAREST_GAIN, ", nearest α − (p̄ − α) replayed"),
    *(Claim(f"calibrated solver, replayed seeds, alpha {alpha:g}, d0 {d0:g}: runs within 0.1 at epoch 10, any setting",
            value, replay_hits(alpha, d0), ((R, f"**{value}**"),), f"{SHAPED}/*")
      for alpha, d0, value in _BY_TARGET),
    Claim("calibrated solver, replayed seeds: an epoch's sampling error at the bar's targets, epochs 5-10", _NOISE,
          epoch_noise(_NOISE_TARGETS), ((R, f"**{_NOISE}**"),), f"{SHAPED}/*/calibration_tasks.jsonl.gz"),
    *(Claim(f"calibrated solver, {stem}: success of the tasks from base and from replayed seeds, epochs 5-10", value,
            success_by_seed_kind(*seed_runs(stem)), ((R, f"**{value}**"),),
            f"{SHAPED}/{stem}-s*/calibration_tasks.jsonl.gz")
      for stem, value in _SEED_KINDS),
    *(Claim(f"calibrated solver, {stem}: epochs 7-10 within 0.1 of alpha, 9 runs", value,
            late_hits(7, *(run for tag in ("a02", "a05", "a08-d369") for run in seed_runs(f"{stem}-{tag}"))),
            ((R, f"**{value}** {label}"),), f"{SHAPED}/{stem}-*")
      for stem, label, value in _LATE),
    *(Claim(f"calibrated solver, {run}: {what}", value, view(SHAPED, run), ((R, f"(mean `d` **{value}**"),),
            f"{SHAPED}/{run}") for run, what, view, value in _LINEAR_SINGLE),
    *(Claim(f"calibrated solver, replayed seeds, {folder}/{run}: {what}", value, compute(folder, run),
            ((R, f"`{folder}/{run}`"),), f"{folder}/{run}")
      for folder, run, last, tail in _SINGLE
      for what, value, compute in (("|p-bar - alpha| at epoch 10", last, last_epochs),
                                   ("mean |p-bar - alpha| over epochs 5-10", tail, tail_means))),
    *(Claim(f"calibrated solver, replayed seeds, {tag}: share of tasks at d = {level:g} from epoch 5 on, per seed",
            value, level_share(level, *seed_runs(f"replay-grpo-{tag}")), ((R, f"**{value}**"),),
            f"{SHAPED}/replay-grpo-{tag}-s*/calibration_tasks.jsonl.gz")
      for tag, level, value in _AT_PEAK),
    *(Claim(f"calibrated solver, {stem}: share of tasks at d = {level:g} from epoch 5 on, per seed", value,
            level_share(level, *seed_runs(stem)), ((R, f"**{value}**"),),
            f"{SHAPED}/{stem}-s*/calibration_tasks.jsonl.gz")
      for stem, level, value in _BESIDE_PEAK),
    *(Claim(f"calibrated solver, {stem}: what is written from a replayed seed at d = {level:g}, epochs 5-10",
            value, variations_of_level(level, *seed_runs(stem, seeds)),
            ((R, f"**{value}**"),), f"{SHAPED}/{stem}-s*/calibration_tasks.jsonl.gz")
      for stem, seeds, level, value in _VARIATIONS),
    Claim("calibrated solver, replay-grpo-a02-d43: epochs 7-10 within 0.1 of alpha, 3 runs", "3 of 12",
          late_hits(7, *seed_runs("replay-grpo-a02-d43")), ((R, "in **3 of 12**"),),
          f"{SHAPED}/replay-grpo-a02-d43-s*"),
    *(Claim(f"calibrated solver, moving target, {stem}: {what} per seed", value,
            view(SHAPED, *seed_runs(stem)), ((R, f"**{value}**"),), f"{SHAPED}/{stem}-s*")
      for stem, what, view, value in _MOVING),
    *(Claim(f"calibrated solver, moving target, {stem} - never trained: {what}, 3 pairs", value,
            trained_minus_untrained(stem, "untrained-move-a05-d43", view),
            ((R, f"**{value}**"),), f"{SHAPED}/{stem}-s*, {SHAPED}/untrained-move-a05-d43-s*")
      for stem, what, view, value in _MOVING_PAIRED),
)
