"""``python -m lightning_genenv.report``: see :mod:`lightning_genenv.report.cli`."""

from lightning_genenv.report.cli import main

main()
