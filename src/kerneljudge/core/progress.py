"""Progress of long commands on stderr: a bar with counts, rate and ETA on a terminal (tqdm, when it is
installed), and the plain one-line-per-item log otherwise (a file, a pipe, CI, or no tqdm).

    progress = Progress(desc="judging")
    progress.start(total)              # or Progress(total=...)
    progress.advance("[3/40] level1/19_ReLU <- ...: correct 1.2x")   # one item done; the line is kept
    progress.note("resuming: ...")      # a line that is not an item
    progress.close()

The per-item lines the batch runner, bench and the baseline runner already print ("[i/N] ...", the
baseline runner's prefixed with "[  12.3s] ") can drive it as they are: pass `progress.callback` where
a `say(line)` function is taken, or `progress.as_stream()` where a text stream is. In plain mode every
line is printed exactly as before. KERNELJUDGE_PROGRESS=plain|bar overrides the choice.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from typing import Any, Optional, TextIO

_COUNTED = re.compile(r"^(?:\[\s*[\d.]+s\]\s*)?\[(\d+)/(\d+)\]")


def counted(line: str) -> Optional[tuple[int, int]]:
    """(done, total) of an "[i/N] ..." item line (optionally after a "[  12.3s] " prefix), else None."""
    m = _COUNTED.match(line)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _tqdm() -> Any:
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


def choose_mode(stream: TextIO, mode: str = "auto") -> str:
    """'bar' or 'plain': bar only on a terminal (not TERM=dumb) with tqdm installed, unless overridden."""
    forced = os.environ.get("KERNELJUDGE_PROGRESS", "").strip().lower()
    mode = forced if forced in ("bar", "plain") else mode
    if mode == "plain":
        return "plain"
    if _tqdm() is None:
        return "plain"
    if mode == "bar":
        return "bar"
    isatty = getattr(stream, "isatty", None)
    terminal = bool(isatty and isatty()) and os.environ.get("TERM", "") != "dumb"
    return "bar" if terminal else "plain"


class Progress:
    """A progress reporter (thread-safe); see the module docstring."""

    def __init__(self, total: Optional[int] = None, *, desc: str = "", unit: str = "item",
                 stream: Optional[TextIO] = None, mode: str = "auto"):
        self.out = stream if stream is not None else sys.stderr
        self.mode = choose_mode(self.out, mode)
        self.desc, self.unit = desc, unit
        self.done = 0
        self.total = total
        self._bar: Any = None
        self._started = time.time()      # a bar made at the first item line still counts from here
        self._lock = threading.Lock()
        if total is not None:
            self.start(total)

    # -- the interface

    def start(self, total: Optional[int]) -> None:
        """Begin (or restart the count of) a run of `total` items."""
        with self._lock:
            self.total, self.done = total, 0
            self._started = time.time()
            if self.mode == "bar":
                if self._bar is not None:
                    self._bar.close()
                self._bar = self._new_bar(total)

    def advance(self, line: Optional[str] = None, n: int = 1) -> None:
        """n more items are done; `line` (if any) is printed above the bar, or alone in plain mode."""
        with self._lock:
            self.done += n
            self._write(line)
            if self._bar is not None:
                self._bar.update(n)

    def note(self, line: str) -> None:
        """A message that is not an item (resuming, warnings)."""
        with self._lock:
            self._write(line)

    def close(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None

    # -- adapters for code that prints its own "[i/N] ..." lines

    def callback(self, line: str) -> None:
        """A say(line) function: "[i/N] ..." lines set the count to i of N, anything else is a note."""
        count = counted(line)
        if count is None:
            self.note(line)
            return
        done, total = count
        with self._lock:
            if self.mode == "bar" and self._bar is None:
                self._bar = self._new_bar(total)
            elif self._bar is not None and self._bar.total != total:
                self._bar.total = total
                self._bar.refresh()
            self.total = total
            step = max(0, done - self.done)
            self.done = max(self.done, done)
            self._write(line)
            if self._bar is not None and step:
                self._bar.update(step)

    def as_stream(self) -> "LineStream":
        """A write-only text stream whose complete lines go to callback()."""
        return LineStream(self)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- internals

    def _new_bar(self, total: Optional[int]) -> Any:
        bar = _tqdm()(total=total, desc=self.desc or None, unit=self.unit, file=self.out, dynamic_ncols=True,
                      smoothing=0.1, leave=True)
        bar.start_t = bar.last_print_t = self._started  # rate and ETA over the whole run, not from this line
        return bar

    def _write(self, line: Optional[str]) -> None:
        if line is None:
            return
        if self._bar is not None:
            self._bar.write(line, file=self.out)
        else:
            print(line, file=self.out, flush=True)


class LineStream:
    """What print(..., file=...) needs: write() and flush(); each complete line goes to Progress.callback."""

    def __init__(self, progress: Progress):
        self.progress = progress
        self._buf = ""

    def write(self, text: str) -> int:
        self._buf += text
        while "\n" in self._buf:
            line, self._buf = self._buf.split("\n", 1)
            self.progress.callback(line)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


__all__ = ["Progress", "LineStream", "counted", "choose_mode"]
