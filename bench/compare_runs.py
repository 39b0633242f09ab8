"""Compare two run directories bit for bit: ``python bench/compare_runs.py RUN_A RUN_B``.

For a refactor that must not change behaviour: the same command at the same seed before and after
must give the same run. Compared exactly:

* the pool logs (``pools/d_train.jsonl``, ``pools/d_env.jsonl``: their bytes) and the manifest's
  segments without their commit times;
* the final weights (``final/{agent,simulator}/model.safetensors``: every tensor, by ``torch.equal``);
* ``static_tasks.jsonl`` when present;
* ``summary.json`` and the agent's and simulator's TensorBoard scalars (every step's value), except
  what measures time or speed (``time/*``, ``*tokens_per_second*``, ``wall_time_s``, ``peak_rss_gb``).

Exits 0 when everything matches and prints one line per difference otherwise.

Deliberately left out: checkpoints (they hold the pools and weights compared here, plus wall-clock
state) and TensorBoard histograms and texts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TIMING = ("time/", "tokens_per_second", "wall_time_s", "peak_rss_gb")


def _timing(key: str) -> bool:
    return any(t in key for t in TIMING)


def _manifest(run: Path) -> list:
    path = run / "pools" / "manifest.json"
    if not path.exists():
        return []
    segments = json.loads(path.read_text())["segments"]
    return [{k: v for k, v in s.items() if k != "committed_at"} for s in segments]


def _weights(path: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(path) if path.exists() else {}


def _scalars(tb: Path) -> dict:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    if not tb.exists():
        return {}
    acc = EventAccumulator(str(tb), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"] if not _timing(tag)}


def compare(a: Path, b: Path, counts: dict | None = None) -> list[str]:
    """The differences between runs ``a`` and ``b``; ``counts`` gets how much was compared."""
    import torch

    counts = {} if counts is None else counts
    diffs = []
    for name in ("pools/d_train.jsonl", "pools/d_env.jsonl", "static_tasks.jsonl"):
        pa, pb = a / name, b / name
        if pa.exists() != pb.exists() or pa.exists() and pa.read_bytes() != pb.read_bytes():
            diffs.append(f"{name} differs")
    if _manifest(a) != _manifest(b):
        diffs.append("pools/manifest.json segments differ")
    for player in ("agent", "simulator"):
        wa, wb = (_weights(r / "final" / player / "model.safetensors") for r in (a, b))
        if set(wa) != set(wb):
            diffs.append(f"final/{player}: different tensor names")
        diffs += [f"final/{player}: {k} differs" for k in sorted(set(wa) & set(wb)) if not torch.equal(wa[k], wb[k])]
        counts[f"{player} tensors"] = len(wa)
    sa, sb = (json.loads((r / "summary.json").read_text()) for r in (a, b))
    for k in sorted(set(sa) | set(sb)):
        if not _timing(k) and sa.get(k) != sb.get(k):
            diffs.append(f"summary.json {k}: {sa.get(k)} != {sb.get(k)}")
    for player in ("agent", "simulator"):
        ta, tb = (_scalars(r / "tb" / player) for r in (a, b))
        counts[f"{player} scalar tags"] = len(ta)
        for tag in sorted(set(ta) | set(tb)):
            if ta.get(tag) != tb.get(tag):
                diffs.append(f"tb/{player} {tag}: {ta.get(tag)} != {tb.get(tag)}")
    return diffs


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        sys.exit("usage: python bench/compare_runs.py RUN_A RUN_B")
    a, b = map(Path, argv)
    counts = {}
    diffs = compare(a, b, counts)
    for d in diffs:
        print(d)
    counts.update({f"{p} records": sum(1 for _ in open(a / "pools" / f"{p}.jsonl")) for p in ("d_train", "d_env")
                   if (a / "pools" / f"{p}.jsonl").exists()})
    print(f"{a} vs {b}: " + ("identical" if not diffs else f"{len(diffs)} differences") + f" (compared: {counts})")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
