"""lightning_genenv.atomic: a file is replaced whole or not at all."""

import os

import pytest

from lightning_genenv.atomic import atomic_writer, fsync_dir, fsync_file, write_atomic, write_durable


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("old: 1\n")
    with pytest.raises(RuntimeError):
        with atomic_writer(path) as f:
            f.write("new: ")
            raise RuntimeError("killed mid-write")
    assert path.read_text() == "old: 1\n" and sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml"]
    with atomic_writer(path) as f:
        f.write("new: 2\n")
    assert path.read_text() == "new: 2\n" and sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml"]


def test_bytes_and_the_usual_permissions(tmp_path):
    path = tmp_path / "events.bin"
    with atomic_writer(path, binary=True) as f:
        f.write(b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01"
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600


def test_write_atomic_and_write_durable(tmp_path):
    path = tmp_path / "manifest.json"
    write_atomic(path, b'{"version": 1}')
    assert path.read_bytes() == b'{"version": 1}' and [p.name for p in tmp_path.iterdir()] == ["manifest.json"]
    log = tmp_path / "d_env.jsonl"
    write_durable(log, b"a\n")
    write_durable(log, b"b\n", append=True)
    assert log.read_bytes() == b"a\nb\n"
    write_durable(log, b"c\n")  # not appending: the file is replaced by the bytes
    assert log.read_bytes() == b"c\n"
    fsync_file(log)
    fsync_dir(tmp_path)
