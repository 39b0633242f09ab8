"""Keep a run without its weights: a copy of the run directory that the repository can hold, which the report
and the analyses read as they read the run.

    python bench/archive_run.py runs=[runs/a,runs/b] out=docs/results/runs [max_file_mb=20] [claims_only=true] \
        [link_within=docs/results]

Each run is copied to ``out/<the run directory's name>/`` byte for byte, all but ``checkpoints/`` and ``final/``
(the weights, about 3 GiB a default run): ``config.yaml``, ``run_choices.json``, ``run_record.json``,
``summary.json``, ``tb/``, ``validation/`` (the per-task files), ``pools/``, ``static_tasks.jsonl``, ``eval/``...
(about 1 MiB a default run). ``python -m lightning_genenv.report runs=[...]``, ``bench/held_out_gain.py``,
``bench/curriculum_table.py`` and ``bench/p_hat_headroom.py`` read the copy as they read the run. Each copy gets
``archive.json``: where it came from, every file with its size and SHA-256, and what was left out and why.

Run directories do not outlive the machine they were made on; what a results section cites should be a copy
in the repository, so that its tables can be recomputed and its plots redrawn with later seeds.

``claims_only=true`` keeps what the documents' figures read (``report.claims``, ``held_out_gain.py``,
``phase_times.py``, ``paired_epochs.py``): everything above but the pools' records (``pools/*.jsonl``, kept:
``pools/manifest.json``, their per-epoch counts and hashes) and ``static_tasks.jsonl``, the bulk of a run (0.67 to
0.77 of the 0.8 to 1.1 MB of the archived default-sized runs); the report's per-family ``p̂``,
``p_hat_headroom.py`` and ``near_duplicates.py`` need the records.

A file byte for byte equal to one already under ``link_within`` (default: ``out``; the same step-0 validation of a
seed in several settings, the same run choices) is stored once: the copy becomes a relative link to the file
already there, listed with its hash like any other and under ``linked`` in ``archive.json``. ``docs/results``
holds no file twice (``tests/test_results_archive.py``), so an archive there takes ``link_within=docs/results``.

A target that exists is refused (an archive is never overwritten or merged into), as are a run that is not a
run directory (no ``config.yaml``) and one without ``summary.json`` (unfinished) unless ``unfinished=true``.
A file over ``max_file_mb`` is left out and listed. Nothing is written for any run if one of them is refused.

Deliberately left out: the weights (``python bench/compare_runs.py --fingerprint RUN OUT.json`` keeps every
tensor's byte hash where a reproduction must be checked), compression, and committing.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from omegaconf import MISSING

from lightning_genenv.atomic import sha256_file
from lightning_genenv.report.cli import parse_script_args

WEIGHTS = ("checkpoints", "final")  # top-level folders of a run directory that hold weights


@dataclass
class Args:
    runs: list[str] = MISSING  # run directories to copy
    out: str = MISSING  # the folder that receives one copy per run, named as the run directory
    max_file_mb: float = 20.0  # a file larger than this is left out and listed in archive.json
    unfinished: bool = False  # also copy a run without summary.json (stopped or still running)
    claims_only: bool = False  # leave out the pools' records and static_tasks.jsonl (no figure reads them)
    link_within: str = ""  # the folder searched for a file already kept to link to; empty: out


def _records_only(rel: Path) -> bool:
    """A file ``claims_only`` leaves out: a pool's records or the static task set."""
    return (rel.parts[0] == "pools" and rel.suffix == ".jsonl") or rel.as_posix() == "static_tasks.jsonl"


def plan(run: Path, max_bytes: int, claims_only: bool = False) -> tuple[list[Path], dict[str, str]]:
    """The files of ``run`` to copy (relative paths, sorted) and those left out (relative path -> why)."""
    files, left_out = [], {}
    for path in sorted(run.rglob("*")):
        rel = path.relative_to(run)
        if rel.parts[0] in WEIGHTS:
            if len(rel.parts) == 1:
                left_out[rel.as_posix() + "/"] = "weights"
        elif path.is_symlink() or not (path.is_file() or path.is_dir()):
            left_out[rel.as_posix()] = "not a plain file"
        elif path.is_file():
            size = path.stat().st_size
            if claims_only and _records_only(rel):
                left_out[rel.as_posix()] = "records no figure reads (claims_only)"
            elif size > max_bytes:
                left_out[rel.as_posix()] = f"{size} bytes, over max_file_mb"
            else:
                files.append(rel)
    return files, left_out


def _refusal(run: Path, target: Path, unfinished: bool) -> str | None:
    if not (run / "config.yaml").is_file():
        return f"{run}: not a run directory (no config.yaml)"
    if not unfinished and not (run / "summary.json").is_file():
        return f"{run}: no summary.json (unfinished; unfinished=true copies it anyway)"
    if target.exists():
        return f"{target}: exists (an archive is never overwritten)"
    return None


def stored(out: Path) -> dict[str, Path]:
    """SHA-256 -> a regular, non-empty file under ``out`` holding those bytes (links are not stores)."""
    found: dict[str, Path] = {}
    if out.is_dir():
        for path in sorted(out.rglob("*")):
            if path.is_file() and not path.is_symlink() and path.stat().st_size > 0:
                found.setdefault(sha256_file(path), path)
    return found


def archive(run: Path, target: Path, max_bytes: int, claims_only: bool = False,
            store: dict[str, Path] | None = None) -> dict:
    """Copy ``run`` without its weights to ``target`` (which must not exist); returns what ``archive.json`` holds.
    A file whose bytes ``store`` (:func:`stored`) already holds becomes a relative link to it; ``store`` grows
    with the files copied."""
    files, left_out = plan(run, max_bytes, claims_only)
    store = {} if store is None else store
    record = {"source": str(run.resolve()), "files": {}, "left_out": left_out, "linked": {}}
    for rel in files:
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        digest, size = sha256_file(run / rel), (run / rel).stat().st_size
        if size > 0 and digest in store:
            dest.symlink_to(os.path.relpath(store[digest], dest.parent))
            record["linked"][rel.as_posix()] = os.path.relpath(store[digest], target)
        else:
            shutil.copy2(run / rel, dest)
            if size > 0:
                store[digest] = dest
        record["files"][rel.as_posix()] = {"bytes": size, "sha256": digest}
    (target / "archive.json").write_text(json.dumps(record, indent=1) + "\n")
    return record


def main(argv: list[str]) -> list[Path]:
    args = parse_script_args(argv, __doc__, Args)
    if args is None:
        return []
    out, max_bytes = Path(args.out), int(args.max_file_mb * 2**20)
    pairs = [(Path(r), out / Path(r).resolve().name) for r in args.runs]
    targets = [t for _, t in pairs]
    if len(set(targets)) != len(targets):
        raise SystemExit("two runs have the same directory name: their copies would collide")
    refusals = [why for run, target in pairs if (why := _refusal(run, target, args.unfinished))]
    if args.link_within and not Path(args.link_within).is_dir():
        refusals.append(f"link_within={args.link_within}: not a folder")
    if refusals:
        raise SystemExit("\n".join(refusals))
    store = stored(Path(args.link_within) if args.link_within else out)
    for run, target in pairs:
        record = archive(run, target, max_bytes, args.claims_only, store)
        size = sum(f["bytes"] for f in record["files"].values())
        print(f"{run} -> {target}: {len(record['files'])} files, {size / 2**20:.2f} MiB "
              f"({len(record['linked'])} linked to a copy already kept); "
              f"left out: {', '.join(sorted(record['left_out'])) or 'nothing'}")
    return targets


if __name__ == "__main__":
    main(sys.argv[1:])
