"""Start `kerneljudge serve` as a real child process for tests, find its port, stop or SIGKILL it.

A SIGKILLed service leaves its judge's children (each in its own session) behind; kill_hard() ends them
by the ids it recorded just before the kill, so a test never leaves work running on the machine.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

_LISTENING = re.compile(r"listening on (http://\S+)")


class Service:
    def __init__(self, journal: Path, *args: str, cache_dir: str, token_file: Path | None = None,
                 host: str = "127.0.0.1", timeout_s: float = 90.0, device: str = "cpu"):
        cmd = [sys.executable, "-m", "kerneljudge.service", "--host", host, "--port", "0", "--journal", str(journal),
               "--device", device, "--cache-dir", cache_dir, *args]
        if token_file is not None:
            cmd += ["--token-file", str(token_file)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.url: str | None = None
        self._found = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self._found.wait(timeout_s) or self.url is None:
            self.stop()
            raise RuntimeError("the service did not start:\n" + "".join(self.lines[-40:]))
        if host not in ("127.0.0.1", "localhost"):   # tests only ever talk to this machine
            self.url = re.sub(r"//[^:/]+|//\[[^\]]+\]", "//127.0.0.1", self.url, count=1)

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line)
            m = _LISTENING.search(line)
            if m and self.url is None:
                self.url = m.group(1).split(",")[0].rstrip(",")
                self._found.set()
        self._found.set()

    def stop(self, timeout_s: float = 30.0) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.kill_hard()
        return self.proc.returncode

    def kill_hard(self) -> None:
        """SIGKILL the service, then the process groups of everything it had started."""
        groups = descendants(self.proc.pid)
        self.proc.kill()
        self.proc.wait(10)
        for pid in groups:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.2)


def descendants(pid: int) -> list[int]:
    """Every process below pid, read from /proc (children first-level and deeper)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
