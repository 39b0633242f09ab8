"""Lightning callbacks: the co-evolution epoch (:mod:`.coevolution`), the whole validation set at the run's
start and end (:mod:`.held_out`), the console, HF checkpoints and benchmark validation."""
