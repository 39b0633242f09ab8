"""lightning_genenv.jsonl: the one JSON Lines reader, lenient (bad lines skipped and counted) and strict (an
error naming the file and the lines)."""

import gzip
from collections import Counter

import pytest

from lightning_genenv.jsonl import (
    MAX_LINE_CHARS,
    DataError,
    Skipped,
    iter_jsonl,
    numbered_objects,
    read_jsonl_lenient,
    read_jsonl_strict,
)


@pytest.fixture
def mixed(tmp_path):
    path = tmp_path / "d_env.jsonl"
    path.write_text("\n".join(['{"a": 1}', "", "{torn", "[1, 2]", '{"b": 2}', '{"c": "' + "x" * MAX_LINE_CHARS + '"}',
                               "null"]) + "\n")
    return path


def test_lenient_skips_and_counts_by_reason(mixed):
    records, skipped = read_jsonl_lenient(mixed)
    assert records == [{"a": 1}, {"b": 2}]
    assert isinstance(skipped, Skipped) and sum(skipped.values()) == 4
    assert skipped == Counter(not_json=1, not_an_object=2, line_too_long=1)
    assert skipped.places["not_an_object"] == [(str(mixed), 4), (str(mixed), 7)]
    assert [n for n, _ in numbered_objects(mixed, Counter())] == [1, 5]
    plain = Counter()
    assert list(iter_jsonl(mixed, plain)) == records and sum(plain.values()) == 4


def test_strict_names_the_file_and_the_lines(mixed, tmp_path):
    with pytest.raises(DataError) as e:
        read_jsonl_strict(mixed)
    assert str(e.value).startswith(f"{mixed}: ") and "1 not_json (line 3)" in str(e.value)
    assert "2 not_an_object (lines 4, 7)" in str(e.value)
    good = tmp_path / "good.jsonl"
    good.write_text('{"a": 1}\n\n{"a": 2}\n')
    assert read_jsonl_strict(good) == [{"a": 1}, {"a": 2}]


def test_a_missing_file_is_one_line(tmp_path):
    with pytest.raises(FileNotFoundError, match="cannot read data file .*missing.jsonl"):
        read_jsonl_lenient(tmp_path / "missing.jsonl")


def test_a_gzip_file_reads_as_its_text_and_a_damaged_one_is_named(mixed, tmp_path):
    packed = tmp_path / "d_env.jsonl.gz"
    packed.write_bytes(gzip.compress(mixed.read_bytes()))
    assert read_jsonl_lenient(packed)[0] == read_jsonl_lenient(mixed)[0] == [{"a": 1}, {"b": 2}]
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(packed.read_bytes()[:-12])  # cut short: no end of stream
    with pytest.raises(DataError, match=f"{cut}: not a readable gzip file"):
        read_jsonl_lenient(cut)
    plain = tmp_path / "plain.jsonl.gz"
    plain.write_text('{"a": 1}\n')  # not gzip at all
    with pytest.raises(DataError, match="not a readable gzip file"):
        read_jsonl_strict(plain)
