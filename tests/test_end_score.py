"""A run of any length keeps its end score: with ``trainer.val_every_n_epochs`` at its default (6), runs of 1 and 3
epochs validate the whole set after their last epoch, and a 6-epoch run in its last epoch's own validation; either
way ``val/*`` and ``val_full/*`` have a point at step 0 and at the last epoch, the console's last epoch line shows the
end ``val/score``, and the report's first → last cell runs from epoch -1 to the last epoch."""

import json

import pytest

import train
from lightning_genenv.report.markdown import _first_last_cell
from lightning_genenv.report.runs import load_run
from tests.shrunk import TINY_ARGS

ARGS = [a for a in TINY_ARGS if not a.startswith(("trainer.max_epochs", "trainer.val_every_n_epochs"))]


SLOW = pytest.mark.slow


@pytest.mark.parametrize("epochs", [1, pytest.param(3, marks=SLOW), pytest.param(6, marks=SLOW)])
def test_the_end_score_is_logged_printed_and_reported(epochs, tiny_sft_dir, tmp_path, capsys):
    out = tmp_path / "run"
    train.main([f"model.agent={tiny_sft_dir}", f"model.simulator={tiny_sft_dir}", f"run_dir={out}", *ARGS,
                f"trainer.max_epochs={epochs}"])
    last = epochs - 1
    end_file = out / "validation" / ("end.jsonl" if epochs % 6 else f"epoch-{last}.jsonl")
    records = [json.loads(line) for line in end_file.read_text().splitlines()]
    subset = [r["score"] for r in records if r["in_subset"]]
    run = load_run(out)
    for tag, scores in (("val/score", subset), ("val_full/score", [r["score"] for r in records])):
        series = run.series(tag)
        assert sorted(series) == [-1, last], (tag, series)
        assert series[last] == pytest.approx(sum(scores) / len(scores), abs=1e-6), tag
        assert _first_last_cell([run], tag).endswith(f"(epochs 0→{epochs})")  # the console's count
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith(f"epoch {epochs}/{epochs} ")]
    assert len(lines) == 1 and f"val/score {run.series('val/score')[last]:.3f} " in lines[0], lines
    summary = json.loads((out / "summary.json").read_text())
    assert summary["held_out"]["end"]["score"] == pytest.approx(run.series("val_full/score")[last], abs=1e-6)
