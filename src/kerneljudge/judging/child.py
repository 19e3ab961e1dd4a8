"""A child process in its own process group, talking over a private pipe pair.

The child's stdout and stderr are drained by a thread into a bounded buffer (a flood cannot fill memory
or block the child); the buffer is only ever shown to people as an excerpt, never parsed. Killing the
child kills its whole process group, so anything it spawned dies with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable

from kerneljudge.core import channel
from kerneljudge.judging.process_group import kill_group
from kerneljudge.judging.warm_start import Unavailable

OUTPUT_KEEP_BYTES = 64 << 10


class TailBuffer:
    """Keeps the first and the last bytes of a stream, counting what was dropped in between."""

    def __init__(self, keep: int = OUTPUT_KEEP_BYTES):
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.lock = threading.Lock()

    def feed(self, data: bytes) -> None:
        with self.lock:
            self.total += len(data)
            room = self.keep // 4 - len(self.head)
            if room > 0:
                self.head += data[:room]
                data = data[room:]
            self.tail += data
            if len(self.tail) > self.keep:
                del self.tail[: len(self.tail) - self.keep]

    def text(self, limit: int = 2000) -> str:
        with self.lock:
            dropped = self.total - len(self.head) - len(self.tail)
            body = bytes(self.head).decode(errors="replace")
            if dropped > 0:
                body += f"\n[... {dropped} bytes of output not kept ...]\n"
            body += bytes(self.tail).decode(errors="replace")
        return body if len(body) <= limit else "[...]" + body[-limit:]


class Child:
    """`wrap(module, args)`, when given, is the command line that runs the module with its two descriptor
    arguments (the box's launcher: sandbox.launch.argv); by default a plain `python -m module`.

    With `template` (judging/warm_start.py) the process is forked from that warm template instead, entering
    the box described by `spec` (sandbox.launch.make_spec; None: no box) the same way; if the template
    cannot serve, it is started cold. `warm` says which happened."""

    def __init__(self, module: str, env: dict[str, str], cwd: str | None = None,
                 wrap: Callable[[str, list[str]], list[str]] | None = None,
                 template: Any = None, spec: dict[str, Any] | None = None):
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        self.output = TailBuffer()
        self._close_lock = threading.Lock()
        self.warm = False
        self.proc: Any = None
        if template is not None:
            try:
                self.proc = template.spawn(module, env, cwd, spec, to_child_r, from_child_w)
                self.warm = True
            except Unavailable:
                pass
        if self.proc is None:
            args = [str(to_child_r), str(from_child_w)]
            self.proc = subprocess.Popen(
                wrap(module, args) if wrap is not None else [sys.executable, "-u", "-m", module, *args],
                pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True,
            )
        os.close(to_child_r)
        os.close(from_child_w)
        self._drain = threading.Thread(target=self._pump, daemon=True)
        self._drain.start()
        self.started = time.monotonic()

    def _pump(self) -> None:
        stream = self.proc.stdout
        while True:
            data = stream.read1(1 << 16) if hasattr(stream, "read1") else stream.read(1 << 16)
            if not data:
                return
            self.output.feed(data)

    def send(self, header: dict[str, Any]) -> None:
        channel.send(self._to_child, header)

    def recv(self, timeout: float, max_payload: int = 64 << 30) -> tuple[dict[str, Any], list[Any]]:
        return channel.recv(self._from_child, timeout=max(timeout, 0.001), max_payload=max_payload)

    def request(self, header: dict[str, Any], timeout: float, max_payload: int = 64 << 30):
        self.send(header)
        return self.recv(timeout, max_payload)

    def exit_description(self, wait_s: float = 2.0) -> str:
        """How the child ended (waits briefly for it), e.g. 'killed by SIGSEGV' or 'exited with status 0'."""
        try:
            code = self.proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return "still running"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exited with status {code}"

    def kill(self) -> None:
        kill_group(self.proc)
        # close our pipe ends once only: a second close could hit a descriptor number that another
        # thread's new child has been given meanwhile, and cut that child off (it would exit with status 0)
        with self._close_lock:
            fds, self._to_child, self._from_child = (self._to_child, self._from_child), -1, -1
        for fd in fds:
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._drain.join(timeout=2)

    def close(self) -> None:
        """Ask politely, then kill the group anyway (grandchildren included)."""
        try:
            self.send({"cmd": "exit"})
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()
