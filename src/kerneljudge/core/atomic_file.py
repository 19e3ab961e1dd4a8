"""Whole or not at all: a file is written under a temporary name in its own folder, then moved over its final
name, so a reader (another judge process sharing a cache, a report open in a browser) never sees half of it, and
a crash mid-write leaves the old file. The temporary name is unique per writer, so two processes writing the same
file at once each move a whole file in (the last one wins).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from typing import Any


def write_text(path: str | os.PathLike, text: str, fsync: bool = False) -> None:
    """Write `text` to `path` (UTF-8), creating its folder; `fsync` also flushes it to disk before the move."""
    path = os.fspath(path)
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise


def write_json(path: str | os.PathLike, data: Any, fsync: bool = False, **dump_options: Any) -> None:
    """json.dumps(data, **dump_options) written whole to `path`."""
    write_text(path, json.dumps(data, **dump_options), fsync=fsync)
