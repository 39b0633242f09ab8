"""``python evaluate.py ...`` from a checkout: the same as ``genenv-eval ...`` (:mod:`lightning_genenv.evaluate`)."""

from lightning_genenv.evaluate import main, run  # noqa: F401

if __name__ == "__main__":
    main()
