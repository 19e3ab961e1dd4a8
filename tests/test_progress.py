"""Progress: plain lines off a terminal (exactly the lines given), a bar with counts, rate and ETA on one."""

from __future__ import annotations

import io
import re

import pytest

from kerneljudge.core.progress import Progress, choose_mode, counted


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_counted_lines():
    assert counted("[3/40] level1/19_ReLU <- x.py: correct 1.20x") == (3, 40)
    assert counted("[  12.3s] [7/624] level1/1 eager on cuda:0: 1.2 ms") == (7, 624)
    assert counted("[error] level1/1 s0 t0: judge failed") is None
    assert counted("resuming: 3 verdict(s) already in out.jsonl, 5 to judge") is None


def test_plain_mode_prints_each_line_as_it_is(monkeypatch):
    monkeypatch.delenv("KERNELJUDGE_PROGRESS", raising=False)
    out = io.StringIO()  # not a terminal
    progress = Progress(stream=out)
    assert progress.mode == "plain"
    lines = ["resuming: 1 verdict(s) already in log, 2 to judge", "[1/2] a <- a.py: correct 1.10x",
             "[2/2] b <- b.py: wrong_output - differs"]
    for line in lines:
        progress.callback(line)
    progress.advance("extra item")
    progress.close()
    assert out.getvalue() == "".join(line + "\n" for line in lines) + "extra item\n"
    assert (progress.done, progress.total) == (3, 2)


def test_stream_adapter_splits_lines(monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_PROGRESS", "plain")
    out = io.StringIO()
    progress = Progress(stream=Terminal())
    progress.out = out
    stream = progress.as_stream()
    print("[  1.0s] [1/3] p1 eager", file=stream, flush=True)
    stream.write("[  2.0s] [2/3] p2 ")
    assert progress.done == 1
    stream.write("eager\n[  3.0s] nothing left\n")
    assert progress.done == 2
    assert out.getvalue().splitlines() == ["[  1.0s] [1/3] p1 eager", "[  2.0s] [2/3] p2 eager",
                                           "[  3.0s] nothing left"]


def test_bar_on_a_terminal_shows_count_rate_and_eta(monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.delenv("KERNELJUDGE_PROGRESS", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    term = Terminal()
    assert choose_mode(term) == "bar" and choose_mode(io.StringIO()) == "plain"
    with Progress(stream=term, desc="judging") as progress:
        assert progress.mode == "bar"
        progress.callback("resuming: 1 already done")
        progress.callback("[1/4] level1/1 <- s.py: correct")
        progress.callback("[2/4] level1/2 <- s.py: build_error")
    screen = term.getvalue()
    assert "[1/4] level1/1 <- s.py: correct" in screen and "resuming: 1 already done" in screen
    assert re.search(r"judging:\s+50%.*\| 2/4 \[\d\d:\d\d<\d\d:\d\d,\s+[\d.?]+\s*(item/s|s/item)", screen), screen


def test_environment_forces_plain(monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_PROGRESS", "plain")
    assert choose_mode(Terminal()) == "plain"
    monkeypatch.setenv("KERNELJUDGE_PROGRESS", "")
    monkeypatch.setenv("TERM", "dumb")
    assert choose_mode(Terminal()) == "plain"


def test_start_and_advance(monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setenv("KERNELJUDGE_PROGRESS", "bar")
    term = Terminal()
    progress = Progress(total=3, stream=term, unit="solution")
    progress.advance("one")
    progress.advance("two")
    progress.close()
    assert "one\n" in term.getvalue() and "2/3" in term.getvalue() and "solution" in term.getvalue()
