"""Fail CI on a skipped test that ``.ci/expected_skips.txt`` does not list with its reason.

``python .ci/check_skips.py JUNIT_XML ALLOW_LIST`` reads pytest's JUnit XML (``--junitxml``), prints every skip
with its reason, and exits 1 when one is not on the allow-list (a test that skips where CI should run it: missing
data, a missing package, an environment variable) or when the XML holds no test at all.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from fnmatch import fnmatchcase
from pathlib import Path


def read_allow_list(path: str | Path) -> list[tuple[str, str]]:
    """``(test pattern, reason substring)`` of each line that is not blank or a ``#`` comment."""
    entries = []
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            test, sep, reason = line.partition("|")
            if not sep or not test.strip() or not reason.strip():
                raise ValueError(f"{path}: expected 'test pattern | reason', got {line!r}")
            entries.append((test.strip(), reason.strip()))
    return entries


def skipped_tests(junit: str | Path) -> tuple[int, list[tuple[str, str]]]:
    """The number of test cases in pytest's JUnit XML, and ``(classname.name, reason)`` of each skipped one."""
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    skips = []
    for case in cases:
        for skipped in case.findall("skipped"):
            name = ".".join(p for p in (case.get("classname"), case.get("name")) if p)
            skips.append((name, skipped.get("message", "")))
    return len(cases), skips


def unexpected(skips: list[tuple[str, str]], allowed: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The skips that no allow-list entry matches (its pattern matches the test, its reason is in the message)."""
    return [(test, reason) for test, reason in skips
            if not any(fnmatchcase(test, pattern) and why in reason for pattern, why in allowed)]


def main(argv: list[str]) -> int:
    junit, allow_list = argv
    count, skips = skipped_tests(junit)
    bad = unexpected(skips, read_allow_list(allow_list))
    print(f"CI: {count} tests, {len(skips)} skipped:")
    for test, reason in skips:
        print(f"  {'UNEXPECTED ' if (test, reason) in bad else ''}{test}: {reason}")
    if count == 0:
        print(f"CI: {junit} holds no test")
        return 1
    if bad:
        print(f"CI: {len(bad)} skip(s) not on {allow_list}: run them (or list them there, with the reason)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
