"""bench/phase_times.py on hand-made run directories: phases summed over the run, the wall ratio to the first
run, every value in order with --per-epoch, and a run without time/* scalars named as an error."""

import json
from pathlib import Path

from torch.utils.tensorboard import SummaryWriter

from tests.bench_scripts import load_bench_script

phase_times = load_bench_script("phase_times")


def _run(root: Path, validation: list[float], update: list[float], wall: float | None) -> Path:
    root.mkdir(parents=True)
    (root / "config.yaml").write_text("seed: 0\n")
    if wall is not None:
        (root / "summary.json").write_text(json.dumps({"wall_time_s": wall}))
    with SummaryWriter(str(root / "tb" / "agent")) as w:
        for step, v in enumerate(validation):
            w.add_scalar("time/validation", v, step * 8)
        for step, v in enumerate(update):
            w.add_scalar("time/agent_update", v, step * 8 + 7)
        w.add_scalar("agent/loss", 0.5, 7)
    return root


def test_phases_are_summed_and_the_wall_ratio_is_to_the_first_run(tmp_path, capsys):
    a = _run(tmp_path / "before", [300.0, 60.0, 320.0], [70.0, 80.0], wall=1000.0)
    b = _run(tmp_path / "after", [290.0, 310.0], [75.0, 75.0], wall=750.0)
    series, wall = phase_times.phase_series(a)
    assert series == {"validation": [300.0, 60.0, 320.0], "agent_update": [70.0, 80.0]} and wall == 1000.0
    assert phase_times.main([str(a), str(b), "--per-epoch", "--json", str(tmp_path / "t.json")]) == 0
    out = capsys.readouterr().out
    assert "| validation | 680 | 600 |" in out and "| agent_update | 150 | 150 |" in out
    assert "| phases' total | 830 | 750 |" in out and "| wall / first | 1.00x | 0.75x |" in out
    assert out.index("| validation |") < out.index("| agent_update |")  # largest first
    assert "| validation | 300, 60, 320 |" in out
    saved = json.loads((tmp_path / "t.json").read_text())
    assert saved["after"] == {"phases": {"validation": [290.0, 310.0], "agent_update": [75.0, 75.0]},
                              "wall_time_s": 750.0}


def test_missing_summary_leaves_the_wall_blank_and_no_timings_is_an_error(tmp_path, capsys):
    a = _run(tmp_path / "a", [10.0], [5.0], wall=None)
    assert phase_times.main([str(a)]) == 0
    assert "| wall_time_s |  |" in capsys.readouterr().out
    empty = _run(tmp_path / "empty", [], [], wall=1.0)
    assert phase_times.main([str(empty)]) == 2
    assert "no time/* scalars" in capsys.readouterr().err
