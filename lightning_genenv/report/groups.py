"""Grouping runs into experiments: runs whose configs differ only by seed form a :class:`Group`.

The seed keys (``seed``, ``data.seed``), ``run_dir``, ``sweep_dir`` and cosmetic keys are ignored when comparing
configs. A group is labelled by ``curriculum.name``; when two groups share that name, the label adds
the (at most two) keys that tell them apart, or else the first run's directory name. A group's α
and band (for the shading and the "toward α" check) are ``alpha=``/``band=`` if given, else its
first run's ``curriculum.alpha`` and ``curriculum.band`` (its ``curriculum.in_band_width`` when null, the
band its logged in-band fraction used; the schema's defaults for a run that predates a key).

Deliberately left out: grouping by anything but the config (e.g. by directory name), and merging
groups whose configs differ in a key that does not change the experiment but is not listed here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from lightning_genenv.config.schema import CurriculumConfig
from lightning_genenv.report.runs import Run

# Config keys that do not make two runs different experiments.
SEED_KEYS = ("seed", "data.seed")
IGNORED_KEYS = (*SEED_KEYS, "run_dir", "sweep_dir", "model.cache_dir", "trainer.enable_progress_bar",
                "logger.num_text_samples", "trainer.save_hf", "logger.offline", "trainer.save_hf_every_n_epochs",
                "trainer.save_hf_total_limit",
                "rollout.chosen_because",  # in the config.yaml of runs before run_choices.json
                # the sampler, not the experiment; and config.yaml now holds the composed "auto" where older
                # runs held the resolved backend (run_choices.json has the choice)
                "rollout.backend")
DEFAULT_BAND = CurriculumConfig.in_band_width  # the band of a run whose config has neither band nor in_band_width


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
        a = alpha if alpha is not None else float(first.curriculum("alpha", CurriculumConfig.alpha))
        b = band if band is not None else first.curriculum("band")
        b = b if b is not None else first.curriculum("in_band_width", DEFAULT_BAND)
        groups.append(Group(label, members, a, float(b)))
    return groups


def families(g: Group) -> list[str]:
    fams = set()
    for r in g.runs:
        fams |= set(r.family_p_hat) | set(r.family_tasks)
        fams |= {t.split("/", 2)[2] for t in r.epoch_scalars if t.startswith("val/score/")}
    return sorted(fams)
