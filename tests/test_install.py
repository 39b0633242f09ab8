"""A non-editable ``pip install .`` works on its own: the console scripts run from outside the checkout.

A fresh venv (``--system-site-packages``, so that the dependencies already installed here are
reused and nothing is downloaded) gets ``pip install --no-deps --no-build-isolation`` of a copy of
the checkout. From a temporary directory: ``genenv-train --help``, a 3-epoch ``genenv-train`` on the
tiny model, and ``genenv-eval`` on the run it wrote (three Bamboogle items written here).
"""

import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shrunk import TINY_ARGS

ROOT = Path(__file__).resolve().parent.parent
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv*", "runs", "outputs", "build", "*.egg-info", "__pycache__",
                                    ".pytest_cache", ".cache")
ITEMS = [{"Question": "Who wrote Hamlet?", "Answer": "william shakespeare"},
         {"Question": "What is the capital of France?", "Answer": "paris"},
         {"Question": "How many legs does a spider have?", "Answer": "eight"}]


def _venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    if sys.prefix != sys.base_prefix:  # run from a venv: its packages are not the "system" ones; add them
        (Path(purelib) / "_parent_env.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return venv


def _run(args: list, cwd: Path, env: dict, timeout: int = 900) -> str:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{args[0]} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.mark.slow
def test_pip_install_then_console_scripts_outside_the_checkout(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=NOT_SOURCE)  # the build writes build/ and *.egg-info into its source
    venv = _venv(tmp_path)
    python, bin_dir = venv / "bin" / "python", venv / "bin"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-build-isolation",
          "--no-input", src], tmp_path, dict(os.environ))

    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    files = json.loads(_run([python, "-c", "import json, importlib.metadata as m, lightning_genenv; print(json.dumps("
                             "[lightning_genenv.__file__, *map(str, m.files('lightning_genenv'))]))"], work, env))
    assert Path(files[0]).is_relative_to(venv), f"lightning_genenv imported from {files[0]}, not the venv"
    assert {Path(f).parts[0] for f in files[1:]} <= {"lightning_genenv", "lightning_genenv-0.1.0.dist-info", ".."}
    assert {"lightning_genenv/conf/config.yaml", "lightning_genenv/conf/logger/csv.yaml",
            "lightning_genenv/callbacks/coevolution.py"} <= set(files[1:])

    usage = _run([bin_dir / "genenv-train", "--help"], work, env)
    assert "config groups" in usage and "logger: csv, mlflow, tensorboard, wandb" in usage
    run_dir = work / "run"
    _run([bin_dir / "genenv-train", "model=tiny", f"run_dir={run_dir}", *TINY_ARGS, "trainer.max_epochs=3",
          "rollout=hf"], work, env)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["epochs"] == 3 and (run_dir / "final" / "agent" / "model.safetensors").is_file()

    data_root = work / "benchmarks"
    (data_root / "bamboogle").mkdir(parents=True)
    (data_root / "bamboogle" / "bamboogle_125.json").write_text(json.dumps(ITEMS))
    _run([bin_dir / "genenv-eval", "benchmark=bamboogle", f"model={run_dir}", f"data_root={data_root}",
          "max_new_tokens=8", "progress=false"], work, env)
    result = json.loads((run_dir / "eval" / "bamboogle" / "summary.json").read_text())
    assert result["n_items"] == 3 and result["model_path"] == str(run_dir / "final" / "agent")
