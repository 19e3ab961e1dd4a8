"""Run inside the box by tests/test_sandbox.py: try each action given as JSON and print what happened.

    python -m kerneljudge.sandbox.launch SPEC sandbox_actions '[["write", "/path"], ["tcp", 4242], ...]'

Each result is "ok" (with a value for some actions) or the name of the error the action raised.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys


def _write(path: str) -> str:
    with open(path, "w") as f:
        f.write("planted by a boxed process")
    return "ok"


def _read(path: str) -> str:
    with open(path) as f:
        return "ok:" + f.read(64)


def _list(path: str) -> str:
    return "ok:" + ",".join(sorted(os.listdir(path))[:20])


def _mkdir(path: str) -> str:
    os.mkdir(path)
    return "ok"


def _tcp(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        return "ok"


def _daemon(token: str) -> str:
    """A grandchild that leaves the session and process group and sleeps, marked by `token`."""
    code = "import os, sys, time; os.setsid() if os.getsid(0) != os.getpid() else None; time.sleep(300)"
    subprocess.Popen([sys.executable, "-c", code, token], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    return "ok"


def _gcc(folder: str) -> str:
    source = os.path.join(folder, "t.c")
    with open(source, "w") as f:
        f.write("int twice(int x) { return 2 * x; }\n")
    subprocess.run(["gcc", "-c", source, "-o", os.path.join(folder, "t.o")], check=True, capture_output=True)
    return "ok"


def _triton(device: str) -> str:
    """torch imports and a Triton kernel runs on `device` (interpreter mode on the CPU, set by the caller)."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    x = torch.arange(100, dtype=torch.float32, device=device)
    y = torch.ones(100, device=device)
    out = torch.empty_like(x)
    add[(2,)](x, y, out, 100, BLOCK=64)
    return "ok" if torch.equal(out.cpu(), (x + y).cpu()) else "wrong result"


def _cuda_init(_: object) -> str:
    import torch

    torch.ones(1, device="cuda")
    torch.cuda.synchronize()
    return f"ok:{len(os.listdir('/proc/self/task'))} threads"


def _ipc(_: object) -> str:
    """Export a CUDA tensor as torch's IPC does (its first export creates a counter file in /dev/shm)."""
    import torch

    torch.ones(4, device="cuda").untyped_storage()._share_cuda_()
    return "ok"


def _signal(pid: int) -> str:
    os.kill(pid, 0)
    return "ok"


def _getpid(_: object) -> str:
    return f"ok:{os.getpid()}"


def _exit(code: int) -> str:
    sys.stdout.flush()
    os._exit(code)


def _selfsignal(sig: int) -> str:
    sys.stdout.flush()
    os.kill(os.getpid(), sig)
    return "still alive"


def _sleep(seconds: float) -> str:
    import time

    time.sleep(seconds)
    return "ok"


def _apply_pending(_: object) -> str:
    from kerneljudge.sandbox import apply_pending

    outcome = apply_pending()
    return "ok" if outcome.applied else f"not applied: {outcome.reason}"


def _record(_: object) -> str:
    from kerneljudge.sandbox import namespaces

    return "ok:" + json.dumps({k: namespaces.RECORD[k] for k in ("active", "missing")})


def _pipe(fd: int) -> str:
    os.write(fd, b"through the pipe")
    return "ok"


ACTIONS = {"write": _write, "read": _read, "list": _list, "mkdir": _mkdir, "tcp": _tcp, "daemon": _daemon,
           "gcc": _gcc, "triton": _triton, "signal": _signal, "getpid": _getpid, "exit": _exit,
           "selfsignal": _selfsignal, "pipe": _pipe, "sleep": _sleep, "apply_pending": _apply_pending,
           "cuda_init": _cuda_init, "ipc": _ipc, "record": _record}


def main() -> None:
    results = []
    for name, arg in json.loads(sys.argv[1]):
        try:
            results.append(ACTIONS[name](arg))
        except Exception as exc:  # the error's kind is the answer
            results.append(type(exc).__name__)
        print(json.dumps(results), flush=True)


if __name__ == "__main__":
    main()
