"""RESULTS.md's standing figures, drawn from the archived runs (``python -m lightning_genenv.report.claims
--plot``): the default agent's gain, the default regime's ends, the calibrated solver's mean success per epoch, and
the four-family co-evolution's curriculum and held-out reward.
Left out: the per-run curves, which ``lightning_genenv/report/plots.py`` draws.
"""

from __future__ import annotations

from pathlib import Path

from lightning_genenv.report.calibrated_run import read_run
from lightning_genenv.report.claim import RESULTS, ROOT, RUNS
from lightning_genenv.report.claims_coevo import FAM, NAMES
from lightning_genenv.report.claims_runs import AFTER, DEF, RECORDED, run_end, start_end_means
from lightning_genenv.report.plots import COLORS, DPI, FIGSIZE, pyplot
from lightning_genenv.report.runs import load_run

FIGURES = RESULTS / "standing"


def plot(root: Path = ROOT, out: Path | None = None) -> list[Path]:
    """RESULTS.md's figures from the archived runs: the default agent's start and end per seed
    (``agent_gain.png``), the default regime's end per seed and setting (``default_regime.png``; GenEnv's
    seeds 1-2, not archived, drawn hollow), the calibrated solver's mean success per epoch (``calibrated.png``) and
    the four-family co-evolution (``coevolution.png``)."""
    plt = pyplot()
    out = Path(out) if out is not None else root / FIGURES
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for i, run in enumerate(AFTER):
        ax.plot([0, 1], start_end_means(root, run), marker="o", color=COLORS[i], label=f"seed {i}")
    ax.set_xticks([0, 1], ["step 0", "end (48 agent steps)"])
    ax.set_ylabel("sampled held-out reward (128 tasks × 8)")
    ax.set_title("the default run: start and end, 3 seeds")
    ax.legend()
    fig.tight_layout()
    paths = [out / "agent_gain.png"]
    fig.savefig(paths[-1], dpi=DPI)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=FIGSIZE)
    arms = [("GenEnv", ["default-s0"]), ("plain GRPO", DEF["grpo"]), ("GenEnv-Random", DEF["random"]),
            ("GenEnv-Static", DEF["static"])]
    for x, (_label, runs) in enumerate(arms):
        ends = [run_end(root, r) for r in runs]
        for s, e in enumerate(ends):
            ax.plot(x + (s - 1) * 0.1, e, "o", color=COLORS[s], label=f"seed {s}" if x == 1 else None)
    for s in (1, 2):
        ax.plot((s - 1) * 0.1, RECORDED["default_genenv_end"][s], "o", mfc="none", color=COLORS[s])
    ax.axhline(0.141, color="gray", linestyle="--", label="step 0 (every run)")
    ax.set_xticks(range(len(arms)), [a for a, _ in arms])
    ax.set_ylabel("sampled held-out reward at the end")
    ax.set_title("default regime, end of run (hollow: not archived)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    paths.append(out / "default_regime.png")
    fig.savefig(paths[-1], dpi=DPI)
    plt.close(fig)
    paths.append(calibrated_figure(root, out / "calibrated.png"))
    paths.append(coevolution_figure(root, out / "coevolution.png"))
    return paths


# The calibrated solver's standing runs: per alpha (and d0), the trained simulator's seeds (grpo with replayed seeds,
# at a constant learning rate and at one keyed to the epoch's |p-bar - alpha|) and the never-trained one's
CALIBRATED_ARMS = {"replay-grpo": ("grpo, constant rate", {}),
                   "os3-grpo": ("grpo, rate keyed to |p̄ − α|", {"linestyle": "--"}),
                   "untrained": ("never trained", {"linestyle": ":", "alpha": 0.6})}
CALIBRATED = {(alpha, d0): {arm: [RESULTS / "calibrated-shaped" / f"{arm}-a{tag}-s{s}" for s in range(3)]
                            for arm in CALIBRATED_ARMS}
              for alpha, d0, tag in ((0.2, 5, "02"), (0.5, 2, "05"), (0.8, 3.69, "08-d369"))}


def calibrated_figure(root: Path, path: Path) -> Path:
    """Mean success p-bar per epoch, one panel per alpha: each seed of each arm (:data:`CALIBRATED_ARMS`), alpha and
    the bar's band (grey)."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(CALIBRATED), figsize=(FIGSIZE[0] * 1.8, FIGSIZE[1]), sharey=True)
    for ax, ((alpha, d0), arms) in zip(axes, CALIBRATED.items()):
        ax.axhspan(alpha - 0.1, alpha + 0.1, color="0.9")
        ax.axhline(alpha, color="gray", linewidth=0.8)
        for arm, run_dirs in arms.items():
            name, style = CALIBRATED_ARMS[arm]
            for seed, run_dir in enumerate(run_dirs):
                _p_bar_line(ax, read_run(root / run_dir), color=COLORS[seed], label=f"{name}, seed {seed}", **style)
        ax.set_title(f"α = {alpha:g}, d₀ = {d0:g}")
        ax.set_xlabel("epoch")
    axes[0].set_ylabel("mean success p̄ of the epoch's tasks")
    axes[0].set_ylim(0, 1)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", fontsize="x-small", ncol=3)
    fig.tight_layout(rect=(0, 0.2, 1, 1))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _p_bar_line(ax, run, **style) -> None:
    ax.plot(range(1, len(run.epochs) + 1), [e["curriculum/p_hat_mean"] for e in run.epochs], marker=".", **style)


def coevolution_figure(root: Path, path: Path) -> Path:
    """The four-family co-evolution: mean |p-hat - alpha| of each epoch's tasks, GenEnv and GenEnv-Random (dashed)
    per seed; and each arm's sampled held-out reward at step 0 and at the end, per seed."""
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(FIGSIZE[0] * 1.8, FIGSIZE[1]))
    for arm, style in (("genenv", {}), ("random", {"linestyle": "--", "alpha": 0.6})):
        for seed, name in enumerate(FAM[arm]):
            series = load_run(root / RUNS / name).series("curriculum/p_hat_abs_error")
            left.plot(sorted(series), [series[e] for e in sorted(series)], marker=".", color=COLORS[seed],
                      label=f"{NAMES[arm].replace('`', '')}, seed {seed}", **style)
    left.set_xlabel("epoch")
    left.set_ylabel("mean |p̂ − α| of the epoch's tasks (α = 0.5)")
    left.legend(fontsize="x-small", ncol=2)
    for x, arm in enumerate(FAM):
        for seed, name in enumerate(FAM[arm]):
            right.plot([x - 0.2, x + 0.2], start_end_means(root, name), marker="o", color=COLORS[seed],
                       label=f"seed {seed}" if x == 0 else None)
    right.set_xticks(range(len(FAM)), [NAMES[a].replace("`", "") for a in FAM])
    right.set_ylabel("sampled held-out reward, step 0 → end")
    right.legend(fontsize="x-small")
    fig.suptitle("co-evolution on the four families the agent solves most")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path
