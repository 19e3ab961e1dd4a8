"""A module started by tests/test_warm_start.py from a warm template: reports what it finds, then acts.

    python -m tests.warm_probe FD_IN FD_OUT
"""

from __future__ import annotations

import os
import signal
import stat
import sys
import time

from kerneljudge.core import channel


def _descriptors() -> dict[int, str]:
    kinds = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            mode = os.fstat(int(name)).st_mode
        except OSError:
            continue  # the listing's own descriptor, closed by now
        kinds[int(name)] = "socket" if stat.S_ISSOCK(mode) else "pipe" if stat.S_ISFIFO(mode) else "other"
    return kinds


def main() -> None:
    fd_in, fd_out = int(sys.argv[1]), int(sys.argv[2])
    msg, _ = channel.recv(fd_in)
    channel.send(fd_out, {"descriptors": _descriptors(), "args": [fd_in, fd_out], "cwd": os.getcwd(),
                          "marker": os.environ.get("KJ_PROBE_MARKER"), "torch_preloaded": "torch" in sys.modules,
                          "pgid": os.getpgid(0), "pid": os.getpid()})
    print("probe says hello", flush=True)
    action = msg.get("then")
    if action == "exit":
        sys.exit(int(msg.get("code", 0)))
    if action == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if action == "raise":
        raise RuntimeError("the probe raised")
    if action == "hang":
        time.sleep(600)


if __name__ == "__main__":
    main()
