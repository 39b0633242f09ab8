"""GenEnv co-evolution (agent GRPO + simulator RWR) as a PyTorch Lightning trainer.

The design card keeps ``callbacks/`` and ``conf/`` at the top of the repository. The callbacks live in
the package (``lightning_genenv.callbacks``); the top-level ``callbacks/`` re-exports each module in
one line. ``conf/`` installs inside the package as ``lightning_genenv/conf`` (pyproject's ``package-dir``).
"""
