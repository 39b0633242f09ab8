"""Lightning callbacks: the co-evolution epoch (:mod:`.coevolution`), the console, HF checkpoints and
benchmark validation."""
