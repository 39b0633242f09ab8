"""What the prompt's shown task does to the next epoch (lightning_genenv/report/calibrated_prompt.py): the epoch
transitions read from task lines, and the within-run regression on a case whose answer is known."""

import math

import pytest

from lightning_genenv.report.calibrated_prompt import shown_task_slope, transitions


def _task(epoch, d, k):
    return {"epoch": epoch, "d": d, "k": k, "n": 8}


def test_transitions_pair_each_epoch_with_the_solved_task_its_prompts_showed():
    tasks = [_task(0, 4.0, 0), _task(0, None, 3), _task(0, 3.0, 2), _task(0, 5.0, 1),  # first solved: unrated
             _task(1, 2.0, 5), _task(1, 4.0, 0), _task(1, None, 0),
             _task(2, 3.0, 8), _task(2, 5.0, 1),
             _task(4, 6.0, 1)]  # epoch 3 wrote nothing valid: no pair for epoch 4
    # epoch 1 follows an epoch whose first solved task has no d: skipped; epoch 2 shows epoch 1's first solved (d 2)
    assert transitions(tasks) == [(4.0, 3.0, 2.0)]
    assert transitions([_task(0, 3.0, 0), _task(1, 3.0, 4)]) == []  # nothing solved: nothing shown


def test_the_slope_recovers_the_shown_tasks_weight_beyond_where_the_run_was():
    # next = 0.5 previous + 0.3 shown + a run's own level, exactly: the regression returns 0.3 with no error
    def run(level, pairs):
        return [(0.5 * p + 0.3 * s + level, p, s) for p, s in pairs]

    runs = [run(1.0, [(2, 1), (3, 5), (4, 2), (2.5, 4)]), run(-2.0, [(5, 3), (6, 6), (4, 1)]), run(0.0, [(1, 1)])]
    coef, se, n, m = shown_task_slope(runs)
    assert coef == pytest.approx(0.3) and se == pytest.approx(0.0, abs=1e-9)
    assert (n, m) == (7, 2)  # the run with one transition is left out
    noisy = [[(y + e, p, s) for (y, p, s), e in zip(r, (0.1, -0.1, 0.1, -0.1))] for r in runs[:2]]
    coef, se, _, _ = shown_task_slope(noisy)
    assert se > 0 and math.isfinite(coef) and abs(coef - 0.3) < 0.2
    with pytest.raises(ValueError, match="no run with 3 or more"):
        shown_task_slope([runs[2]])
