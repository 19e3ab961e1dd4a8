"""A warm template: a process that has imported torch (and Triton) once and forks solution processes from it.

    python -m kerneljudge.sandbox.template SOCKET_FD

Started by the judge (judging/warm_start.py) with the environment its solution processes would start with;
it talks only over the socket it inherited (a socketpair: no other process can reach it). It never imports a
solution, never runs a model and never initialises CUDA (a fork after that would break CUDA in the child):
after its imports it says whether the CUDA driver library got loaded anyway, and the judge does not use a
template that did.

One request, one fork: {"module", "args", "env", "cwd", "spec"} with descriptors [to_child_r, from_child_w,
output_w, status_w]. The module's ARGS are the first two descriptors' numbers. The fork (the "reporter")
starts a new session, puts the output pipe on stdout and stderr, closes every other descriptor, then forks
the process that runs the module: through the box's launcher (sandbox/launch.run, exactly what
`python -m kerneljudge.sandbox.launch` does) when "spec" is given, plainly otherwise. The reporter waits
for it and writes its wait status (4 bytes) to status_w, so the judge learns how it ended ("killed by
SIGSEGV") although the process is not the judge's child. Each fork is fresh: what one solution does never
reaches the template or another solution.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
import time
import traceback
from typing import Any, Callable

STATUS = struct.Struct("i")
MAX_REQUEST = 4 << 20
FDS_PER_REQUEST = 4


def _preload() -> list[str]:
    """Import what every solution process imports; the names of what could be imported."""
    loaded = []
    for name in ("numpy", "torch", "triton", "triton.language", "kerneljudge.core.channel",
                 "kerneljudge.sandbox.launch", "kerneljudge.sandbox.landlock"):
        try:
            __import__(name)
            loaded.append(name)
        except Exception:  # not installed, or broken here: the solution's process will say so itself
            pass
    return loaded


def cuda_initialised() -> bool:
    """Has this process initialised CUDA? (Then forks would inherit a driver state they cannot use.) The
    driver opens its device files on initialisation; merely loading its library does not."""
    try:
        for name in os.listdir("/proc/self/fd"):
            try:
                if os.readlink(f"/proc/self/fd/{name}").startswith("/dev/nvidia"):
                    return True
            except OSError:
                continue
    except OSError:
        return True  # cannot tell: assume the worst
    torch = sys.modules.get("torch")
    return bool(torch is not None and torch.cuda.is_initialized())


def fork_can_use_cuda(timeout_s: float = 120.0) -> bool | None:
    """Fork once and have the fork run one CUDA operation: True if it worked, False if not, None where there
    is no CUDA to try (a CPU-only torch, or CUDA_VISIBLE_DEVICES hiding every GPU)."""
    torch = sys.modules.get("torch")
    if torch is None or torch.version.cuda is None or os.environ.get("CUDA_VISIBLE_DEVICES", "x").strip() in ("", "-1"):
        return None
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if float(torch.ones(1, device="cuda").add(1).item()) == 2.0 else 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) == 0
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return False


def _close_all_but(keep: set[int]) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _run_module(module: str, args: list[str]) -> None:
    import runpy

    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def _exit_after(run: Callable[[], None]) -> None:
    """Run, then end this process the way the interpreter ends after `python -m module`: never return into
    the template's loop (this is a fork of it)."""
    code = 0
    try:
        run()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code & 0xFF)


def _reporter(request: dict[str, Any], fds: list[int], sock: socket.socket) -> None:
    """In the fork: become the process group the judge kills, run the module below, report how it ended."""
    to_child_r, from_child_w, output_w, status_w = fds
    try:
        sock.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the template ignores it; this process waits
        os.setsid()
        from kerneljudge.sandbox import namespaces

        namespaces.die_with_parent(signal.SIGKILL)   # the template ends: so does every solution it started
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(output_w, 1)
        os.dup2(output_w, 2)
        _close_all_but({to_child_r, from_child_w, status_w})
        os.environ.clear()
        os.environ.update(request["env"])
        sys.dont_write_bytecode = request["env"].get("PYTHONDONTWRITEBYTECODE", "") not in ("", "0")
        os.chdir(request.get("cwd") or "/")
        args = [str(to_child_r), str(from_child_w)]
        worker = os.fork()
        if worker == 0:
            os.close(status_w)
            namespaces.die_with_parent(signal.SIGKILL)
            module, spec = request["module"], request.get("spec")
            if spec is not None:
                from kerneljudge.sandbox import launch

                # the launcher and the box's init end inside run(); the box's worker returns from it
                _exit_after(lambda: launch.run(spec, module, args))
            _exit_after(lambda: _run_module(module, args))
        os.close(to_child_r)
        os.close(from_child_w)
        _, status = os.waitpid(worker, 0)
        os.write(status_w, STATUS.pack(status))
        os._exit(0)
    except BaseException:
        traceback.print_exc()
        os._exit(125)


def serve(sock: socket.socket) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # reporters are reaped by the kernel
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, MAX_REQUEST, FDS_PER_REQUEST)
        except OSError:
            return
        if not data:
            return  # the judge closed its end (or died): so does the template
        try:
            request = json.loads(data)
            if len(fds) != FDS_PER_REQUEST or not isinstance(request.get("env"), dict):
                raise ValueError(f"a request needs an env and {FDS_PER_REQUEST} descriptors")
            pid = os.fork()
            if pid == 0:
                _reporter(request, fds, sock)
            reply = {"pid": pid}
        except Exception as exc:
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in fds:
                os.close(fd)
        sock.send(json.dumps(reply).encode())


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    loaded = _preload()
    initialised = cuda_initialised()
    sock.send(json.dumps({"ready": True, "loaded": loaded, "cuda_initialised": initialised,
                          "fork_cuda_ok": None if initialised else fork_can_use_cuda(),
                          "pid": os.getpid()}).encode())
    serve(sock)


if __name__ == "__main__":
    main()
