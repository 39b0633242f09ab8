"""``python train.py ...`` from a checkout: the same as ``genenv-train ...`` (:mod:`lightning_genenv.train`)."""

from lightning_genenv.train import main, run  # noqa: F401

if __name__ == "__main__":
    main()
