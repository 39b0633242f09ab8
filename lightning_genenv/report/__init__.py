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

# The package, by job (each module's docstring says what it leaves out):
#   runs.py      a run directory -> Run (config.yaml, tb/agent, tb/simulator, pools/d_env.jsonl)
#   groups.py    runs that differ only by seed -> Group, with its label, alpha and band
#   stats.py     mean ± sd over seeds, first -> last, toward alpha; the tables' number format
#   plots.py     the PNG files
#   markdown.py  report.md
#   cli.py       make_report and the command line (__main__.py runs it)

from lightning_genenv.report.cli import ReportConfig, main, make_report
from lightning_genenv.report.groups import DEFAULT_BAND, IGNORED_KEYS, SEED_KEYS, Group, families, group_runs
from lightning_genenv.report.markdown import SUMMARY_KEYS, write_markdown
from lightning_genenv.report.plots import plot_all
from lightning_genenv.report.runs import ReportError, Run, check_run_dir, epoch_mapper, label_runs, load_run
from lightning_genenv.report.stats import NOT_LOGGED, aggregate, first_last, fmt, fmt_spread, moved_toward

__all__ = ["DEFAULT_BAND", "IGNORED_KEYS", "NOT_LOGGED", "SEED_KEYS", "SUMMARY_KEYS", "Group", "ReportConfig",
           "ReportError", "Run", "epoch_mapper", "aggregate", "check_run_dir", "families", "first_last", "fmt",
           "fmt_spread", "group_runs", "label_runs", "load_run", "main", "make_report", "moved_toward", "plot_all",
           "write_markdown"]
