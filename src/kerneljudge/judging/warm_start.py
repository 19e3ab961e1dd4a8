"""Solution processes forked from a warm template instead of started cold (the judge's side).

A fresh solution process spends seconds importing torch before it can do anything; a fork of a template
that has imported it already (sandbox/template.py) starts in milliseconds, then enters its box exactly as a
cold start does. One template per distinct starting environment (the box's per-solution folders aside),
started on first use and kept for the life of this process. What a solution does never reaches the
template: each process is a fresh fork, and the template never runs solution code or touches the GPU.

Where a template cannot be used (it failed to start, its imports initialised CUDA, which a fork cannot
inherit, or a fork of it could not use the GPU), `spawn` raises Unavailable and the caller starts the
process cold, as before; that template is not started again in this process.
KERNELJUDGE_WARM_START=0 turns templates off.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from typing import Any

from kerneljudge.sandbox.spec import SCRATCH_ENV
from kerneljudge.sandbox.template import STATUS
from kerneljudge.judging.process_group import kill_group

# not part of what a template is keyed by (a fork gets them all the same): set by the box per solution
# (sandbox/spec.boxed_env), or read only when something is built (MAX_JOBS; builds happen in the builder)
UNKEYED = frozenset({*SCRATCH_ENV, "PYTHONDONTWRITEBYTECODE", "PYTHONUSERBASE", "MAX_JOBS"})
READY_TIMEOUT_S = 120.0
REPLY_TIMEOUT_S = 30.0
MAX_TEMPLATES = 16


class Unavailable(RuntimeError):
    """No usable template for this environment: start the process cold."""


def enabled() -> bool:
    return os.environ.get("KERNELJUDGE_WARM_START", "1") != "0" and sys.platform.startswith("linux")


class ForkedProcess:
    """A process the template forked, seen like a subprocess.Popen: pid (its process group), poll(), wait(),
    returncode (negative: killed by that signal). Its wait status arrives on the status pipe; end of file
    without one means its reporter was killed, by the judge or with the template."""

    def __init__(self, pid: int, status_r: int, output_r: int, on_end: Any = None):
        self.pid = pid
        self.returncode: int | None = None
        self.stdout = os.fdopen(output_r, "rb", buffering=0)
        self._status_r = status_r
        self._lock = threading.Lock()
        self._on_end = on_end  # told once, when its end is known

    def _collect(self, timeout: float | None) -> int | None:
        with self._lock:
            if self.returncode is not None:
                return self.returncode
            ready, _, _ = select.select([self._status_r], [], [], timeout)
            if not ready:
                return None
            data = os.read(self._status_r, STATUS.size)
            os.close(self._status_r)
            status = STATUS.unpack(data)[0] if len(data) == STATUS.size else None
            self.returncode = -signal.SIGKILL if status is None else os.waitstatus_to_exitcode(status)
        if self._on_end is not None:
            self._on_end()
            self._on_end = None
        return self.returncode

    def poll(self) -> int | None:
        return self._collect(0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._collect(timeout)
        if code is None:
            raise subprocess.TimeoutExpired("warm-started process", timeout or 0)
        return code


class Template:
    """One template process and the socket to it. spawn() may be called from several threads."""

    def __init__(self, env: dict[str, str]):
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.proc = subprocess.Popen(
            [sys.executable, "-u", "-m", "kerneljudge.sandbox.template", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        theirs.close()
        self._lock = threading.Lock()
        self._ready: dict[str, Any] | None = None
        self.error = ""
        self._live = 0  # forks whose end is not known yet: they die with the template, so it outlives them

    def _read(self, timeout: float) -> dict[str, Any]:
        if not select.select([self._sock], [], [], timeout)[0]:
            raise Unavailable(f"the template did not answer within {timeout:.0f} s")
        data = self._sock.recv(1 << 16)
        if not data:
            raise Unavailable("the template ended")
        return json.loads(data)

    def usable(self) -> bool:
        """Waits for the template's imports the first time; False (for good) if it cannot serve."""
        with self._lock:
            if self._ready is None and not self.error:
                try:
                    self._ready = self._read(READY_TIMEOUT_S)
                    if self._ready.get("cuda_initialised"):
                        self.error = "its imports initialised CUDA, which a fork cannot inherit"
                    elif self._ready.get("fork_cuda_ok") is False:
                        self.error = "a fork of it could not use the GPU"
                except (Unavailable, OSError, ValueError) as exc:
                    self.error = str(exc)
                if self.error:
                    self.close()  # nothing was forked yet
            return not self.error and self.proc.poll() is None

    def spawn(self, module: str, env: dict[str, str], cwd: str | None, spec: dict[str, Any] | None,
              to_child_r: int, from_child_w: int) -> ForkedProcess:
        """Fork `module` with the two channel descriptors as its arguments (the caller keeps and closes its
        own copies). Raises Unavailable when the template cannot do it."""
        if not self.usable():
            raise Unavailable(self.error or "the template ended")
        output_r, output_w = os.pipe()
        status_r, status_w = os.pipe()
        request = json.dumps({"module": module, "env": env, "cwd": cwd, "spec": spec}).encode()
        try:
            with self._lock:
                socket.send_fds(self._sock, [request], [to_child_r, from_child_w, output_w, status_w])
                reply = self._read(REPLY_TIMEOUT_S)
        except (OSError, ValueError, Unavailable) as exc:
            for fd in (output_r, status_r):
                os.close(fd)
            self.retire(f"the template failed: {exc}")
            raise Unavailable(self.error) from None
        finally:
            os.close(output_w)
            os.close(status_w)
        if "pid" not in reply:
            os.close(output_r)
            os.close(status_r)
            raise Unavailable(str(reply.get("error", "the template refused")))
        with self._lock:
            self._live += 1
        return ForkedProcess(int(reply["pid"]), status_r, output_r, on_end=self._one_ended)

    def _one_ended(self) -> None:
        with self._lock:
            self._live -= 1
            last = self._live == 0 and bool(self.error)
        if last:
            self.close()

    def retire(self, reason: str) -> None:
        """Never use this template again in this process (its spawns fail at once: cold starts). The template
        process ends once the forks it already made have ended: they die with it, and they are other
        solutions' processes, judged now."""
        with self._lock:
            first = not self.error
            self.error = reason or "retired"
            idle = self._live == 0
        if first:
            print(f"kerneljudge: the warm template was retired ({self.error}); solution processes start cold",
                  file=sys.stderr, flush=True)
        if idle:
            self.close()

    def close(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass
        kill_group(self.proc)


_templates: dict[str, Template] = {}
_registry_lock = threading.Lock()


def template_key(env: dict[str, str]) -> str:
    return json.dumps(sorted((k, v) for k, v in env.items() if k not in UNKEYED))


def template_for(env: dict[str, str]) -> Template:
    """The running template for this starting environment, started now if there is none."""
    key = template_key(env)
    with _registry_lock:
        found = _templates.get(key)
        # one that cannot serve stays (its spawns fail at once: cold starts); one that ended is replaced
        if found is not None and (found.error or found.proc.poll() is None):
            return found
        if found is not None:
            found.close()
        if len(_templates) >= MAX_TEMPLATES:
            _templates.pop(next(iter(_templates))).close()
        base = {k: v for k, v in env.items() if k not in UNKEYED}
        _templates[key] = Template(base)
        return _templates[key]


def prepare(env: dict[str, str]) -> None:
    """Start the template for `env` now (its imports overlap other work); best effort."""
    if enabled():
        try:
            template_for(env)
        except OSError:
            pass


def close_all() -> None:
    with _registry_lock:
        templates = list(_templates.values())
        _templates.clear()
    for template in templates:
        template.close()
