"""Start a Python module in the box: new user, network and PID namespaces, then Landlock.

    python -m kerneljudge.sandbox.launch SPEC_JSON MODULE ARGS...

Three processes, all forks of this one (nothing is exec'd, so inherited pipe descriptors named in ARGS
stay valid):

    launcher   (outside; in the caller's process group; unshares, forks, waits, exits like the worker)
     └─ init   (PID 1 of the new PID namespace; dies with the launcher; reaps orphans)
         └─ worker  (runs MODULE with ARGS via runpy, without capabilities, with no_new_privs)

When init ends, for any reason, the kernel kills every process left in its PID namespace, including
daemons that called setsid() to leave the process group: nothing a solution starts outlives it. The
worker is not PID 1 itself so that signals, aborts and zombies behave as they do outside.

The launcher ends the way the worker ended: with the same exit status, or killed by the same signal
(re-raised on itself, core dumps off), so callers see "killed by SIGSEGV" exactly as without the box.

SPEC_JSON is an object: {"box": BoxSpec.to_dict(), "landlock": "start" | "later" | "off", "then":
BoxSpec.to_dict() (optional), "nice": int, "require": [layer, ...], "parent": pid (optional: die with it)}.
"start" restricts the worker to "box" before MODULE runs, every thread it will ever have included, and
leaves "then" (a narrower box) in `landlock.PENDING` for the worker to add later with
`landlock.apply_pending()`. "later" leaves "box" itself pending: only the thread that applies it and what
that thread starts afterwards are restricted (CUDA's own threads, started before, are not). A layer that
cannot be set up is skipped and recorded in `namespaces.RECORD`, unless it is in "require": then the
launcher exits with status 126 and says why on stderr ("landlock" can only be required with "start").
"""

from __future__ import annotations

import json
import os
import select
import signal
import struct
import sys
from typing import Any

from kerneljudge.sandbox import landlock, namespaces
from kerneljudge.sandbox.spec import BoxSpec

LAYERS = ("userns", "netns", "pidns", "landlock", "no_new_privs")
REFUSED_EXIT = 126
_STATUS = struct.Struct("i")


def argv(box: BoxSpec, module: str, args: list[str], landlock_mode: str = "start", then: BoxSpec | None = None,
         nice: int = 0, require: tuple[str, ...] = (), die_with_parent: bool = False) -> list[str]:
    """The command line that runs `module` with `args` in the box (for subprocess.Popen).

    `die_with_parent` kills the box when the thread that starts it ends (PR_SET_PDEATHSIG counts threads,
    not processes): right for a caller that waits for the box in the thread that started it."""
    spec = make_spec(box, landlock_mode, then, nice, require)
    if die_with_parent:
        spec["parent"] = os.getpid()
    return command(spec, module, args)


def command(spec: dict[str, Any], module: str, args: list[str]) -> list[str]:
    """The command line of the launcher for a spec made by make_spec()."""
    return [sys.executable, "-u", "-m", "kerneljudge.sandbox.launch", json.dumps(spec), module, *args]


def make_spec(box: BoxSpec, landlock_mode: str = "start", then: BoxSpec | None = None, nice: int = 0,
              require: tuple[str, ...] = ()) -> dict[str, Any]:
    """SPEC_JSON as a dict (see the module's docstring); also what a warm template's fork runs (run())."""
    spec: dict[str, Any] = {"box": box.to_dict(), "landlock": landlock_mode, "nice": int(nice),
                            "require": list(require)}
    if then is not None:
        spec["then"] = then.to_dict()
    return spec


def _parse(text: str) -> dict[str, Any]:
    spec = json.loads(text)
    if not isinstance(spec, dict) or spec.get("landlock", "start") not in ("start", "later", "off"):
        raise ValueError("the spec must be a JSON object with landlock one of start, later, off")
    unknown = set(spec.get("require", ())) - set(LAYERS)
    if unknown:
        raise ValueError(f"unknown layers in require: {sorted(unknown)}")
    spec["box"] = BoxSpec.from_dict(spec.get("box") or {})
    spec["then"] = BoxSpec.from_dict(spec["then"]) if spec.get("then") else None
    return spec


def _refuse(why: str) -> None:
    sys.stderr.write(f"kerneljudge.sandbox: refusing to start: {why}\n")
    sys.stderr.flush()
    os._exit(REFUSED_EXIT)


def _enter_namespaces(record: dict[str, Any]) -> None:
    """User namespace first: it gives this process the capabilities the other unshares need."""
    steps = (("userns", namespaces.enter_user_namespace), ("netns", namespaces.enter_network_namespace),
             ("mountns", namespaces.enter_mount_namespace), ("pidns", namespaces.enter_pid_namespace))
    for layer, enter in steps:
        try:
            enter()
        except OSError as exc:
            record["missing"][layer] = str(exc)
        else:
            record["active"].append(layer)


def _open_fds() -> list[int]:
    """This process's open descriptors. Read before init mounts the PID namespace's own /proc: from then on
    the launcher (outside that namespace) finds no /proc/self there."""
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 1024))


def _close_fds_except(keep: set[int], fds: list[int] | None = None) -> None:
    """Drop every inherited descriptor above stderr but `keep`: only the worker may hold the caller's
    pipes, so the caller sees end-of-file as soon as the worker is gone."""
    for fd in _open_fds() if fds is None else fds:
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _exit_like(status: int) -> None:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the worker dumped its own core, if any
        except (ImportError, ValueError, OSError):
            pass
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL and SIGSTOP cannot be caught anyway
            pass
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _run_worker(spec: dict[str, Any], record: dict[str, Any], module: str, args: list[str]) -> None:
    """In the worker: shed privileges, maybe apply Landlock, then run the module (returns like it)."""
    namespaces.die_with_parent(signal.SIGKILL)
    if spec.get("nice"):
        os.nice(int(spec["nice"]))
    try:
        if not namespaces.drop_capabilities():
            record["notes"].append("capability bounding set kept (no CAP_SETPCAP)")
    except OSError as exc:
        record["notes"].append(f"capabilities not dropped: {exc}")
    try:
        namespaces.set_no_new_privs()
        record["active"].append("no_new_privs")
    except OSError as exc:
        record["missing"]["no_new_privs"] = str(exc)
    mode = spec.get("landlock", "start")
    if mode == "start":
        outcome = landlock.restrict(spec["box"])
        record["landlock"] = outcome.to_dict()
        if outcome.applied:
            record["active"].append("landlock")
        else:
            record["missing"]["landlock"] = outcome.reason
        landlock.PENDING = spec["then"]
    elif mode == "later":
        landlock.PENDING = spec["box"]
    required_missing = [layer for layer in spec.get("require", ()) if layer in record["missing"]]
    if required_missing:
        _refuse("; ".join(f"{layer}: {record['missing'][layer]}" for layer in required_missing))
    sys.argv = [module, *args]
    import runpy

    runpy.run_module(module, run_name="__main__", alter_sys=True)


def _run_init(spec: dict[str, Any], record: dict[str, Any], module: str, args: list[str],
              status_w: int, alive_r: int) -> None:
    namespaces.die_with_parent(signal.SIGKILL)
    if select.select([alive_r], [], [], 0)[0]:  # the launcher died before PDEATHSIG was armed
        os._exit(1)
    os.close(alive_r)
    in_pidns = "pidns" in record["active"]
    if in_pidns and "mountns" in record["active"]:
        try:
            namespaces.mount_private_proc()
            record["notes"].append("private /proc")
        except OSError as exc:
            record["notes"].append(f"host /proc kept: {exc}")
    if not in_pidns:
        # second best without a PID namespace: orphans come to this process, which kills them at the end
        try:
            namespaces.become_subreaper()
        except OSError:
            pass
    worker = os.fork()
    if worker == 0:
        os.close(status_w)
        _run_worker(spec, record, module, args)
        return
    _close_fds_except({status_w})
    try:
        namespaces.drop_capabilities()
    except OSError:
        pass
    status = 0
    while True:
        try:
            pid, st = os.wait()
        except ChildProcessError:
            break
        if pid == worker:
            status = st
            break
    if not in_pidns:
        _kill_children()
    os.write(status_w, _STATUS.pack(status))
    os._exit(0)


def _kill_children() -> None:
    """Kill and reap every remaining child (orphans re-parented to this subreaper included)."""
    while True:
        try:
            with open(f"/proc/self/task/{os.getpid()}/children") as f:
                pids = [int(p) for p in f.read().split()]
        except OSError:
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.wait()
        except ChildProcessError:
            return


def run(spec_dict: dict[str, Any], module: str, args: list[str]) -> None:
    """Be the launcher of a box (this process must have one thread: a fresh interpreter, or a fork).

    Returns only in the worker, after `module` has run; the launcher and init end with os._exit. Raises
    ValueError for a bad spec before anything is changed."""
    spec = _parse(json.dumps(spec_dict))
    if spec.get("parent"):
        namespaces.die_with_parent(signal.SIGKILL)
        if os.getppid() != spec["parent"]:  # it died before the line above
            os._exit(REFUSED_EXIT)
    record = namespaces.RECORD
    _enter_namespaces(record)
    status_r, status_w = os.pipe()
    alive_r, alive_w = os.pipe()
    inherited = _open_fds()
    init = os.fork()
    if init == 0:
        os.close(status_r)
        os.close(alive_w)
        _run_init(spec, record, module, args, status_w, alive_r)
        return  # only the worker gets here, after its module has run: a normal interpreter exit
    os.close(status_w)
    os.close(alive_r)
    _close_fds_except({status_r, alive_w}, inherited)
    _, init_status = os.waitpid(init, 0)
    reported = os.read(status_r, _STATUS.size)
    _exit_like(_STATUS.unpack(reported)[0] if len(reported) == _STATUS.size else init_status)


def main() -> None:
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__ or "")
        sys.exit(2)
    try:
        spec = json.loads(sys.argv[1])
        _parse(sys.argv[1])
    except (ValueError, TypeError) as exc:
        sys.stderr.write(f"kerneljudge.sandbox: bad spec: {exc}\n")
        sys.exit(2)
    run(spec, sys.argv[2], sys.argv[3:])


if __name__ == "__main__":
    main()
