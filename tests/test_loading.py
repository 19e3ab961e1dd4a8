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


def test_the_solution_process_names_the_threads_it_left_running(monkeypatch):
    import os
    import threading

    from kerneljudge.core import channel
    from kerneljudge.worker import solution

    monkeypatch.setattr(solution.S, "threads_at_start", {t.ident for t in threading.enumerate()})
    monkeypatch.setattr(solution, "_integrity_flags", lambda: ["thread_alive"])
    stop = threading.Event()

    def library_pool_worker():
        stop.wait(5)
    worker = threading.Thread(target=library_pool_worker, name="compile-pool-0")
    worker.start()
    read, write = os.pipe()
    try:
        solution.handle_threads({"cmd": "threads"}, write)
        reply, _ = channel.recv(read, 5)
    finally:
        stop.set()
        worker.join(5)
        os.close(read)
        os.close(write)
    assert reply["threads"] == [
        "compile-pool-0 (tests.test_loading.test_the_solution_process_names_the_threads_it_left_running."
        "<locals>.library_pool_worker)"]


def test_library_shims_stop_tqdm_starting_its_monitor_thread(monkeypatch):
    import threading

    tqdm = pytest.importorskip("tqdm")
    monkeypatch.setattr(tqdm.tqdm, "monitor_interval", 10)
    monkeypatch.setattr(tqdm.tqdm, "monitor", None)
    before = {t.ident for t in threading.enumerate()}
    loading.library_shims()
    tqdm.tqdm(total=3, disable=True)   # what torch.fx's interpreter makes whenever it runs a graph
    assert [t.name for t in threading.enumerate() if t.ident not in before] == []
