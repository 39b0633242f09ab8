"""GenEnv co-evolution (agent GRPO + simulator RWR) as a PyTorch Lightning trainer.

The design card keeps ``callbacks/`` and ``conf/`` at the top of the repository. An installed
package holds them as ``lightning_genenv/callbacks`` and ``lightning_genenv/conf`` (pyproject's
``package-dir``); in a checkout, the top-level ``callbacks/`` is registered here under the same
name, so that ``lightning_genenv.callbacks`` is the one import path everywhere.
"""

import importlib.util as _util
import sys as _sys
from pathlib import Path as _Path


def _register_checkout_callbacks() -> None:
    here = _Path(__file__).resolve().parent
    top = here.parent / "callbacks"
    if (here / "callbacks").is_dir() or not (top / "__init__.py").is_file():
        return  # installed (it is a real subpackage), or not a checkout
    spec = _util.spec_from_file_location(f"{__name__}.callbacks", top / "__init__.py",
                                         submodule_search_locations=[str(top)])
    module = _util.module_from_spec(spec)
    _sys.modules[spec.name] = module
    spec.loader.exec_module(module)


_register_checkout_callbacks()
