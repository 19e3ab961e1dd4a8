"""Ending a child process and everything it started: every child leads its own process group, so one
signal to the group reaches its whole tree and nothing outside it."""

from __future__ import annotations

import os
import signal
import subprocess
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
