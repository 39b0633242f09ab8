"""The calibrated solver's figures (RESULTS.md "Calibrated solver") as :class:`~lightning_genenv.report.claim.Claim`
values, recomputed from the archived runs' ``calibration.jsonl`` through
:mod:`~lightning_genenv.report.calibrated_views`. Left out: the runs' per-epoch tables, which
``bench/calibration_table.py`` prints.
"""

from __future__ import annotations

import statistics

from lightning_genenv.report.calibrated_views import (
    CAL,
    CAL_OP,
    CAL_README,
    OP_README,
    SHAPED,
    bare_numbers,
    calibrated,
    calibration_wall,
    d_mean,
    difficulty_values,
    groups_differ,
    in_band,
    in_band_values,
    last_d,
    last_epochs,
    level_share,
    missed,
    objective_row,
    optimum,
    per_seed,
    rate_values,
    right_answers,
    seed_runs,
    tail_means,
    trained_minus_untrained,
    unrated_last,
    untrained_distance,
    untrained_p_bars,
)
from lightning_genenv.report.calibration import Setting
from lightning_genenv.report.claim import B, Claim, R

# Each objective at alpha 0.5, d0 2 (3 seeds, the preset's rewards), as RESULTS.md's table prints it: |p-bar - alpha|
# at epoch 10 and over epochs 5-10, both paired with the never-trained simulator, the valid and near-duplicate rates
_OBJECTIVE_ROWS = {
    "grpo": ("0.099 / 0.085 / 0.191", "0.126 / 0.161 / 0.142", "−0.253 [−0.283, −0.224]", "+0.406 [+0.371, +0.441]",
             "0.81 / 0.85 / 0.84", "0.16 / 0.14 / 0.13"),
    "group_rwr": ("0.007 / 0.008 / 0.170", "0.146 / 0.220 / 0.127", "−0.232 [−0.328, −0.137]",
                  "+0.372 [+0.184, +0.561]", "0.57 / 0.76 / 0.70", "0.42 / 0.20 / 0.29"),
    "rwr": ("0.125 / 0.042 / 0.045", "0.077 / 0.168 / 0.065", "−0.293 [−0.406, −0.180]", "+0.483 [+0.314, +0.652]",
            "0.62 / 0.67 / 0.60", "0.38 / 0.30 / 0.40"),
    "reinforce": ("0.069 / 0.037 / 0.161", "0.073 / 0.186 / 0.186", "−0.248 [−0.405, −0.091]",
                  "+0.387 [+0.193, +0.581]", "0.82 / 0.80 / 0.77", "0.13 / 0.18 / 0.17"),
}


_A08, _A08_U, _A05, _A05_U, _A02, _A02_U = (seed_runs(f"{arm}-{tag}") for tag in ("a08-d369", "a05-d3", "a02-d531")
                                            for arm in ("grpo", "untrained"))
_REINFORCE = seed_runs("reinforce-a08-d369", (0, 1))
# Targets inside the family's range (RESULTS.md): (runs, what, the figure's view of them, value, phrase)
_INSIDE_ROWS = (
    (_A08, "|p-bar - alpha| at epoch 10", lambda *r: last_epochs(SHAPED, *r), "0.317 / 0.316 / 0.012",
     "ends **0.317 / 0.316 / 0.012**"),
    (_A08, "mean |p-bar - alpha| over epochs 5-10", lambda *r: tail_means(SHAPED, *r), "0.318 / 0.282 / 0.144",
     "**0.318 / 0.282 / 0.144** over"),
    (_A08_U, "mean |p-bar - alpha| over epochs 5-10", lambda *r: tail_means(SHAPED, *r), "0.481 / 0.423 / 0.316",
     "never trained **0.481"),
    (_A08, "share of tasks at d = 3 from epoch 5 on", lambda *r: level_share(3.0, *r), "0.27 / 0.25 / 0.53",
     "**0.27 / 0.25 / 0.53** of its"),
    (_A08_U, "share of tasks at d = 3 from epoch 5 on", lambda *r: level_share(3.0, *r), "0.17 / 0.17 / 0.18",
     "never trained **0.17 / 0.17 / 0.18**"),
    (_A08, "share of tasks harder than the optimum from epoch 5 on", lambda *r: missed(1, *r),
     "0.67 / 0.63 / 0.31", "harder (**0.67 / 0.63 / 0.31**"),
    (_A05_U, "|p-bar - alpha| at epoch 1", lambda *r: per_seed(Setting.first)(SHAPED, *r), "0.254 / 0.113 / 0.232",
     "starts only **0.254 / 0.113 / 0.232**"),
    (_A05_U, "mean |p-bar - alpha| over epochs 2-10", lambda *r: per_seed(Setting.later_mean)(SHAPED, *r),
     "0.251 / 0.207 / 0.206", "stays **0.251 / 0.207 / 0.206** away"),
    (_A05, "|p-bar - alpha| at epoch 10", lambda *r: last_epochs(SHAPED, *r), "0.295 / 0.051 / 0.000",
     "**0.295 / 0.051 / 0.000** from"),
    (_A05, "mean |p-bar - alpha| over epochs 5-10, - never trained, 3 pairs",
     lambda *r: trained_minus_untrained("grpo-a05-d3", "untrained-a05-d3", Setting.tail_mean),
     "−0.084 [−0.102, −0.066]", "by **−0.084 [−0.102, −0.066]**"),
    (_A05, "share of tasks at d = 3 from epoch 5 on", lambda *r: level_share(3.0, *r), "0.39 / 0.43 / 0.50",
     "**0.39 / 0.43 / 0.50** of its"),
    (_A05_U, "share of tasks at d = 3 from epoch 5 on", lambda *r: level_share(3.0, *r), "0.26 / 0.18 / 0.29",
     "**0.26 / 0.18 / 0.29**"),
    *((_A05, f"share of tasks {side} than the optimum from epoch 5 on", lambda *r, i=i: missed(i, *r), value,
       f"**{value}**")
      for i, side, value in ((1, "harder", "0.46 / 0.47 / 0.40"), (0, "easier", "0.15 / 0.10 / 0.11"))),
    (_A02, "|p-bar - alpha| at epoch 10", lambda *r: last_epochs(SHAPED, *r), "0.313 / 0.040 / 0.178",
     "ends **0.313 / 0.040 / 0.178**"),
    (("untrained-a02-d531-s1",), "mean d over epochs 5-10", lambda *r: d_mean(SHAPED, *r), "5.42",
     "(mean `d` **5.42**"),
    (_A08, "mean |p-bar - alpha| over epochs 5-10, - never trained, 3 pairs",
     lambda *r: trained_minus_untrained("grpo-a08-d369", "untrained-a08-d369", Setting.tail_mean),
     "−0.159 [−0.199, −0.119]", "by **−0.159 [−0.199, −0.119]**"),
    (_A02[:2], "share of seed groups whose candidates differ in level", lambda *r: groups_differ(*r), "0.88 / 0.86",
     "**0.88 / 0.86** of the seed groups"),
    (_REINFORCE, "|p-bar - alpha| at epoch 10", lambda *r: last_epochs(SHAPED, *r),
     "0.068 / 0.169", "ends **0.068 / 0.169**"),
    (_REINFORCE, "mean |p-bar - alpha| over epochs 5-10", lambda *r: tail_means(SHAPED, *r),
     "0.329 / 0.205", "**0.329 / 0.205** over"),
    (("grpo-lr1e3-kl2-a08-d369-s0",), "|p-bar - alpha| at epoch 10", lambda *r: last_epochs(SHAPED, *r), "0.354",
     "a KL cap of 2 **0.354**"),
    (("grpo-lr1e3-kl2-a08-d369-s0",), "mean |p-bar - alpha| over epochs 5-10", lambda *r: tail_means(SHAPED, *r),
     "0.303", "**0.303**)."),
    *((_A02, f"{what} over epochs 5-10, - never trained, 3 pairs",
       lambda *r, view=view: trained_minus_untrained("grpo-a02-d531", "untrained-a02-d531", view), value, phrase)
      for what, view, value, phrase in (
          ("mean d", difficulty_values, "+1.023 [−0.677, +2.723]", "harder by **+1.023"),
          ("in-band fraction", in_band_values, "+0.086 [+0.035, +0.137]", "(**+0.086 [+0.035, +0.137]**)"),
          ("mean |p-bar - alpha|", Setting.tail_mean, "−0.048 [−0.381, +0.285]", "(**−0.048 [−0.381, +0.285]**)"))),
)

CALIBRATED_CLAIMS: tuple[Claim, ...] = (
    *(Claim(f"calibrated solver, preset rewards, a target inside the family's range, {runs[0].rsplit('-s', 1)[0]}: "
            f"{what}", value, view(*runs), ((R, phrase),), f"{SHAPED}/{runs[0].rsplit('-s', 1)[0]}-s*")
      for runs, what, view, value, phrase in _INSIDE_ROWS),
    *(Claim(f"calibrated solver, preset rewards, alpha 0.{a[1]}: grpo - never trained, {what}, 3 pairs", value,
            trained_minus_untrained(f"grpo-a{a}", f"untrained-a{a}", view), ((R, f"| 0.{a[1]} | "),),
            f"{SHAPED}/{{grpo,untrained}}-a{a}-s*")
      for a, what, view, value in (
          ("05", "mean |p-bar - alpha| over epochs 5-10", Setting.tail_mean, "−0.253 [−0.283, −0.224]"),
          ("05", "in-band fraction over epochs 5-10", in_band_values, "+0.406 [+0.371, +0.441]"),
          ("08", "mean |p-bar - alpha| over epochs 5-10", Setting.tail_mean, "−0.403 [−0.585, −0.220]"),
          ("08", "in-band fraction over epochs 5-10", in_band_values, "+0.343 [+0.128, +0.557]"),
          ("02", "mean |p-bar - alpha| over epochs 5-10", Setting.tail_mean, "−0.090 [−0.315, +0.135]"),
          ("02", "in-band fraction over epochs 5-10", in_band_values, "+0.112 [−0.088, +0.312]"))),
    *(Claim(f"calibrated solver, preset rewards, the objectives' table, {objective}: {what}", value, compute,
            ((R, f"| `{objective}` |"),), f"{SHAPED}/{{{objective},untrained}}-a05-s*")
      for objective, row in _OBJECTIVE_ROWS.items()
      for what, value, compute in zip(
          ("|p-bar - alpha| at epoch 10 per seed", "mean |p-bar - alpha| over epochs 5-10 per seed",
           "mean |p-bar - alpha| over epochs 5-10, - never trained, 3 pairs",
           "in-band fraction over epochs 5-10, - never trained, 3 pairs", "valid rate over epochs 5-10 per seed",
           "near-duplicate rate over epochs 5-10 per seed"), row,
          (last_epochs(SHAPED, *seed_runs(f"{objective}-a05")),
           tail_means(SHAPED, *seed_runs(f"{objective}-a05")),
           trained_minus_untrained(f"{objective}-a05", "untrained-a05", Setting.tail_mean),
           trained_minus_untrained(f"{objective}-a05", "untrained-a05", in_band_values),
           objective_row(objective, rate_values("sim/valid_rate")),
           objective_row(objective, rate_values("sim/near_duplicate_rate"))))),
    *(Claim(f"calibrated solver, preset rewards, {run}: {what}", value, compute(SHAPED, run), ((R, phrase),),
            f"{SHAPED}/{run}")
      for run, what, compute, value, phrase in (
          ("untrained-move-a05-d43-s0", "|p-bar - alpha| at epoch 10", last_epochs, "0.282", "ends **0.282** away"),
          ("grpo-move-a05-d43-s0", "|p-bar - alpha| at epoch 10", last_epochs, "0.064", "**0.064** from α, with"),
          ("grpo-move-a05-d43-s0", "mean d at epoch 10", last_d, "5.28", "mean `d` **5.28**"),
          ("untrained-move-a05-d43-s0", "mean d at epoch 10", last_d, "3.80", "never trained **3.80**"),
          ("grpo-move-a05-d43-s0", "mean d over epochs 5-10", d_mean, "4.74", "5–10 **4.74**"),
          ("untrained-move-a05-d43-s0", "mean d over epochs 5-10", d_mean, "3.63", "against **3.63**"),
          ("grpo-move-a05-d43-s0", "in-band fraction over epochs 5-10", in_band, "0.191", "with **0.191**"),
          ("untrained-move-a05-d43-s0", "in-band fraction over epochs 5-10", in_band, "0.012", "against **0.012**"),
          ("grpo-move-a05-d43-s0", "mean |p-bar - alpha| over epochs 5-10", tail_means, "0.201", "(**0.201** and"),
          ("untrained-move-a05-d43-s0", "mean |p-bar - alpha| over epochs 5-10", tail_means, "0.202",
           "and **0.202**)"),
          ("grpo-a05-d6-s0", "mean d at epoch 10", last_d, "5.72", "mean `d` to **5.72**"),
          ("untrained-a05-d6-s0", "mean d at epoch 10", last_d, "3.94", "(never trained **3.94**)"),
          ("grpo-a05-d6-s0", "|p-bar - alpha| at epoch 10", last_epochs, "0.072", "**0.072** from α (never"),
          ("untrained-a05-d6-s0", "|p-bar - alpha| at epoch 10", last_epochs, "0.147", "(never trained **0.147**"),
          ("grpo-a05-d6-s0", "mean |p-bar - alpha| over epochs 5-10", tail_means, "0.148", "5–10 **0.148**"),
          ("untrained-a05-d6-s0", "mean |p-bar - alpha| over epochs 5-10", tail_means, "0.240", "against **0.240**"),
          ("group_rwr-a08-s0", "|p-bar - alpha| at epoch 10", last_epochs, "0.321", "ends **0.321** from α"),
          ("reinforce-a02-s0", "|p-bar - alpha| at epoch 10", last_epochs, "0.237", "**0.237** from α ("),
          ("reinforce-a02-s0", "mean |p-bar - alpha| over epochs 5-10", tail_means, "0.198", "**0.198** over"),
          ("rwr-a02-s0", "|p-bar - alpha| at epoch 10", last_epochs, "0.579", "`rwr` **0.579**"),
          ("rwr-a02-s0", "mean |p-bar - alpha| over epochs 5-10", tail_means, "0.622", "(**0.622**)"))),
    *(Claim(f"calibrated solver, never trained, alpha 0.5: {what} over epochs 5-10 per seed", value,
            objective_row("untrained", rate_values(key)), ((R, phrase),), f"{SHAPED}/untrained-a05-s*")
      for what, key, value, phrase in (
          ("valid rate", "sim/valid_rate", "0.79 / 0.62 / 0.72", "(never trained 0.79"),
          ("near-duplicate rate", "sim/near_duplicate_rate", "0.07 / 0.18 / 0.13", "0.07 / 0.18 / 0.13). Paired"))),
    *(Claim(f"calibrated solver, preset rewards, alpha 0.5: {a} - {b}, mean |p-bar - alpha| over epochs 5-10, 3 pairs",
            value, trained_minus_untrained(f"{a}-a05", f"{b}-a05", Setting.tail_mean), ((R, phrase),),
            f"{SHAPED}/{{{a},{b}}}-a05-s*")
      for a, b, value, phrase in (("rwr", "grpo", "−0.040 [−0.146, +0.067]", "`rwr` − `grpo` **"),
                                  ("group_rwr", "grpo", "+0.021 [−0.071, +0.113]", "`group_rwr` − `grpo` **"),
                                  ("reinforce", "grpo", "+0.006 [−0.122, +0.133]", "`reinforce` − `grpo` **"))),
    *(Claim(f"calibrated solver, preset rewards, alpha 0.2, d0 {d0}: grpo - never trained, {what}, 3 pairs", value,
            trained_minus_untrained(f"grpo-a02{tag}", f"untrained-a02{tag}", view), ((R, phrase),),
            f"{SHAPED}/{{grpo,untrained}}-a02{tag}-s*")
      for d0, tag, what, view, value, phrase in (
          ("4.3", "-d43", "mean |p-bar - alpha| over epochs 5-10", Setting.tail_mean, "−0.053 [−0.331, +0.224]",
           "| 0.2, d₀ = 4.3 | **−0.053"),
          ("4.3", "-d43", "in-band fraction over epochs 5-10", in_band_values, "+0.108 [−0.112, +0.327]",
           "| **+0.108 [−0.112, +0.327]**"),
          ("5", "", "mean difficulty d over epochs 5-10", difficulty_values, "+1.032 [+0.075, +1.989]",
           "digits **+1.032 [+0.075, +1.989]**"),
          ("4.3", "-d43", "mean difficulty d over epochs 5-10", difficulty_values, "+0.750 [−0.550, +2.050]",
           "harder by **+0.750 [−0.550, +2.050]**"))),
    *(Claim(f"calibrated solver, preset rewards, {run}: where the reward peaks", value, optimum(run), ((R, value),),
            f"{SHAPED}/{run}/config.yaml")
      for run, value in (("grpo-a02-s0", "6 (0.119); E[R] 0.59, 0.45 at 5"),
                         ("grpo-a02-d43-s0", "5 (0.198); E[R] 0.73, 0.23 at 4"))),
    *(Claim(f"calibrated solver, preset rewards, {arm}, alpha 0.{tag[1]}{at}: share of tasks at d = {level:g} from "
            "epoch 5 on, per seed", value, level_share(level, *seed_runs(f"{arm}-a{tag}")),
            ((R, f"**{value}**"),), f"{SHAPED}/{arm}-a{tag}-s*/calibration_tasks.jsonl.gz")
      for arm, tag, at, level, value in (
          ("grpo", "05", "", 2.0, "0.72 / 0.59 / 0.66"), ("untrained", "05", "", 2.0, "0.15 / 0.12 / 0.17"),
          ("grpo", "08", "", 2.0, "0.53 / 0.60 / 0.73"), ("untrained", "08", "", 2.0, "0.11 / 0.15 / 0.10"),
          ("grpo", "02", ", d0 5", 6.0, "0.11 / 0.12 / 0.26"), ("untrained", "02", ", d0 5", 6.0, "0.00 / 0.02 / 0.03"),
          ("grpo", "02-d43", ", d0 4.3", 5.0, "0.18 / 0.05 / 0.34"),
          ("untrained", "02-d43", ", d0 4.3", 5.0, "0.10 / 0.02 / 0.04"))),
    *(Claim(f"calibrated solver, preset rewards, grpo, alpha 0.{tag[1]}{at}: share of tasks from epoch 5 on written "
            f"{('easier', 'harder')[side]} than the reward's optimum, per seed", value,
            missed(side, *seed_runs(f"grpo-a{tag}")), ((R, f"**{value}**"),),
            f"{SHAPED}/grpo-a{tag}-s*/calibration_tasks.jsonl.gz")
      for tag, at, side, value in (("05", "", 0, "0.00 / 0.00 / 0.00"), ("05", "", 1, "0.28 / 0.40 / 0.34"),
                                   ("08", "", 0, "0.01 / 0.00 / 0.00"), ("08", "", 1, "0.46 / 0.40 / 0.27"),
                                   ("02-d43", ", d0 4.3", 0, "0.49 / 0.87 / 0.40"),
                                   ("02-d43", ", d0 4.3", 1, "0.33 / 0.08 / 0.25"))),
    *(Claim(f"calibrated solver, preset rewards, {arm}, alpha 0.2, d0 4.3: {what} per seed", value,
            f(SHAPED, *seed_runs(f"{arm}-a02-d43")), ((R, f"**{value}**"),),
            f"{SHAPED}/{arm}-a02-d43-s*")
      for arm, what, f, value in (("grpo", "|p-bar - alpha| at epoch 10", last_epochs, "0.275 / 0.456 / 0.278"),
                                  ("untrained", "mean |p-bar - alpha| over epochs 2-10", per_seed(Setting.later_mean),
                                   "0.300 / 0.364 / 0.327"))),
    *(Claim(f"calibrated solver, preset rewards, grpo, alpha 0.{a[1]}: {what} per seed", value,
            f(SHAPED, *seed_runs(f"grpo-a{a}")), ((R, phrase),), f"{SHAPED}/grpo-a{a}-s*")
      for a, what, f, value, phrase in (
          ("05", "|p-bar - alpha| at epoch 10", last_epochs, "0.099 / 0.085 / 0.191", "epoch 10 **0.099 / 0.085"),
          ("05", "mean |p-bar - alpha| over epochs 5-10", tail_means, "0.126 / 0.161 / 0.142",
           "**0.126 / 0.161 / 0.142**"),
          ("05", "mean in-band fraction over epochs 5-10", in_band, "0.535 / 0.489 / 0.517",
           "**0.535 / 0.489 / 0.517**"),
          ("02", "|p-bar - alpha| at epoch 10", last_epochs, "0.165 / 0.559 / 0.145", "**0.165 / 0.559 / 0.145**"),
          ("08", "|p-bar - alpha| at epoch 10", last_epochs, "0.028 / 0.239 / 0.179", "**0.028 / 0.239 / 0.179**"),
          ("08", "mean |p-bar - alpha| over epochs 5-10", tail_means, "0.190 / 0.207 / 0.133",
           "**0.190 / 0.207 / 0.133**"),
          ("08", "mean in-band fraction over epochs 5-10", in_band, "0.388 / 0.399 / 0.507",
           "**0.388 / 0.399 / 0.507**"),
          ("02", "mean in-band fraction over epochs 5-10", in_band, "0.071 / 0.073 / 0.242",
           "**0.071 / 0.073 / 0.242**"),
      )),
    *(Claim(f"calibrated solver, preset rewards, {run}: |p-bar - alpha| at epoch 10", value,
            last_epochs(SHAPED, run), ((R, phrase),), f"{SHAPED}/{run}")
      for run, value, phrase in (("grpo-move-a05-s0", "0.064", "and ends **0.064"),
                                 ("untrained-move-a05-s0", "0.099", "ends **0.099** from α"))),
    Claim("calibrated solver, preset rewards, grpo at lr 1e-3, alpha 0.2: |p-bar - alpha| at epoch 10", "0.175",
          last_epochs(SHAPED, "grpo-lr1e3-a02-s0"), ((R, "ends **0.175** away"),), f"{SHAPED}/grpo-lr1e3-a02-s0"),
    *(Claim(f"calibrated solver, never trained, {run}: mean in-band fraction over epochs 5-10", value,
            in_band(CAL_OP, run), ((R, phrase),), f"{CAL_OP}/{run}")
      for run, value, phrase in (("untrained-a05-s0", "0.118", "against **0.118**"),
                                 ("untrained-a08-s0", "0.092", "against **0.092**"),
                                 ("untrained-a02-d5-s0", "0.000", "against **0.000**"))),
    *(Claim(f"calibrated solver, grpo, alpha 0.{a[1]}: |p-bar - alpha| at epoch 10 per seed", value,
            last_epochs(CAL, *(f"grpo-a{a}-s{s}" for s in seeds)), ((CAL_README, phrase),), f"{CAL}/grpo-a{a}-s*")
      for a, seeds, value, phrase in (
          ("02", (0, 1), "0.108 / 0.075", "within 0.1 on 6 of its 8"), ("05", (0, 1, 2), "0.026 / 0.212 / 0.049",
                                                                        "within 0.1 on 6 of its 8"),
          ("08", (0, 1, 2), "0.296 / 0.024 / 0.039", "α = 0.8 **0.296"))),
    *(Claim(f"calibrated solver, never trained, alpha 0.{a[1]}: mean |p-bar - alpha| over epochs 2-10", value,
            untrained_distance(CAL, f"untrained-a{a}-s0"), ((CAL_README, phrase),), f"{CAL}/untrained-a{a}-s0")
      for a, value, phrase in (("02", "0.280", "The never-trained simulator stays"),
                               ("05", "0.245", "but only **0.245"), ("08", "0.542", "0.2) and **0.542"))),
    Claim("calibrated solver, grpo, alpha 0.2, d0 + 0.2 an epoch: |p-bar - alpha| at epoch 10", "0.128",
          last_epochs(CAL, "grpo-a02-move-s0"), ((CAL_README, "The moving target is not followed"),),
          f"{CAL}/grpo-a02-move-s0"),
    *(Claim(f"calibrated solver, {run}: bare numbers among the rated tasks of epochs 8-10", value, bare_numbers(run),
            ((CAL_README, phrase),), f"{CAL}/{run}/calibration_tasks.jsonl.gz")
      for run, value, phrase in (("grpo-a05-s0", "34 of 87", "In epochs 8–10, **34 of 87"),
                                 ("grpo-lr2e3-a08-s0", "82 of 101", "**82 of 101"),
                                 ("untrained-a05-s0", "39 of 68", "(**39 of 68"))),
    Claim("calibrated solver, never trained, alpha 0.5: sd of p-bar over epochs 2-10", "0.072",
          lambda root: f"{statistics.stdev(untrained_p_bars(root)):.3f}",
          ((CAL_README, "deviation of 0.072"),), f"{CAL}/untrained-a05-s0"),
    *(Claim(f"calibrated solver, digits with an operation, never trained, alpha 0.{a[1]}{at}: mean |p-bar - alpha| "
            "over epochs 2-10", value, untrained_distance(CAL_OP, run), ((OP_README, phrase),), f"{CAL_OP}/{run}")
      for a, at, run, value, phrase in (("05", "", "untrained-a05-s0", "0.392", "stays **0.392"),
                                        ("08", "", "untrained-a08-s0", "0.567", "against **0.567"),
                                        ("02", ", d0 5", "untrained-a02-d5-s0", "0.504", "stays **0.504"))),
    *(Claim(f"calibrated solver, digits with an operation, grpo, alpha 0.{a[1]}: |p-bar - alpha| {what} per seed",
            value, f(CAL_OP, *seed_runs(f"grpo-a{a}")), ((OP_README, phrase),),
            f"{CAL_OP}/grpo-a{a}-s*")
      for a, what, f, value, phrase in (
          ("05", "at epoch 10", last_epochs, "0.104 / 0.027 / 0.133", "ends at **0.104 / 0.027 / 0.133"),
          ("05", "over epochs 5-10", tail_means, "0.062 / 0.122 / 0.148", "**0.062 / 0.122 / 0.148** on average"),
          ("08", "at epoch 10", last_epochs, "0.054 / 0.003 / 0.005", "α = 0.8: **0.054"),
          ("08", "over epochs 5-10", tail_means, "0.190 / 0.041 / 0.184", "**0.190 / 0.041 / 0.184**"))),
    Claim("calibrated solver, digits with an operation, never trained, alpha 0.2: |p-bar - alpha| at epoch 1",
          "0.129", lambda root: f"{calibrated(root, CAL_OP, 'untrained-a02-s0').first()[0]:.3f}",
          ((OP_README, "now fail, so it starts only **"),), f"{CAL_OP}/untrained-a02-s0"),
    Claim("calibrated solver, R_env(0) rewarded, grpo, alpha 0.2, d0 5: |p-bar - alpha| at epoch 10 per seed",
          "0.114 / 0.050", last_epochs(CAL_OP, "grpo-a02-d5-s0", "grpo-a02-d5-s1"),
          ((OP_README, "`grpo` at d₀ = 5 ends **"),), f"{CAL_OP}/grpo-a02-d5-s*"),
    Claim("calibrated solver, R_env(0) rewarded, grpo, alpha 0.2, d0 5: unrated share of epoch 10's tasks per seed",
          "0.545 / 0.571", unrated_last(CAL_OP, "grpo-a02-d5-s0", "grpo-a02-d5-s1"),
          ((OP_README, "are **0.545 / 0.571**"),), f"{CAL_OP}/grpo-a02-d5-s*"),
    Claim("calibrated solver: right answers among the tasks in the seeds' form, every shaped run",
          "2,069 of 37,925 (5%)", right_answers(SHAPED), ((R, "carry the right answer"),),
          f"{SHAPED}/*/calibration_tasks.jsonl.gz"),
    *(Claim(f"calibrated solver, {folder}/{run}: wall time beside other jobs", value, calibration_wall(folder, run),
            ((B, "a 10-epoch calibrated-solver run"),), f"{folder}/{run}/summary.json")
      for folder, run, value in ((CAL, "grpo-a05-s0", "2,340 s"), (CAL, "untrained-a05-s0", "659 s"),
                                 (SHAPED, "grpo-a05-s0", "840 s"), (CAL_OP, "untrained-a02-d5-s0", "253 s"))),
)
