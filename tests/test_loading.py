"""Child-side loading (worker/loading.py): a problem's text handed to a boxed process instead of its file, and
the compatibility names kernel libraries need."""

from __future__ import annotations

import inspect
import sys

import pytest

from kerneljudge.core.problem import ProblemError, problem_text, read_problem
from kerneljudge.worker import loading


def test_a_module_loaded_from_its_text_never_reads_the_file(tmp_path):
    path = tmp_path / "gone.py"                           # never written: only its text is given
    source = "def f():\n    return 41 + 1\n\nVALUE = 3\n"
    module = loading.load_module(str(path), {"VALUE": 5}, source)
    assert module.f() == 42 and module.VALUE == 5 and module.__file__ == str(path)
    assert module.__name__ in sys.modules
    assert "return 41 + 1" in inspect.getsource(module.f)  # Triton-style source lookups still work


def test_library_shims_put_back_numpys_row_stack_alias(monkeypatch):
    import numpy

    monkeypatch.delattr(numpy, "row_stack", raising=False)
    loading.library_shims()
    assert numpy.row_stack is numpy.vstack


def test_problem_text_refuses_a_file_changed_since_it_was_read(tmp_path):
    path = tmp_path / "p.py"
    path.write_text(PROBLEM_TEXT)
    problem = read_problem(path)
    assert problem_text(problem) == PROBLEM_TEXT
    path.write_text(PROBLEM_TEXT + "\n# changed\n")
    with pytest.raises(ProblemError, match="changed"):
        problem_text(problem)


PROBLEM_TEXT = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.rand(4)]


def get_init_inputs():
    return []
"""
