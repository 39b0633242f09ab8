"""Every figure the documents state agrees with the archived data it is computed from (``report.claims``).

The first test is the check itself: each claim recomputed from ``docs/results`` equals what README.md, RESULTS.md,
BENCHMARKS.md and EVALUATION.md print. The others show that the check can fail: one archived per-task reward
changed in a copy of the data, or one figure changed in a copy of a document, is reported.
"""

import json
import shutil

import pytest

from lightning_genenv.report.claim import close
from lightning_genenv.report.claims import CLAIMS, ROOT, RUNS, Claim, check_all
from lightning_genenv.report.stats import t975, t_quantile


def test_every_stated_figure_agrees_with_its_data():
    problems = check_all()
    assert not problems, "\n".join(problems)


def test_claims_name_distinct_figures_and_say_where_they_stand():
    names = [c.name for c in CLAIMS]
    assert len(names) == len(set(names))
    assert all(c.where for c in CLAIMS)
    assert any(not c.archived for c in CLAIMS) and any(c.archived for c in CLAIMS)


def _copy_for(tmp_path, runs: list[str], docs: list[str]):
    """A repository root in ``tmp_path`` holding ``runs``' validation files and ``docs``."""
    for run in runs:
        shutil.copytree(ROOT / RUNS / run / "validation", tmp_path / RUNS / run / "validation")
    for doc in docs:
        shutil.copy(ROOT / doc, tmp_path / doc)
    return tmp_path


def _static_minus_grpo() -> Claim:
    return next(c for c in CLAIMS if c.name == "default regime, Static − GRPO, 3 pairs")


def test_a_changed_archived_number_is_reported(tmp_path):
    claim = _static_minus_grpo()
    root = _copy_for(tmp_path, [f"def-{a}-s{s}" for a in ("static", "grpo") for s in range(3)], ["RESULTS.md"])
    assert claim.check(root) == []
    end = root / RUNS / "def-static-s2" / "validation" / "epoch-5.jsonl"
    records = [json.loads(line) for line in end.read_text(encoding="utf-8").splitlines()]
    records[0]["sampled_rewards"] = [1.0] * len(records[0]["sampled_rewards"])  # one task's rewards, all solved
    end.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    problems = claim.check(root)
    assert len(problems) == 1 and "the data give" in problems[0], problems


def test_a_changed_figure_in_a_document_is_reported(tmp_path):
    claim = _static_minus_grpo()
    root = _copy_for(tmp_path, [f"def-{a}-s{s}" for a in ("static", "grpo") for s in range(3)], ["RESULTS.md"])
    doc = root / "RESULTS.md"
    doc.write_text(doc.read_text(encoding="utf-8").replace(claim.value, "−0.020 [−0.094, +0.055]"), encoding="utf-8")
    problems = claim.check(root)
    assert problems and all("does not state" in p for p in problems), problems


def test_a_not_archived_claim_allows_the_rounding_of_its_recorded_values_only():
    claim = next(c for c in CLAIMS if c.name == "scarce regime, Static − GRPO, 3 pairs")
    assert not claim.archived
    assert close(claim.compute(ROOT), claim.value)
    assert not close(claim.compute(ROOT), "+0.040 [+0.010, +0.066]")


@pytest.mark.parametrize("df", [1, 2, 3, 4, 8, 30])
def test_t_quantile_matches_the_95_percent_table(df):
    assert t_quantile(0.95, df) == pytest.approx(t975(df), abs=6e-4)


def test_the_coevolution_figure_is_drawn_from_the_archived_runs(tmp_path):
    from lightning_genenv.report.standing_figures import coevolution_figure

    path = coevolution_figure(ROOT, tmp_path / "coevolution.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
