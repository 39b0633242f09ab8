"""The PNG plots of a report, one function per picture; every picture is written even when no run
logged its data (it then says so).

A group's curve is the mean over its seeds, shaded by ± one sample standard deviation where two or
more seeds logged that point. ``p_hat.png`` shades ``α ± band``; ``data_efficiency.png`` draws one line
per run (val score against ``curriculum/synthetic_tasks_used``, whose x differs per seed); ``kl.png``
has the agent's KL per step and the simulator's KL to its initial weights per epoch; ``family_<group>.png``
has ``p̂`` and val score per task family; ``val_score_<benchmark>.png``, one per benchmark a run validated on
(``data=paper``), its greedy held-out score.

Deliberately left out: averaging the data-efficiency curve across seeds, ``time/*`` keys, the
simulator's invalid-generation reasons, and any interactive or HTML output (matplotlib's Agg only).
"""

from __future__ import annotations

from pathlib import Path

from lightning_genenv.config import BENCHMARK_NAMES
from lightning_genenv.report.groups import Group, families
from lightning_genenv.report.stats import aggregate

COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
          "tab:gray", "tab:olive", "tab:cyan"]
DPI = 80
FIGSIZE = (6, 4)


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend, imported on first use (matplotlib is the report's extra)."""
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
    pyplot().close(fig)
    return path


def _shade_bands(ax, groups: list[Group]) -> None:
    for alpha, band in sorted({(g.alpha, g.band) for g in groups}):
        ax.axhspan(alpha - band, alpha + band, color="gold", alpha=0.25, linewidth=0,
                   label=f"α ± band ({alpha:g} ± {band:g})")
        ax.axhline(alpha, color="goldenrod", linestyle="--", linewidth=1)


def _epoch_plot(out: Path, name: str, groups: list[Group], tag: str, ylabel: str, title: str,
                band=False, ylim=None) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=FIGSIZE)
    if band:
        _shade_bands(ax, groups)
    drawn = _plot_groups(ax, groups, lambda r: r.series(tag))
    if ylim:
        ax.set_ylim(*ylim)
    _finish(ax, drawn, tag, "epoch", ylabel, title)
    return _save(fig, out / name)


def plot_all(groups: list[Group], out: Path) -> list[Path]:
    plt = pyplot()
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

    for bench in benchmarks_logged(groups):  # data=paper: the held-out score of each benchmark
        paths.append(_epoch_plot(out, f"val_score_{bench}.png", groups, f"val/score/{bench}", "validation score",
                                 f"{bench}: greedy held-out score (epoch -1: before training)", ylim=(-0.05, 1.05)))
    for g in groups:
        paths.append(_family_plot(out, g))
    return paths


def benchmarks_logged(groups: list[Group]) -> list[str]:
    """The benchmarks whose held-out score (``val/score/<name>``) some run logged."""
    return [b for b in sorted(BENCHMARK_NAMES) if any(r.series(f"val/score/{b}") for g in groups for r in g.runs)]


def _family_plot(out: Path, g: Group) -> Path:
    plt = pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 5), sharex=True)
    top.axhspan(g.alpha - g.band, g.alpha + g.band, color="gold", alpha=0.25, linewidth=0)
    drawn_top = drawn_bottom = 0
    for i, fam in enumerate(families(g)):
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
