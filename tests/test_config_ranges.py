"""Every numeric config key has its range: each int and float key of the schema (optional ones
included), walked from the schema itself, gets 0, -1, NaN, inf and a huge value on the command line.
Each is refused in one line that starts with the key, before anything loads, unless ``VALID`` lists it
with the reason it is a valid setting (and then it must compose)."""

import typing

import pytest

from lightning_genenv.config import Config, ConfigError, compose, schema_keys

PROBES = {"0": "0", "-1": "-1", "nan": ".nan", "inf": ".inf"}  # name -> YAML on the command line
HUGE = {int: str(10**30), float: "1.0e+30"}

# (key, probe): why the value is valid. Everything else must be refused.
VALID = {
    ("seed", "0"): "the default seed",
    ("data.seed", "0"): "the default seed",
    ("model.lora.dropout", "0"): "no dropout (the default)",
    ("agent.learning_rate", "0"): "a frozen agent (documented: it never moves)",
    ("agent.weight_decay", "0"): "no weight decay (the default)",
    ("agent.beta", "0"): "no KL penalty (TRL's default)",
    ("agent.num_shots", "0"): "a zero-shot prompt",
    ("agent.val_num_generations", "0"): "greedy validation only (documented)",
    ("simulator.learning_rate", "0"): "a frozen simulator (documented)",
    ("simulator.weight_decay", "0"): "no weight decay (the default)",
    ("simulator.kl_coef", "0"): "RWR without the KL term",
    ("simulator.num_examples", "0"): "no same-family examples next to the seed",
    ("simulator.seed_replay", "0"): "base seeds only (the default)",
    ("simulator.imitate_in_band", "0"): "no imitation term (the default)",
    ("simulator.seed_replay_gain", "0"): "replayed seeds picked nearest alpha itself (the default)",
    ("curriculum.alpha", "0"): "a target success rate of 0",
    ("curriculum.target_gain", "0"): "R_env aims at alpha itself (the default)",
    ("curriculum.target_memory", "0"): "the target moves by the epoch's own error alone (the default)",
    ("curriculum.k_min", "0"): "no p-hat floor (tests/shrunk.py uses it)",
    ("curriculum.band", "0"): "keep only p-hat == alpha (documented)",
    ("data.num_val", "0"): "all held-out tasks (documented)",
    ("data.num_train", "0"): "every base task (documented)",
    ("data.num_held_out", "0"): "the split's held-out tasks alone (documented)",
    ("data.num_val_subset", "0"): "the whole validation set every epoch (documented)",
    ("data.replay_per_epoch", "0"): "no replay",
    ("data.generated_fraction", "0"): "base tasks only in the agent's batch",
    ("trainer.gradient_clip_val", "0"): "no clipping, as in Lightning (documented)",
    ("trainer.num_sanity_val_steps", "0"): "no sanity check (the default)",
    ("trainer.num_sanity_val_steps", "-1"): "Lightning's 'all batches' (documented)",
    ("logger.num_text_samples", "0"): "no text samples logged",
    ("trainer.save_hf_every_n_epochs", "0"): "no checkpoints during the run (documented)",
    ("simulator.reward_unsolved", "0"): "Absolute Zero's reward for a task never solved",
    ("simulator.reward_unsolved", "-1"): "a penalty for a task never solved",
    ("simulator.reward_solved", "0"): "Absolute Zero's reward for a task always solved",
    ("simulator.reward_solved", "-1"): "a penalty for a task always solved",
    ("simulator.reward_invalid", "0"): "the paper's reward of an invalid generation (the default)",
    ("simulator.reward_invalid", "-1"): "Absolute Zero's penalty for a malformed proposal",
    ("simulator.near_duplicate_penalty", "0"): "no penalty (the default)",
    ("solver.d0", "0"): "a difficulty scale may put its midpoint at 0",
    ("solver.d0", "-1"): "or below it",
    ("solver.d0_step", "0"): "a fixed target (the default)",
    ("solver.d0_step", "-1"): "a target that gets easier each epoch",
    ("solver.measure_rounds", "0"): "no measurement (the default)",
    ("solver.select_last", "0"): "the state after the last update (the default)",
}


def _numeric(tp) -> type | None:
    """``int`` or ``float`` for a numeric key (``Optional`` ones included), else None."""
    if tp in (int, float):
        return tp
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    return args[0] if typing.get_origin(tp) is typing.Union and len(args) == 1 and args[0] in (int, float) else None


NUMERIC = [(k.name, _numeric(k.type)) for k in schema_keys(Config) if _numeric(k.type)]
CASES = [(key, name, yaml) for key, tp in NUMERIC for name, yaml in [*PROBES.items(), ("huge", HUGE[tp])]]


def test_the_walk_covers_every_numeric_key():
    assert len(NUMERIC) == 85 and len(CASES) == 5 * 85
    print(f"{len(NUMERIC)} numeric keys, {len(CASES)} values tried, {len(VALID)} valid by the allow-list")
    assert set(VALID) <= {(key, name) for key, name, _ in CASES}  # no stale entry


@pytest.mark.parametrize("key,probe,yaml", CASES, ids=[f"{k}={p}" for k, p, _ in CASES])
def test_every_numeric_key_refuses_out_of_range_values(key, probe, yaml):
    if (key, probe) in VALID:
        compose([f"{key}={yaml}"])
        return
    with pytest.raises(ConfigError) as e:
        compose([f"{key}={yaml}"])
    message = str(e.value)
    assert message.startswith(f"{key}=") and "\n" not in message, message


def test_a_seed_too_large_for_the_epoch_seeds_is_refused():
    """Each epoch is seeded with ``seed x 1000003 + epoch``, which Lightning refuses above 2^32 - 1
    (it raised at the first epoch's start, after the models loaded)."""
    assert compose(["seed=4294"]).seed == 4294
    with pytest.raises(ConfigError, match=r"seed=4295 must be in \[0, 4294\]"):
        compose(["seed=4295"])
