from lightning_genenv.callbacks.held_out import *  # noqa: F401,F403  (the design card's place; the code is in the package)
