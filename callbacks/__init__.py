"""The design card's ``callbacks/``: each module re-exports ``lightning_genenv.callbacks.<module>`` in one line."""
