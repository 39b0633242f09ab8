"""The product speaks of the project (what it does, why, measured how), not of how it was made.

Every tracked text file (documents, code and its comments and docstrings, configs and their comments, tests) is
scanned for the words of a working log: a work period, a tracker's ticket number, the people or assistants who did
the work, and a dated "this day's" default. The words are spelled in pieces below so that this file does not hold
them. A few phrases are product vocabulary and stay: pytest's fixture scope and vLLM's own error message.
"""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {".md", ".py", ".yaml", ".yml", ".toml", ".sh", ".cfg", ".txt", ".ini"}
_S, _I, _H, _E, _T = "sess" + "ions?", "iss" + "ues?", "hel" + "pers?", "engin" + "eers?", "tod" + "ay's"
WORDS = re.compile(rf"\b(?:{_S}|{_I}|{_H}|{_E}|{_T})\b|(?<![\w&])#\d+\b", re.IGNORECASE)
PRODUCT_VOCABULARY = [
    'scope="' + "sess" + 'ion"',             # a pytest fixture's scope
    "encountered an " + "iss" + "ue",        # vLLM's EngineCore error message, quoted
    # small functions, so named in two docstrings whose files' sources key cached models (rewording rebuilds them)
    "tokenizer " + "hel" + "pers",           # lightning_genenv/models/tiny.py
    "training-loop " + "hel" + "pers",       # tests/tiny_sft.py
]
# Files not scanned yet: remove an entry once its file is clean.
NOT_YET: set[str] = set()
NOT_YET_FOLDERS = ()


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def scanned() -> list[Path]:
    """The tracked text files: documents, code, configs, tests, CI; the archived data in docs/results is not text of
    ours (its Markdown is)."""
    files = []
    for name in _tracked():
        path = ROOT / name
        if name.startswith("docs/results/") and path.suffix != ".md":  # archived data: runs' configs, pools, records
            continue
        if name in NOT_YET or name.startswith(NOT_YET_FOLDERS):
            continue
        if (path.suffix in SUFFIXES or name.startswith(".ci/")) and path.is_file() and not path.is_symlink():
            files.append(path)
    return files


def findings(text: str) -> list[tuple[int, str]]:
    for phrase in PRODUCT_VOCABULARY:
        text = text.replace(phrase, " " * len(phrase))
    return [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in WORDS.finditer(text)]


def test_the_pattern_finds_the_words_and_spares_product_vocabulary():
    assert [w for _, w in findings("as the " + "sess" + "ion found (" + "iss" + "ue 28, #" + "28)")] == [
        "sess" + "ion", "iss" + "ue", "#" + "28"]
    assert findings('@pytest.fixture(scope="' + "sess" + 'ion")\nEngineCore encountered an ' + "iss" + "ue.") == []
    assert findings("a Markdown heading ## and C# code, tasks 1&#8211;2, the default's value") == []


def test_no_tracked_text_file_speaks_of_how_it_was_made():
    found = []
    for path in scanned():
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}:{line}: {word}" for line, word in findings(text)]
    assert not found, f"{len(found)} process words:\n" + "\n".join(found)
