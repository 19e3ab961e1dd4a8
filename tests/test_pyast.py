"""kerneljudge.core.pyast.parse: one parse at a time, whatever the threads (CPython 3.11's AST constructor keeps its
recursion depth per interpreter; two threads at once can fail with "AST constructor recursion depth
mismatch", which the service hit under 32 concurrent clients)."""

from __future__ import annotations

import ast
import threading
import time

from kerneljudge.core import pyast


def test_parses_never_overlap(monkeypatch):
    real_parse = ast.parse
    inside, most = [0], [0]
    guard = threading.Lock()

    def slow_parse(*args, **kwargs):
        with guard:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.002)  # long enough for another thread to arrive if nothing stops it
        try:
            return real_parse(*args, **kwargs)
        finally:
            with guard:
                inside[0] -= 1

    monkeypatch.setattr(ast, "parse", slow_parse)
    trees = []

    def work() -> None:
        for _ in range(20):
            trees.append(pyast.parse("x = [i * 2 for i in range(3)]\n"))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(trees) == 160 and all(isinstance(t, ast.Module) for t in trees)
    assert most[0] == 1


def test_parse_keeps_ast_parse_arguments():
    tree = pyast.parse("1 + 2", mode="eval")
    assert isinstance(tree, ast.Expression)
    try:
        pyast.parse("def (", filename="broken.py")
    except SyntaxError as exc:
        assert exc.filename == "broken.py"
    else:
        raise AssertionError("a syntax error must propagate")
