"""The boxed runner: runs one build worker (a compile, or the making of a .gch) in the box and waits for it.

The command comes from `boxed_command` (sandbox/launch.argv: user, network and PID namespaces, a nice
level, Landlock letting the worker write its own folder only). `run_boxed` starts it in a process group of
its own, pinned to the build cores, gives it its request on stdin and drains its output into a bounded
buffer, each whole line of it offered to a `LineWatch` while it still runs. Past its time limit the
launcher's group is killed, and with the launcher and the box's init the kernel kills the whole PID
namespace, compilers and all.
Used by the build store (judging/build/store.py) and the .gch maker (judging/build/pch_maker.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from typing import Callable, Iterable

from kerneljudge.judging.child import TailBuffer
from kerneljudge.judging.cores import pin_tree
from kerneljudge.sandbox import launch, spec as box_spec

LOG_CHARS = 8000  # how much of a worker's output its caller keeps as the log excerpt


class LineWatch:
    """Hands each whole line of a run's output that starts with `prefix` to `on_line` as it arrives (the run
    is still going)."""

    def __init__(self, on_line: Callable[[str], object], prefix: bytes) -> None:
        self.on_line, self.prefix, self.partial = on_line, prefix, b""

    def feed(self, data: bytes) -> None:
        *lines, self.partial = (self.partial + data).split(b"\n")
        self.partial = self.partial[-4096:]
        for line in lines:
            if line.startswith(self.prefix):
                self.on_line(line.decode("utf-8", "replace"))


def boxed_command(folder: str, module: str, *, nice: int, require: Iterable[str] = (), also_read: Iterable[str] = (),
                  die_with_parent: bool = False) -> list[str]:
    """The launcher's command line that runs the worker `module` (argument: `folder`) in a build box: it may
    write `folder` only and read `also_read` besides the usual read paths; Landlock from its start."""
    box = box_spec.build_box(folder, also_read=list(also_read))
    return launch.argv(box, module, [folder], landlock_mode="start", nice=nice, require=tuple(require),
                       die_with_parent=die_with_parent)


def run_boxed(command: list[str], env: dict[str, str], cwd: str, request: bytes, output: TailBuffer,
              timeout_s: float, cores: tuple[int, ...] = (), watch: LineWatch | None = None) -> int | None:
    """Run the build; its exit status, or None when it ran past `timeout_s` (then its group is killed)."""
    proc = subprocess.Popen(command, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    pin_tree(proc.pid, cores)  # the compilers it starts inherit it

    def feed() -> None:
        with contextlib.suppress(OSError):
            proc.stdin.write(request)
        with contextlib.suppress(OSError):
            proc.stdin.close()

    def drain() -> None:
        while data := proc.stdout.read1(1 << 16):
            output.feed(data)
            if watch is not None:
                watch.feed(data)

    threads = [threading.Thread(target=feed, daemon=True), threading.Thread(target=drain, daemon=True)]
    for t in threads:
        t.start()
    try:
        code = proc.wait(timeout=max(timeout_s, 0.1))
    except subprocess.TimeoutExpired:
        code = None
        # the launcher's group (it is not reaped yet, so the group id is still its own): when the launcher
        # and init die, the kernel kills the PID namespace, compilers and all
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    for t in threads:
        t.join(timeout=5)
    return code
