"""Importing a ``bench/`` script (not a package) as a module, for its tests; a hand-made run directory for the
scripts that read runs."""

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench_script(name: str):
    """``bench/<name>.py`` as the module ``name``, registered in ``sys.modules`` (its dataclasses need that)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def scalar_run(root: Path, seed: int, tag: str, values: list[float], curriculum: str = "none") -> str:
    """A run directory at ``root`` (created) whose ``tb/agent`` logs ``tag`` = ``values[e]`` at epoch ``e``."""
    from torch.utils.tensorboard import SummaryWriter

    root.mkdir(parents=True)
    (root / "config.yaml").write_text(f"seed: {seed}\ncurriculum:\n  name: {curriculum}\n")
    with SummaryWriter(str(root / "tb" / "agent")) as w:
        for epoch, v in enumerate(values):
            w.add_scalar("epoch", epoch, epoch * 8)
            w.add_scalar(tag, v, epoch * 8)
    return str(root)
