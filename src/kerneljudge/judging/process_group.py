"""A child process and everything it started: ending it (every child leads its own process group, so one
signal to the group reaches its whole tree and nothing outside it), and finding its descendants (the box's
launcher, init and worker: the worker is the process that holds device memory)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any


def kill_group(proc: Any, wait_s: float = 10.0) -> None:
    """SIGKILL the process group led by `proc` (a Popen, or anything with pid and wait) and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        pass


def process_tree(pid: int) -> list[int]:
    """`pid` and its live descendants, read from /proc (at most 4096)."""
    found, todo = [], [pid]
    while todo and len(found) < 4096:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                todo.extend(int(c) for c in task.read_text().split())
            except (OSError, ValueError):
                pass
    return found
