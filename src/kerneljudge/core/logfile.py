"""Appending to a JSONL log so that a crash loses nothing: one line per object, flushed and fsynced.

A process killed mid-write leaves a torn last line. Readers skip it (jsonl.read_objects); before this
writer appends, it ends that torn line, so the next object starts on a line of its own instead of being
glued to the fragment (and lost with it).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Iterable


class AppendLog:
    """A JSONL file opened for appending by one process; thread-safe."""

    def __init__(self, path: str | os.PathLike, mode: int = 0o644):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
        self._file = os.fdopen(fd, "a", encoding="utf-8")
        if _ends_torn(self.path):
            self._file.write("\n")
            self._sync()

    def append(self, row: dict[str, Any]) -> None:
        self.extend([row])

    def extend(self, rows: Iterable[dict[str, Any]]) -> None:
        """Write rows as lines, then fsync once: all of them are on disk when this returns."""
        text = "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows)
        if not text:
            return
        with self._lock:
            self._file.write(text)
            self._sync()

    def _sync(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.close()

    def __enter__(self) -> "AppendLog":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _ends_torn(path: Path) -> bool:
    """Whether the file's last byte is something other than a newline (a line cut short by a crash)."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() == 0:
                return False
            f.seek(-1, os.SEEK_END)
            return f.read(1) != b"\n"
    except OSError:
        return False
