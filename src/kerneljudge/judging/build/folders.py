"""The folders boxed builds write, on disk: wiped when left unfinished, frozen read-only when finished, and their
markers written whole. Used by the build store (judging/build/store.py) and the .gch maker
(judging/build/pch_maker.py) alike; nothing here decides whether a folder is trusted.
"""

from __future__ import annotations

from kerneljudge.core import atomic_file
import contextlib
import os
import shutil
import stat
from typing import Any


def write_json(path: str, data: dict[str, Any]) -> None:
    """Whole or not at all: readers never see a half-written marker."""
    atomic_file.write_json(path, data)


def freeze(folder: str) -> None:
    """Make a finished build read-only, links left alone (never followed)."""
    for root, dirs, files in os.walk(folder, topdown=False, followlinks=False):
        for name in files + dirs:
            path = os.path.join(root, name)
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode):
                os.chmod(path, stat.S_IMODE(mode) & ~0o222)
    os.chmod(folder, stat.S_IMODE(os.lstat(folder).st_mode) & ~0o222)


def wipe(folder: str) -> None:
    """Remove a folder left by an unfinished or refused build, read-only parts included."""
    if os.path.islink(folder) or os.path.isfile(folder):
        os.unlink(folder)
        return
    if not os.path.isdir(folder):
        return
    for root, dirs, _ in os.walk(folder, followlinks=False):
        os.chmod(root, 0o700)
        for name in dirs:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, 0o700)
    shutil.rmtree(folder)


def remove(path: str) -> None:
    """Unlink a file that may not be there."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
