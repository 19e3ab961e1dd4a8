"""A stand-in for harness.baseline_worker (no torch, starts in a blink) for the baseline runner's tests.

What it does with a problem depends on the problem file's name: "hang" sleeps forever, "crash" exits,
"fail" replies with an error, "slow" takes 0.6 s, anything else is measured in a few milliseconds.
Each "timing" holds the device lock, as the real worker does, and appends its start and end times to
FAKE_WORKER_LOG so a test can check that no two timings overlapped.

    python -m tests.fake_baseline_worker FD_IN FD_OUT
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from kerneljudge.core import channel
from kerneljudge.core.device_lock import DeviceLock


def _measure(msg: dict) -> dict:
    name = Path(msg["problem_path"]).stem
    if "hang" in name:
        time.sleep(3600)
    if "crash" in name:
        os._exit(7)
    if "fail" in name:
        return {"status": "error", "phase": "build", "message": "Traceback ...\nRuntimeError: the problem broke"}
    if "slow" in name:
        time.sleep(0.6)
    with DeviceLock(msg["lock_path"]) as lock:
        start = time.time()
        time.sleep(0.03)
        end = time.time()
    log = os.environ.get("FAKE_WORKER_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"{start} {end} {os.getpid()} {msg['lock_path']}\n")
    ms = 1.0 if msg["mode"] == "eager" else 0.5
    return {"status": "ok", "timing": {"median_ms": ms, "samples": 10, "clock": "fake"},
            "peak_mem_bytes": 123 if msg["mode"] == "eager" else None,
            "compile_s": 0.1 if msg["mode"] == "compile" else None, "lock_wait_s": lock.wait_s}


def main() -> None:
    fd_in, fd_out = int(sys.argv[1]), int(sys.argv[2])
    while True:
        try:
            msg, _ = channel.recv(fd_in)
        except channel.ChannelClosed:
            return
        if msg.get("cmd") == "exit":
            return
        if msg.get("cmd") == "hello":
            channel.send(fd_out, {"status": "ok", "environment": {"device_name": "Fake GPU", "torch": "0"}})
        elif msg.get("cmd") == "measure":
            channel.send(fd_out, _measure(msg))


if __name__ == "__main__":
    main()
