"""Shrunk configs shared by the tests that run ``train.py`` on the tiny models (imported, not a
fixture: some modules build their own argument lists from them at import time)."""

# Two co-evolution epochs of 8 tasks x 4 attempts on two task families; every valid generated task
# trains the simulator (k_min 0). The tiny simulator was fitted to copy the example its prompt shows, so
# its tasks are near-duplicates: they are kept (tests/test_task_writing.py tests the rejection).
TINY_ARGS = ["data.families=[weather,qa_arith]", "data.num_val=4", "data.seeds_per_epoch=4",
             "data.tasks_per_epoch=8", "data.replay_per_epoch=2", "simulator.num_variations=2",
             "agent.num_generations=4",
             "agent.max_completion_length=40", "agent.learning_rate=1e-3", "simulator.learning_rate=1e-3",
             "simulator.max_completion_length=48", "simulator.kl_max=10.0", "trainer.max_epochs=2",
             "trainer.enable_progress_bar=false", "model.lora.enabled=false", "rollout=hf",
             "curriculum.k_min=0.0", "simulator.reject_near_duplicates=false",
             # the KL term and a validation after every epoch (the defaults are beta 0 and validation at
             # step 0 and the end only): the tiny runs exercise the reference forward and every epoch's
             # validation files
             "agent.beta=0.001", "trainer.val_every_n_epochs=1"]
