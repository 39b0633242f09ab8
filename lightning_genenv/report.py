"""Compare GenEnv runs as pictures and a markdown summary.

``python -m lightning_genenv.report runs=[<run_dir>,...] [out=DIR] [alpha=A] [band=B]`` (``--help``: the keys)

A run directory is what ``python train.py run_dir=...`` writes; it is recognised by its
``config.yaml``. The report reads the same numbers a user sees in TensorBoard: the scalars of
``tb/agent`` (per-epoch curriculum and rollout keys, ``val/score``, per-step ``agent/kl``) and of
``tb/simulator`` (per-step ``sim/kl``), read with TensorBoard's ``EventAccumulator``; and it reads
``pools/d_env.jsonl`` for ``p̂`` per task family. Each scalar is assigned to the epoch of the
``epoch`` scalar written with it (same step; the nearest wall time breaks ties at the step where
one epoch ends and the next begins).

Runs whose configs differ only by seed (``seed``, ``data.seed``; ``run_dir`` and cosmetic keys are
ignored too) form a group, labelled by ``curriculum.name``; when two groups share that name, the
label adds the (at most two) keys that tell them apart, or else the first run's directory name.
Runs are labelled by their directory name. A group's curve is the mean over its seeds, shaded by
± one sample standard deviation where two or more seeds logged that point; the markdown gives
``mean ± sd`` likewise.
"first" and "last" are each run's first and last epoch at which the key was logged.

Written to ``out=`` (default ``<run_dir>/report`` for one run, else ``./report``):
``p_hat.png`` (``p̂`` mean per epoch, the ``α ± band`` band shaded), ``in_band.png``,
``response_length.png``, ``val_score.png``, ``val_reward.png`` (sampled), ``data_efficiency.png`` (val score against
``curriculum/synthetic_tasks_used``, one line per run), ``valid_rate.png``, ``kl.png`` (agent KL to
the reference per agent step; simulator KL to its initial weights per epoch), ``kl_simulator.png``
(``sim/kl`` per simulator step), ``family_<group>.png`` (``p̂`` and val score per task family) and
``report.md``. Every PNG is written even when nothing was logged for it (it then says so), and the
markdown says "not logged" for each missing key or file; a path that is not a run directory is a
one-line error.

Deliberately left out: significance tests or confidence intervals beyond the seed spread, the
``curriculum/p_hat`` histograms and the text samples in TensorBoard, timing keys (``time/*``),
the simulator's invalid-generation reasons, re-computing the in-band fraction with a different
``band=`` (the logged fraction uses each run's own α and band; ``alpha=``/``band=`` change
the shading and the "moved toward α" check only), averaging the data-efficiency curve across seeds
(its x differs per seed), and any interactive or HTML output.
"""

from __future__ import annotations

import bisect
import json
import math
import re
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from omegaconf import MISSING

from lightning_genenv.config import ConfigError, load_yaml_mapping, parse_cli

# Config keys that do not make two runs different experiments.
SEED_KEYS = ("seed", "data.seed")
IGNORED_KEYS = (*SEED_KEYS, "run_dir", "model.cache_dir", "trainer.enable_progress_bar",
                "logger.num_text_samples")

# (tag, title) of the per-epoch keys in the summary tables, in order.
SUMMARY_KEYS = [
    ("curriculum/p_hat_mean", "p̂ mean"),
    ("curriculum/in_band_fraction", "in-band fraction"),
    ("val/score", "val score"),
    ("val/reward_mean", "val reward (sampled)"),
    ("rollout/response_length", "response length"),
    ("sim/valid_rate", "valid rate"),
]
NOT_LOGGED = "not logged"
DEFAULT_BAND = 0.1


class ReportError(Exception):
    """A problem with the inputs, reported as one line."""


# --------------------------------------------------------------------------------------- reading
@dataclass
class Run:
    path: Path
    config: dict
    label: str = ""
    epoch_scalars: dict[str, dict[int, float]] = field(default_factory=dict)  # tag -> epoch -> value
    step_scalars: dict[str, list[tuple[int, float]]] = field(default_factory=dict)  # tb/agent, raw
    sim_scalars: dict[str, list[tuple[int, float]]] = field(default_factory=dict)  # tb/simulator
    family_p_hat: dict[str, dict[int, float]] = field(default_factory=dict)  # family -> epoch -> mean
    family_tasks: dict[str, dict[int, int]] = field(default_factory=dict)  # family -> epoch -> count
    env_epochs: list[int] = field(default_factory=list)  # epochs present in d_env.jsonl
    summary: dict | None = None
    notes: list[str] = field(default_factory=list)  # what is missing, for the markdown

    @property
    def seed(self):
        return self.config.get("seed")

    def curriculum(self, key: str, default=None):
        return (self.config.get("curriculum") or {}).get(key, default)

    def series(self, tag: str) -> dict[int, float]:
        return self.epoch_scalars.get(tag, {})


def check_run_dir(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_dir() or not (path / "config.yaml").is_file():
        what = "does not exist" if not path.exists() else "no config.yaml"
        raise ReportError(f"{path}: not a run directory ({what}; expected the run_dir of train.py)")
    return path


def load_run(path: str | Path) -> Run:
    path = check_run_dir(path)
    config_file = path / "config.yaml"
    try:
        config = load_yaml_mapping(config_file)
    except ConfigError as e:
        raise ReportError(str(e)) from None
    run = Run(path=path, config=config)
    _read_agent_events(run)
    _read_simulator_events(run)
    _read_env_pool(run)
    summary = path / "summary.json"
    if summary.is_file():
        try:
            run.summary = json.loads(summary.read_text())
        except json.JSONDecodeError:
            run.notes.append("summary.json is not valid JSON")
    else:
        run.notes.append("summary.json missing (run unfinished?)")
    return run


def _accumulator(directory: Path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(directory), size_guidance={
        "scalars": 0, "histograms": 1, "tensors": 1, "images": 1, "audio": 1, "compressedHistograms": 1})
    acc.Reload()
    return acc


def _read_agent_events(run: Run) -> None:
    directory = run.path / "tb" / "agent"
    if not directory.is_dir():
        run.notes.append("tb/agent missing: no scalars")
        return
    acc = _accumulator(directory)
    tags = acc.Tags().get("scalars", [])
    if not tags:
        run.notes.append("tb/agent has no scalars")
        return
    events = {tag: acc.Scalars(tag) for tag in tags}
    run.step_scalars = {tag: [(e.step, e.value) for e in evs] for tag, evs in events.items()}
    epoch_of = _epoch_mapper(events.get("epoch", []))
    for tag, evs in events.items():
        if tag == "epoch":
            continue
        by_epoch: dict[int, float] = {}
        for i, e in enumerate(evs):
            epoch = epoch_of(e.step, e.wall_time)
            by_epoch[i if epoch is None else epoch] = e.value  # the last value of an epoch wins
        run.epoch_scalars[tag] = by_epoch
    if "epoch" not in events:
        run.notes.append("tb/agent has no `epoch` scalar: epochs taken as the order of logging")


def _epoch_mapper(epoch_events):
    """``(step, wall_time) -> epoch`` from the ``epoch`` scalar logged alongside every metric."""
    by_step: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for e in epoch_events:
        by_step[e.step].append((e.wall_time, int(round(e.value))))
    steps = sorted(by_step)

    def epoch_of(step: int, wall_time: float) -> int | None:
        candidates = by_step.get(step)
        if not candidates:  # no epoch logged at this step: the last one logged before it
            i = bisect.bisect_right(steps, step) - 1
            if i < 0:
                return None
            candidates = by_step[steps[i]]
            return max(c[1] for c in candidates)
        if len({c[1] for c in candidates}) == 1:
            return candidates[0][1]
        return min(candidates, key=lambda c: abs(c[0] - wall_time))[1]

    return epoch_of


def _read_simulator_events(run: Run) -> None:
    directory = run.path / "tb" / "simulator"
    if not directory.is_dir():
        trained = run.curriculum("train_simulator", True)
        run.notes.append("tb/simulator missing" + ("" if trained else " (simulator not trained in this run)"))
        return
    acc = _accumulator(directory)
    run.sim_scalars = {tag: [(e.step, e.value) for e in acc.Scalars(tag)]
                       for tag in acc.Tags().get("scalars", [])}


def _read_env_pool(run: Run) -> None:
    pool = run.path / "pools" / "d_env.jsonl"
    if not pool.is_file():
        run.notes.append("pools/d_env.jsonl missing: no per-family p̂")
        return
    p_hats: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    counts: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    epochs, bad = set(), 0
    with pool.open() as f:
        for line in f:
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                epoch = int(r["epoch"])
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                bad += 1
                continue
            epochs.add(epoch)
            task = r.get("task")
            if not isinstance(task, dict) or not task.get("family"):
                continue
            family = str(task["family"])
            counts[family][epoch] += 1
            if r.get("p_hat") is not None:
                p_hats[family][epoch].append(float(r["p_hat"]))
    if bad:
        run.notes.append(f"pools/d_env.jsonl: {bad} unreadable line(s) skipped")
    run.env_epochs = sorted(epochs)
    run.family_tasks = {f: dict(c) for f, c in counts.items()}
    run.family_p_hat = {f: {e: sum(v) / len(v) for e, v in by_e.items()} for f, by_e in p_hats.items()}


# -------------------------------------------------------------------------------------- grouping
@dataclass
class Group:
    label: str
    runs: list[Run]
    alpha: float
    band: float

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "_", self.label).strip("_") or "group"

    @property
    def seeds(self) -> str:
        return ", ".join(str(r.seed) for r in self.runs)


def _flatten(d, prefix="") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def group_runs(runs: list[Run], alpha: float | None = None, band: float | None = None) -> list[Group]:
    """Runs whose configs differ only by the seed keys, in the order they were given."""
    keyed: dict[str, list[Run]] = {}
    flats: dict[str, dict] = {}
    for run in runs:
        flat = {k: v for k, v in _flatten(run.config).items() if k not in IGNORED_KEYS}
        key = json.dumps(flat, sort_keys=True, default=str)
        keyed.setdefault(key, []).append(run)
        flats[key] = flat
    names = {key: str((members[0].config.get("curriculum") or {}).get("name", "run")) for key, members in keyed.items()}
    labels = {}
    for key, name in names.items():
        rivals = [k for k, n in names.items() if n == name]
        if len(rivals) == 1:
            labels[key] = name
            continue
        differing = sorted({k for r in rivals for k in set(flats[r]) | set(flats[key])
                            if any(flats[r].get(k) != flats[key].get(k) for r in rivals)})
        if len(differing) <= 2:
            labels[key] = f"{name} ({', '.join(f'{k}={flats[key].get(k)}' for k in differing)})"
        else:  # too many differences to spell out: the first run's directory tells them apart
            labels[key] = f"{name} [{keyed[key][0].label or keyed[key][0].path.name}]"
    groups, used = [], set()
    for key, members in keyed.items():
        label = labels[key]
        while label in used:  # cannot happen with distinct configs, but labels must stay unique
            label += "'"
        used.add(label)
        first = members[0]
        a = alpha if alpha is not None else float(first.curriculum("alpha", 0.5))
        b = band if band is not None else first.curriculum("band")
        groups.append(Group(label, members, a, float(b) if b is not None else DEFAULT_BAND))
    return groups


def _label_runs(runs: list[Run]) -> None:
    """Each run is labelled by its directory name, with parents added until the labels are unique."""
    depth = 1
    while True:
        labels = ["/".join(r.path.resolve().parts[-depth:]) for r in runs]
        if len(set(labels)) == len(labels) or depth > 8:
            break
        depth += 1
    for run, label in zip(runs, labels):
        run.label = label


# ------------------------------------------------------------------------------------ statistics
def aggregate(series: list[dict]) -> tuple[list, list[float], list[float | None]]:
    """Mean and sample sd (None with one value) at each x that any series has."""
    xs = sorted({x for s in series for x in s})
    means, sds = [], []
    for x in xs:
        values = [s[x] for s in series if x in s and _finite(s[x])]
        means.append(sum(values) / len(values) if values else math.nan)
        sds.append(statistics.stdev(values) if len(values) > 1 else None)
    return xs, means, sds


def _finite(v) -> bool:
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v)


def first_last(series: dict[int, float]) -> tuple[tuple[int, float], tuple[int, float]] | None:
    if not series:
        return None
    epochs = sorted(series)
    return (epochs[0], series[epochs[0]]), (epochs[-1], series[epochs[-1]])


def moved_toward(series: dict[int, float], alpha: float) -> bool | None:
    fl = first_last(series)
    if fl is None or fl[0][0] == fl[1][0]:
        return None
    return abs(fl[1][1] - alpha) < abs(fl[0][1] - alpha)


def fmt(v, count: bool = False) -> str:
    """Three decimals (none from 1000 up, three significant digits below 0.001, e.g. a small KL);
    ``count``: a whole number, one decimal for a mean."""
    if not _finite(v):
        return NOT_LOGGED if v is None else str(v)
    if count:
        return f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"
    if v != 0 and abs(v) < 1e-3:
        return f"{v:.2e}"
    return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.3f}"


def fmt_spread(values: list[float], count: bool = False) -> str:
    values = [v for v in values if _finite(v)]
    if not values:
        return NOT_LOGGED
    mean = sum(values) / len(values)
    if len(values) == 1:
        return fmt(mean, count)
    return f"{fmt(mean, count)} ± {fmt(statistics.stdev(values))}"


# ----------------------------------------------------------------------------------------- plots
COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
          "tab:gray", "tab:olive", "tab:cyan"]
DPI = 80
FIGSIZE = (6, 4)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _plot_groups(ax, groups: list[Group], series_of, marker="o") -> int:
    """One mean line per group with its ± sd shading; returns how many groups had data."""
    drawn = 0
    for i, g in enumerate(groups):
        series = [s for s in (series_of(r) for r in g.runs) if s]
        if not series:
            continue
        xs, means, sds = aggregate(series)
        color = COLORS[i % len(COLORS)]
        n = len(series)
        ax.plot(xs, means, marker=marker, markersize=3, color=color,
                label=g.label + (f" (n={n}, ± sd)" if n > 1 else ""))
        if any(sd is not None for sd in sds):
            lo = [m - (sd or 0.0) for m, sd in zip(means, sds)]
            hi = [m + (sd or 0.0) for m, sd in zip(means, sds)]
            ax.fill_between(xs, lo, hi, color=color, alpha=0.2, linewidth=0)
        drawn += 1
    return drawn


def _finish(ax, drawn: int, what: str, xlabel: str, ylabel: str, title: str) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if xlabel.endswith(("epoch", "step", "(cumulative)")):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(title, fontsize=10)
    if xlabel.endswith(("epoch", "step", "(cumulative)")) and drawn:
        lo, hi = ax.get_xlim()
        if hi - lo < 2:  # a single epoch: keep a readable integer axis
            mid = (lo + hi) / 2
            ax.set_xlim(mid - 1, mid + 1)
    if drawn:
        ax.legend(fontsize=7, framealpha=0.6)
        ax.grid(alpha=0.3)
    else:
        ax.text(0.5, 0.5, f"{what}: not logged in any run", ha="center", va="center", transform=ax.transAxes)


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    _pyplot().close(fig)
    return path


def _shade_bands(ax, groups: list[Group]) -> None:
    for alpha, band in sorted({(g.alpha, g.band) for g in groups}):
        ax.axhspan(alpha - band, alpha + band, color="gold", alpha=0.25, linewidth=0,
                   label=f"α ± band ({alpha:g} ± {band:g})")
        ax.axhline(alpha, color="goldenrod", linestyle="--", linewidth=1)


def _epoch_plot(out: Path, name: str, groups: list[Group], tag: str, ylabel: str, title: str,
                band=False, ylim=None) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=FIGSIZE)
    if band:
        _shade_bands(ax, groups)
    drawn = _plot_groups(ax, groups, lambda r: r.series(tag))
    if ylim:
        ax.set_ylim(*ylim)
    _finish(ax, drawn, tag, "epoch", ylabel, title)
    return _save(fig, out / name)


def plot_all(groups: list[Group], out: Path) -> list[Path]:
    plt = _pyplot()
    paths = [
        _epoch_plot(out, "p_hat.png", groups, "curriculum/p_hat_mean", "mean p̂ of generated tasks",
                    "Agent success rate p̂ on generated tasks", band=True, ylim=(-0.05, 1.05)),
        _epoch_plot(out, "in_band.png", groups, "curriculum/in_band_fraction", "fraction in band",
                    "Generated tasks with |p̂ - α| ≤ band", ylim=(-0.05, 1.05)),
        _epoch_plot(out, "response_length.png", groups, "rollout/response_length", "tokens",
                    "Agent response length (mean over rollouts)"),
        _epoch_plot(out, "val_score.png", groups, "val/score", "validation score",
                    "Greedy validation score (held-out tasks; epoch -1: before training)"),
        _epoch_plot(out, "val_reward.png", groups, "val/reward_mean", "mean reward",
                    "Sampled validation reward (held-out tasks; epoch -1: before training)"),
        _epoch_plot(out, "valid_rate.png", groups, "sim/valid_rate", "valid fraction",
                    "Simulator generations that parse and validate", ylim=(-0.05, 1.05)),
    ]

    # Data efficiency: one line per run (the x differs between seeds).
    fig, ax = plt.subplots(figsize=FIGSIZE)
    drawn = 0
    for i, g in enumerate(groups):
        for j, run in enumerate(g.runs):
            used, val = run.series("curriculum/synthetic_tasks_used"), run.series("val/score")
            epochs = sorted(set(used) & set(val))
            if not epochs:
                continue
            ax.plot([used[e] for e in epochs], [val[e] for e in epochs], marker="o", markersize=3,
                    color=COLORS[i % len(COLORS)], linestyle=["-", "--", ":", "-."][j % 4],
                    label=f"{g.label} seed {run.seed}")
            drawn += 1
    _finish(ax, drawn, "val/score and curriculum/synthetic_tasks_used", "synthetic tasks used (cumulative)",
            "validation score", "Data efficiency: validation score against synthetic tasks used")
    paths.append(_save(fig, out / "data_efficiency.png"))

    # KL of both policies.
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 5))
    drawn = _plot_groups(top, groups, lambda r: dict(r.step_scalars.get("agent/kl", [])), marker="")
    _finish(top, drawn, "agent/kl", "agent step", "KL", "Agent: KL to the reference policy (per step)")
    drawn = _plot_groups(bottom, groups, lambda r: r.series("sim/kl_to_initial"))
    _finish(bottom, drawn, "sim/kl_to_initial", "epoch", "KL",
            "Simulator: KL to its initial weights (after each epoch's update)")
    paths.append(_save(fig, out / "kl.png"))

    fig, ax = plt.subplots(figsize=FIGSIZE)
    drawn = _plot_groups(ax, groups, lambda r: dict(r.sim_scalars.get("sim/kl", [])), marker="")
    _finish(ax, drawn, "sim/kl (tb/simulator)", "simulator step", "KL",
            "Simulator: KL to its initial weights (per RWR step)")
    paths.append(_save(fig, out / "kl_simulator.png"))

    for g in groups:
        paths.append(_family_plot(out, g))
    return paths


def _families(g: Group) -> list[str]:
    fams = set()
    for r in g.runs:
        fams |= set(r.family_p_hat) | set(r.family_tasks)
        fams |= {t.split("/", 2)[2] for t in r.epoch_scalars if t.startswith("val/score/")}
    return sorted(fams)


def _family_plot(out: Path, g: Group) -> Path:
    plt = _pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 5), sharex=True)
    top.axhspan(g.alpha - g.band, g.alpha + g.band, color="gold", alpha=0.25, linewidth=0)
    drawn_top = drawn_bottom = 0
    for i, fam in enumerate(_families(g)):
        color = COLORS[i % len(COLORS)]
        series = [r.family_p_hat[fam] for r in g.runs if r.family_p_hat.get(fam)]
        if series:
            xs, means, _ = aggregate(series)
            top.plot(xs, means, marker="o", markersize=3, color=color, label=fam)
            drawn_top += 1
        series = [r.series(f"val/score/{fam}") for r in g.runs if r.series(f"val/score/{fam}")]
        if series:
            xs, means, _ = aggregate(series)
            bottom.plot(xs, means, marker="s", markersize=3, color=color, label=fam)
            drawn_bottom += 1
    seeds = f" (mean of {len(g.runs)} seeds)" if len(g.runs) > 1 else ""
    top.set_ylim(-0.05, 1.05)
    _finish(top, drawn_top, "p̂ per family (pools/d_env.jsonl)", "", "p̂", f"{g.label}: p̂ per task family{seeds}")
    _finish(bottom, drawn_bottom, "val/score/<family>", "epoch", "val score", "Validation score per family")
    return _save(fig, out / f"family_{g.slug}.png")


# -------------------------------------------------------------------------------------- markdown
def _first_last_cell(runs: list[Run], tag: str) -> str:
    pairs = [fl for fl in (first_last(r.series(tag)) for r in runs) if fl]
    if not pairs:
        return NOT_LOGGED
    first = fmt_spread([p[0][1] for p in pairs])
    last = fmt_spread([p[1][1] for p in pairs])
    if len(runs) == 1:
        (e0, _), (e1, _) = pairs[0]
        return f"{first} → {last} (epochs {e0}→{e1})"
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


def _last_step(pairs: list[tuple[int, float]]) -> float | None:
    return pairs[-1][1] if pairs else None


def write_markdown(groups: list[Group], runs: list[Run], out: Path, plots: list[Path]) -> Path:
    lines = ["# GenEnv run report", ""]
    lines += ["Scalars are read from each run's TensorBoard event files (`tb/agent`, `tb/simulator`); "
              "per-family p̂ from `pools/d_env.jsonl`. \"first → last\" are each run's first and last "
              "logged epoch; with several seeds a cell is `mean ± sd` over seeds (sample standard "
              "deviation). \"p̂ toward α\" is `|p̂_last - α| < |p̂_first - α|`.", ""]

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
        families = _families(g)
        if not families:
            lines += [f"Per-family data {NOT_LOGGED} (no `pools/d_env.jsonl` tasks and no `val/score/<family>`).", ""]
            continue
        lines += ["| family | generated tasks first → last | p̂ first → last | val score first → last |",
                  "|---|---|---|---|"]
        for fam in families:
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


# ------------------------------------------------------------------------------------------ main
def make_report(run_dirs: list[str | Path], out: str | Path | None = None, alpha: float | None = None,
                band: float | None = None) -> Path:
    """Write the plots and ``report.md``; returns the output directory."""
    if not run_dirs:
        raise ReportError("give at least one run directory")
    for p in run_dirs:  # every path is checked before any is read
        check_run_dir(p)
    runs = [load_run(p) for p in run_dirs]
    _label_runs(runs)
    groups = group_runs(runs, alpha, band)
    out = Path(out) if out is not None else (Path(run_dirs[0]) / "report" if len(run_dirs) == 1 else Path("report"))
    out.mkdir(parents=True, exist_ok=True)
    plots = plot_all(groups, out)
    write_markdown(groups, runs, out, plots)
    return out


@dataclass
class ReportConfig:
    runs: list[str] = MISSING  # run directories written by train.py, e.g. runs=[runs/a,runs/b]
    out: Optional[str] = None  # output directory; None: <run_dir>/report for one run, else ./report
    alpha: Optional[float] = None  # target p-hat for the shading; None: each run's curriculum.alpha
    band: Optional[float] = None  # half-width of the band around alpha; None: curriculum.band, or 0.1 if null


def main(argv: list[str] | None = None) -> Path | None:
    try:
        cfg = parse_cli(sys.argv[1:] if argv is None else argv, __doc__, ReportConfig, conf_dir=None)
        if cfg is None:
            return None
        out = make_report(list(cfg.runs), cfg.out, cfg.alpha, cfg.band)
    except (ConfigError, ReportError) as e:
        sys.exit(f"error: {e}")
    print(f"report: {out / 'report.md'}")
    return out


if __name__ == "__main__":
    main()
