"""Compare two runs bit for bit: ``python bench/compare_runs.py RUN_A RUN_B``.

For a refactor that must not change behaviour: the same command at the same seed before and after
must give the same run. Either side may be a run directory or a *fingerprint* of one, a JSON file written by
``python bench/compare_runs.py --fingerprint RUN OUT.json`` (kept in the repository where the run directory is
not: ``docs/results/*/fingerprint.json``). Compared exactly:

* the pool logs (``pools/d_train.jsonl``, ``pools/d_env.jsonl``: their SHA-256) and the manifest's
  segments without their commit times;
* the final weights (``final/{agent,simulator}/model.safetensors``: every tensor's dtype, shape and the
  SHA-256 of its bytes);
* ``static_tasks.jsonl`` when present (its SHA-256);
* ``summary.json`` and the agent's and simulator's TensorBoard scalars (every step's value), except
  what measures time or speed (``time/*``, ``*tokens_per_second*``, ``wall_time_s``, ``peak_rss_gb``).

Exits 0 when everything matches and prints one line per difference otherwise.

``python bench/compare_runs.py --prefix RUN_A RUN_B`` compares only the agent's and simulator's TensorBoard
scalars (time and speed left out, as above), at the steps both runs logged: for a run stopped early against a
whole one, or two runs that should share their beginning (the same seed from a cold and from a warm model
cache). Per player it prints how many steps were compared and the first step where a tag differs. Exits 0 when
no step differs.

Deliberately left out: checkpoints (they hold the pools and weights compared here, plus wall-clock
state), TensorBoard histograms and texts, and the two cases where bytes and values disagree (NaN equals
itself here; 0.0 and -0.0 differ).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from lightning_genenv.atomic import sha256_file

TIMING = ("time/", "tokens_per_second", "wall_time_s", "peak_rss_gb")
FILES = ("pools/d_train.jsonl", "pools/d_env.jsonl", "static_tasks.jsonl")
PLAYERS = ("agent", "simulator")


def _timing(key: str) -> bool:
    return any(t in key for t in TIMING)


def _sha256(path: Path) -> str | None:
    return sha256_file(path) if path.exists() else None


def _manifest(run: Path) -> list:
    path = run / "pools" / "manifest.json"
    if not path.exists():
        return []
    segments = json.loads(path.read_text())["segments"]
    return [{k: v for k, v in s.items() if k != "committed_at"} for s in segments]


def _weights(path: Path) -> dict[str, str]:
    """Each tensor as ``dtype shape sha256-of-its-bytes``."""
    import torch
    from safetensors.torch import load_file

    if not path.exists():
        return {}
    return {name: f"{t.dtype} {list(t.shape)} "
                  f"{hashlib.sha256(t.contiguous().view(-1).view(torch.uint8).numpy().tobytes()).hexdigest()}"
            for name, t in load_file(path).items()}


def _scalars(tb: Path) -> dict[str, list]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    if not tb.exists():
        return {}
    acc = EventAccumulator(str(tb), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [[e.step, e.value] for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"] if not _timing(tag)}


def fingerprint(run: Path) -> dict:
    """What :func:`compare` compares of a run, as a JSON-able value."""
    summary = json.loads((run / "summary.json").read_text())
    return {"files": {name: _sha256(run / name) for name in FILES},
            "manifest": _manifest(run),
            "weights": {p: _weights(run / "final" / p / "model.safetensors") for p in PLAYERS},
            "summary": {k: v for k, v in summary.items() if not _timing(k)},
            "scalars": {p: _scalars(run / "tb" / p) for p in PLAYERS}}


def load(side: Path) -> dict:
    """A run directory's fingerprint, or a fingerprint file's."""
    return json.loads(side.read_text()) if side.is_file() else fingerprint(side)


def compare(a: dict, b: dict, counts: dict | None = None) -> list[str]:
    """The differences between fingerprints ``a`` and ``b``; ``counts`` gets how much was compared."""
    counts = {} if counts is None else counts
    diffs = [f"{name} differs" for name in FILES if a["files"][name] != b["files"][name]]
    if a["manifest"] != b["manifest"]:
        diffs.append("pools/manifest.json segments differ")
    for player in PLAYERS:
        wa, wb = a["weights"][player], b["weights"][player]
        if set(wa) != set(wb):
            diffs.append(f"final/{player}: different tensor names")
        diffs += [f"final/{player}: {k} differs" for k in sorted(set(wa) & set(wb)) if wa[k] != wb[k]]
        counts[f"{player} tensors"] = len(wa)
    sa, sb = a["summary"], b["summary"]
    diffs += [f"summary.json {k}: {sa.get(k)} != {sb.get(k)}" for k in sorted(set(sa) | set(sb)) if sa.get(k) != sb.get(k)]
    for player in PLAYERS:
        ta, tb = a["scalars"][player], b["scalars"][player]
        counts[f"{player} scalar tags"] = len(ta)
        diffs += [f"tb/{player} {tag}: {ta.get(tag)} != {tb.get(tag)}" for tag in sorted(set(ta) | set(tb))
                  if ta.get(tag) != tb.get(tag)]
    counts["manifest segments"] = len(a["manifest"])
    return diffs


def first_divergence(a: dict[str, list], b: dict[str, list]) -> tuple[int, int | None, list[str]]:
    """Over the (tag, step) pairs both scalar sets hold: how many steps were compared, the first step where a
    value differs (None: none does) and the tags that differ there."""
    va = {(tag, step): value for tag, points in a.items() for step, value in points}
    vb = {(tag, step): value for tag, points in b.items() for step, value in points}
    shared = va.keys() & vb.keys()
    differing = sorted((step, tag) for tag, step in shared if va[tag, step] != vb[tag, step])
    steps = len({step for _, step in shared})
    if not differing:
        return steps, None, []
    first = differing[0][0]
    return steps, first, [tag for step, tag in differing if step == first]


def compare_prefix(a: Path, b: Path) -> int:
    """``--prefix``: the scalars at the steps both runs logged; 1 when a step differs."""
    differs = False
    for player in PLAYERS:
        steps, first, tags = first_divergence(_scalars(a / "tb" / player), _scalars(b / "tb" / player))
        if not steps:
            print(f"tb/{player}: no step logged by both")
        elif first is None:
            print(f"tb/{player}: identical over the {steps} steps both logged")
        else:
            differs = True
            named = ", ".join(tags[:4]) + (f" and {len(tags) - 4} more" if len(tags) > 4 else "")
            print(f"tb/{player}: first differs at step {first} ({named}); {steps} steps both logged")
    return 1 if differs else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 3 and argv[0] == "--prefix":
        a, b = Path(argv[1]), Path(argv[2])
        for side in (a, b):
            if not (side / "tb").is_dir():
                sys.exit(f"compare_runs: {side} has no tb/ (a run directory is needed for --prefix)")
        return compare_prefix(a, b)
    if len(argv) == 3 and argv[0] == "--fingerprint":
        run, out = Path(argv[1]), Path(argv[2])
        out.write_text(json.dumps(fingerprint(run), indent=1) + "\n")
        print(f"{run}: fingerprint written to {out}")
        return 0
    if len(argv) != 2:
        sys.exit("usage: python bench/compare_runs.py RUN_A RUN_B  (each a run directory or a fingerprint file)\n"
                 "       python bench/compare_runs.py --fingerprint RUN OUT.json\n"
                 "       python bench/compare_runs.py --prefix RUN_A RUN_B  (scalars at the steps both logged)")
    a, b = map(Path, argv)
    for side in (a, b):
        if not side.exists():
            sys.exit(f"compare_runs: {side} does not exist")
    counts = {}
    diffs = compare(load(a), load(b), counts)
    for d in diffs:
        print(d)
    print(f"{a} vs {b}: " + ("identical" if not diffs else f"{len(diffs)} differences") + f" (compared: {counts})")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
