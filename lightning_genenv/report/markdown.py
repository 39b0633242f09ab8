"""``report.md``: the runs, a first → last summary per group and per run, data efficiency and KL,
per-family tables, the missing data and the plots, as markdown text.

"first" and "last" are each run's first and last epoch at which the key was logged; with several
seeds a cell is ``mean ± sd`` over seeds, and a key that no run logged reads "not logged".

Deliberately left out: re-computing the in-band fraction with a different ``band=`` (the logged
fraction uses each run's own α and band; ``alpha=``/``band=`` change the "moved toward α" check only),
``time/*`` keys, and any other format than markdown.
"""

from __future__ import annotations

from pathlib import Path

from lightning_genenv.report.groups import Group, families
from lightning_genenv.report.runs import Run
from lightning_genenv.report.stats import NOT_LOGGED, first_last, fmt, fmt_spread, moved_toward, paired_difference

# The final values compared between groups, paired by seed (the last logged epoch of each run): the whole
# held-out set's (val_full/*, step 0 and the end) where a run logged it, else the per-epoch curve's (older runs).
PAIRED_KEYS = [(("val_full/reward_mean", "val/reward_mean"), "val reward (sampled)"),
               (("val_full/score", "val/score"), "val score")]

# (tag, title) of the per-epoch keys in the summary tables, in order.
SUMMARY_KEYS = [
    ("curriculum/p_hat_mean", "p̂ mean"),
    ("curriculum/in_band_fraction", "in-band fraction"),
    ("val/score", "val score"),
    ("val/reward_mean", "val reward (sampled)"),
    ("rollout/response_length", "response length"),
    ("sim/valid_rate", "valid rate"),
]


def _first_last_cell(runs: list[Run], tag: str) -> str:
    pairs = [fl for fl in (first_last(r.series(tag)) for r in runs) if fl]
    if not pairs:
        return NOT_LOGGED
    first = fmt_spread([p[0][1] for p in pairs])
    last = fmt_spread([p[1][1] for p in pairs])
    if len(runs) == 1:
        (e0, _), (e1, _) = pairs[0]
        return f"{first} → {last} (epochs {e0 + 1}→{e1 + 1})"  # counted as the console counts: 0 before training
    missing = f" ({len(pairs)}/{len(runs)} runs)" if len(pairs) < len(runs) else ""
    return f"{first} → {last}{missing}"


def _toward_cell(runs: list[Run], alpha: float) -> str:
    verdicts = [moved_toward(r.series("curriculum/p_hat_mean"), alpha) for r in runs]
    known = [v for v in verdicts if v is not None]
    if not known:
        logged = any(r.series("curriculum/p_hat_mean") for r in runs)
        return "n/a (one epoch logged)" if logged else f"n/a ({NOT_LOGGED})"
    yes = sum(known)
    if len(runs) == 1:
        return "yes" if yes else "no"
    word = "yes" if yes == len(known) else "no" if yes == 0 else "mixed"
    return f"{word} ({yes}/{len(known)} seeds)"


def _last(series: dict) -> float | None:
    return series[max(series)] if series else None


def _final(run: Run, tags: tuple[str, ...]) -> float | None:
    """The last value of the first of ``tags`` that ``run`` logged."""
    return next((_last(run.series(t)) for t in tags if run.series(t)), None)


def _last_step(pairs: list[tuple[int, float]]) -> float | None:
    return pairs[-1][1] if pairs else None


def _paired_section(groups: list[Group]) -> list[str]:
    """Each group against the first: the mean paired difference of the final value over the seeds both
    ran, with its 95% t interval (an interval that excludes 0 is a difference at this sample size)."""
    if len(groups) < 2:
        return []
    ref = groups[0]
    lines = ["## Paired differences (final value, paired by seed)", "",
             f"Each group minus **{ref.label}**, over the seeds both ran: mean difference [95% t interval] "
             "(n pairs).", "", "| group | " + " | ".join(t for _, t in PAIRED_KEYS) + " |",
             "|---|" + "---|" * len(PAIRED_KEYS)]
    for g in groups[1:]:
        cells = []
        for tags, _ in PAIRED_KEYS:
            theirs = {r.seed: _final(r, tags) for r in g.runs}
            ours = {r.seed: _final(r, tags) for r in ref.runs}
            seeds = [s for s in theirs if s in ours and theirs[s] is not None and ours[s] is not None]
            d = paired_difference([theirs[s] for s in seeds], [ours[s] for s in seeds])
            cells.append(NOT_LOGGED if d is None and not seeds else
                         f"{fmt(theirs[seeds[0]] - ours[seeds[0]])} (1 pair, no interval)" if d is None else
                         f"{fmt(d[0])} [{fmt(d[1])}, {fmt(d[2])}] ({d[3]})")
        lines.append(f"| {g.label} | " + " | ".join(cells) + " |")
    return lines + [""]


def write_markdown(groups: list[Group], runs: list[Run], out: Path, plots: list[Path]) -> Path:
    lines = ["# GenEnv run report", ""]
    lines += ["Scalars are read from each run's TensorBoard event files (`tb/agent`, `tb/simulator`); "
              "per-family p̂ from `pools/d_env.jsonl`. \"first → last\" are each run's first and last "
              "logged epoch, counted from 1 as the console counts them (epoch 0: before training); with several "
              "seeds a cell is `mean ± sd` over seeds (sample standard deviation). "
              "\"p̂ toward α\" is `|p̂_last - α| < |p̂_first - α|`.", ""]

    lines += ["## Runs", "", "| run | group | seed | epochs | agent steps | wall time (s) | path |",
              "|---|---|---|---|---|---|---|"]
    for g in groups:
        for r in g.runs:
            s = r.summary or {}
            logged = sorted({e for series in r.epoch_scalars.values() for e in series})
            epochs = s.get("epochs", len(logged) if logged else NOT_LOGGED)
            lines.append(f"| {r.label} | {g.label} | {r.seed} | {epochs} | {s.get('agent_steps', NOT_LOGGED)} "
                         f"| {s.get('wall_time_s', NOT_LOGGED)} | `{r.path}` |")
    lines.append("")

    header = "| group | seeds | " + " | ".join(f"{title} first → last" for _, title in SUMMARY_KEYS) + " | p̂ toward α |"
    lines += ["## Summary per group", "", header, "|" + "---|" * (len(SUMMARY_KEYS) + 3)]
    for g in groups:
        cells = [_first_last_cell(g.runs, tag) for tag, _ in SUMMARY_KEYS]
        lines.append(f"| {g.label} | {g.seeds} | " + " | ".join(cells) + f" | {_toward_cell(g.runs, g.alpha)} |")
    lines.append("")
    bands = ", ".join(f"{g.label}: α = {g.alpha:g}, band = {g.band:g}" for g in groups)
    lines += [f"α and band used for the shading and the \"toward α\" check: {bands}. The logged in-band "
              "fraction uses each run's own config.", ""]

    lines += ["## Per run", "", "| run | group | " + " | ".join(f"{t} first → last" for _, t in SUMMARY_KEYS)
              + " | p̂ toward α |", "|" + "---|" * (len(SUMMARY_KEYS) + 3)]
    for g in groups:
        for r in g.runs:
            cells = []
            for tag, _ in SUMMARY_KEYS:
                fl = first_last(r.series(tag))
                cells.append(NOT_LOGGED if fl is None else f"{fmt(fl[0][1])} → {fmt(fl[1][1])}")
            lines.append(f"| {r.label} | {g.label} | " + " | ".join(cells) + f" | {_toward_cell([r], g.alpha)} |")
    lines.append("")

    lines += _paired_section(groups)

    lines += ["## Data efficiency and KL (last logged value)", "",
              "| group | synthetic tasks used | best val score | agent KL (last step) | simulator KL to initial "
              "(last epoch) | simulator KL (last RWR step) |", "|---|---|---|---|---|---|"]
    for g in groups:
        best = [max(r.series("val/score").values()) for r in g.runs if r.series("val/score")]
        cells = [fmt_spread([v for v in (_last(r.series("curriculum/synthetic_tasks_used")) for r in g.runs)
                            if v is not None], count=True),
                 fmt_spread(best),
                 fmt_spread([_last_step(r.step_scalars.get("agent/kl", [])) for r in g.runs]),
                 fmt_spread([_last(r.series("sim/kl_to_initial")) for r in g.runs]),
                 fmt_spread([_last_step(r.sim_scalars.get("sim/kl", [])) for r in g.runs])]
        lines.append(f"| {g.label} | " + " | ".join(cells) + " |")
    lines.append("")

    lines += ["## Per task family", "",
              "Valid generated tasks per family (first → last epoch of `pools/d_env.jsonl`; a family "
              "that drops to 0 is one the simulator abandons), mean p̂ of that family's attempted "
              "generated tasks, and the validation score on that family.", ""]
    for g in groups:
        lines += [f"### {g.label}", ""]
        names = families(g)
        if not names:
            lines += [f"Per-family data {NOT_LOGGED} (no `pools/d_env.jsonl` tasks and no `val/score/<family>`).", ""]
            continue
        lines += ["| family | generated tasks first → last | p̂ first → last | val score first → last |",
                  "|---|---|---|---|"]
        for fam in names:
            counts_first, counts_last = [], []
            for r in g.runs:
                if r.env_epochs:
                    c = r.family_tasks.get(fam, {})
                    counts_first.append(c.get(r.env_epochs[0], 0))
                    counts_last.append(c.get(r.env_epochs[-1], 0))
            counts = (f"{fmt_spread(counts_first, True)} → {fmt_spread(counts_last, True)}"
                      if counts_first else NOT_LOGGED)
            p_fl = [fl for fl in (first_last(r.family_p_hat.get(fam, {})) for r in g.runs) if fl]
            p_cell = (f"{fmt_spread([p[0][1] for p in p_fl])} → {fmt_spread([p[1][1] for p in p_fl])}"
                      if p_fl else NOT_LOGGED)
            lines.append(f"| {fam} | {counts} | {p_cell} | {_first_last_cell(g.runs, f'val/score/{fam}')} |")
        lines.append("")

    notes = [(r, n) for g in groups for r in g.runs for n in r.notes]
    if notes:
        lines += ["## Missing data", ""] + [f"- {r.label}: {n}" for r, n in notes] + [""]

    lines += ["## Plots", ""]
    for p in plots:
        lines += [f"![{p.stem}]({p.name})", ""]
    path = out / "report.md"
    path.write_text("\n".join(lines))
    return path
