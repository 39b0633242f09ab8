"""CI's skip allow-list (``.ci/check_skips.py``, ``.ci/expected_skips.txt``): a skip that is not listed with its
reason fails CI, and every listed skip names a test and a reason that its file gives."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("check_skips", ROOT / ".ci" / "check_skips.py")
check_skips = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_skips)

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="3">
<testcase classname="tests.test_loggers" name="test_mlflow_logger_writes_metrics_to_a_local_store">
  <skipped type="pytest.skip" message="mlflow is not installed (pip install 'lightning_genenv[mlflow]')"/></testcase>
<testcase classname="tests.benchmarks.test_benchmarks" name="test_evaluate_end_to_end_tiny[bamboogle]">
  <skipped type="pytest.skip" message="shared benchmark data not found at /x/shared/benchmarks"/></testcase>
<testcase classname="tests.test_policy" name="test_is_peft_tells_a_lora_model_from_a_plain_one"/>
</testsuite></testsuites>"""


def test_an_unlisted_skip_fails_and_a_listed_one_passes(tmp_path, capsys):
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT)
    allow = ROOT / ".ci" / "expected_skips.txt"
    count, skips = check_skips.skipped_tests(junit)
    assert count == 3 and [t for t, _ in skips] == [
        "tests.test_loggers.test_mlflow_logger_writes_metrics_to_a_local_store",
        "tests.benchmarks.test_benchmarks.test_evaluate_end_to_end_tiny[bamboogle]"]
    assert check_skips.unexpected(skips, check_skips.read_allow_list(allow)) == [skips[1]]
    assert check_skips.main([str(junit), str(allow)]) == 1
    assert "UNEXPECTED tests.benchmarks.test_benchmarks.test_evaluate_end_to_end_tiny" in capsys.readouterr().out
    junit.write_text(JUNIT.replace("shared benchmark data not found", "mlflow is not installed"))
    assert check_skips.main([str(junit), str(allow)]) == 1  # the right reason on the wrong test
    only_listed = JUNIT.split("<testcase classname=\"tests.benchmarks")[0] + "</testsuite></testsuites>"
    junit.write_text(only_listed)
    assert check_skips.main([str(junit), str(allow)]) == 0
    junit.write_text('<testsuites><testsuite name="pytest" tests="0"/></testsuites>')
    assert check_skips.main([str(junit), str(allow)]) == 1  # no test ran at all


def test_every_listed_skip_names_a_test_and_the_reason_its_file_gives():
    for pattern, reason in check_skips.read_allow_list(ROOT / ".ci" / "expected_skips.txt"):
        module, _, name = pattern.rpartition(".")
        source = (ROOT / (module.replace(".", "/") + ".py")).read_text()
        assert f"def {name}(" in source and reason in source, pattern


def test_a_malformed_line_is_refused(tmp_path):
    bad = tmp_path / "skips.txt"
    bad.write_text("tests.test_x.test_y\n")
    with pytest.raises(ValueError, match="expected 'test pattern | reason'"):
        check_skips.read_allow_list(bad)
