"""Epochs without a valid generated task: the warning with the rejections, the console line once the
streak reaches the limit, the reset, the streak through a checkpoint."""

import json
from collections import Counter

from lightning_genenv.coevolution.empty_epochs import EmptyEpochs, reasons_text


def test_reasons_text_most_frequent_first_then_by_name():
    assert reasons_text(Counter({"unknown_tool": 2, "not_json": 5, "copy_of_seed": 2})) == \
        "not_json 5, copy_of_seed 2, unknown_tool 2"
    assert reasons_text(Counter()) == ""


def test_an_empty_epoch_warns_and_the_streak_reaches_the_console():
    """Epochs 4 and 5 (0-based) are the console's epochs 5 and 6."""
    empty = EmptyEpochs(limit=2)
    warning, console = empty.observe(4, written=3, valid=0, reasons=Counter({"not_json": 2, "unknown_tool": 1}))
    assert warning == ("epoch 5: none of the simulator's 3 generated tasks was valid (rejected: not_json 2, "
                       "unknown_tool 1); the agent trains on replayed and base tasks only this epoch")
    assert console is None and empty.streak == 1
    warning, console = empty.observe(5, written=2, valid=0, reasons=Counter({"unknown_tool": 2}))
    assert warning.startswith("epoch 6: none of the simulator's 2 generated tasks was valid (rejected: unknown_tool 2)")
    assert console == ("WARNING: 2 epochs in a row (epochs 5-6) without a single valid generated task: the run is "
                       "plain GRPO on the base set. The simulator's rejections over them: unknown_tool 3, not_json 2 "
                       "(sim/invalid/* in the logs; curriculum.max_empty_epochs_warning=2)")


def test_a_valid_task_or_no_generation_resets_the_streak():
    empty = EmptyEpochs(limit=1)
    empty.observe(0, written=3, valid=0, reasons=Counter({"not_json": 3}))
    assert empty.observe(1, written=3, valid=1, reasons=Counter({"not_json": 2})) == (None, None)
    assert (empty.streak, empty.reasons) == (0, Counter())
    empty.observe(2, written=3, valid=0, reasons=Counter({"not_json": 3}))
    assert empty.observe(3, written=0, valid=0, reasons=Counter()) == (None, None)  # no simulator: not empty
    assert empty.streak == 0
    warning, _ = empty.observe(4, written=1, valid=0, reasons=Counter())
    assert "(rejected: no reason recorded)" in warning


def test_the_streak_survives_a_checkpoint():
    empty = EmptyEpochs(limit=3)
    empty.observe(0, written=2, valid=0, reasons=Counter({"not_json": 2}))
    empty.observe(1, written=2, valid=0, reasons=Counter({"missing_call": 1}))
    restored = EmptyEpochs(limit=3)
    restored.load_state_dict(json.loads(json.dumps(empty.state_dict())))
    assert (restored.streak, restored.reasons) == (2, Counter({"not_json": 2, "missing_call": 1}))
    restored.load_state_dict(None)  # a checkpoint from before the counter
    assert (restored.streak, restored.reasons) == (0, Counter())
