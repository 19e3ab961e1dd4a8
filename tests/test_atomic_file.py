"""core/atomic_file: a file is replaced whole or not at all."""

from __future__ import annotations

import json
import os

import pytest

from kerneljudge.core import atomic_file


def test_a_file_is_written_whole_and_no_temporary_is_left(tmp_path):
    target = tmp_path / "deeper" / "plan.json"
    atomic_file.write_json(target, {"a": 1}, indent=1)
    atomic_file.write_json(target, {"a": 2}, fsync=True)
    assert json.loads(target.read_text()) == {"a": 2}
    assert os.listdir(target.parent) == ["plan.json"]


def test_a_write_that_fails_leaves_the_old_file(tmp_path):
    target = tmp_path / "counts.json"
    atomic_file.write_text(target, "old")
    with pytest.raises(TypeError):
        atomic_file.write_json(target, {"not json": object()})
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["counts.json"]
