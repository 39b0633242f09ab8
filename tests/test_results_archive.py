"""``docs/results``, the archived data the documents' figures are computed from: within its size budget, no file
stored twice, its links and the documents' references to it resolve."""

import hashlib
import json
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
# The budget for docs/results: the bytes of its regular files (a link counts as its own few bytes). It holds 26.5 MB,
# of which 4.9 MB are the 36 frozen-agent runs of the group objective (their curves, about 0.14 MB a run), 1.3 MB
# the 9 four-family co-evolution runs and 1.6 MB the 83 measured calibrated runs (about 19 KB a run, their measured
# tasks included); a run that a claim needs fits in the rest when it keeps what the claim reads
# (docs/results/runs/README.md).
BUDGET_BYTES = 26_800_000
DOCUMENTS = ["README.md", "RESULTS.md", "BENCHMARKS.md", "EVALUATION.md", "docs/GUIDE.md",
             "docs/results/runs/README.md"]


def _files():
    return [p for p in sorted(RESULTS.rglob("*")) if p.is_file() and not p.is_symlink()]


def test_docs_results_is_within_its_size_budget():
    size = sum(p.stat().st_size for p in _files())
    assert size <= BUDGET_BYTES, f"docs/results holds {size:,} bytes, over its budget of {BUDGET_BYTES:,}"


def test_no_file_is_stored_twice():
    seen: dict[str, Path] = {}
    twice = []
    for p in _files():
        if p.stat().st_size == 0:
            continue
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        if digest in seen:
            twice.append(f"{p.relative_to(ROOT)} = {seen[digest].relative_to(ROOT)}")
        seen.setdefault(digest, p)
    assert not twice, "byte-identical files (link one to the other): " + "; ".join(twice)


def test_every_link_resolves_to_a_file_inside_docs_results():
    for p in RESULTS.rglob("*"):
        if p.is_symlink():
            target = p.resolve()
            assert target.is_file() and RESULTS.resolve() in target.parents, f"{p}: links to {target}"


def test_every_link_of_an_archive_that_lists_its_links_is_listed_with_its_target():
    """``bench/archive_run.py`` records each link it makes under ``linked``; a link made or moved by hand must be
    recorded there too (archives made before ``linked`` existed have no such field and are not read)."""
    unlisted = []
    for record_path in sorted(RESULTS.rglob("archive.json")):
        linked, folder = json.loads(record_path.read_text()).get("linked"), record_path.parent
        if linked is None:
            continue
        for p in sorted(folder.rglob("*")):
            if p.is_symlink():
                target = os.path.normpath(os.path.relpath(p.parent / os.readlink(p), folder))
                if linked.get(p.relative_to(folder).as_posix()) != target:
                    unlisted.append(f"{p.relative_to(ROOT)} -> {target}")
    assert not unlisted, "links not under their archive.json's 'linked': " + "; ".join(unlisted)


def test_every_image_and_folder_the_documents_name_exists():
    missing = []
    for doc in DOCUMENTS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for ref in re.findall(r"docs/results/[A-Za-z0-9_./{}*<>-]*[A-Za-z0-9_/{}*<>-]", text):
            if not (ROOT / ref).exists() and not any(ch in ref for ch in "{*<"):
                missing.append(f"{doc}: {ref}")
    assert not missing, "named but not archived: " + "; ".join(missing)
