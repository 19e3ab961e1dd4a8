"""Run one step of a device session with a time limit, and end every process the step started, by id.

    python3 lab/run_step.py --limit SECONDS [--grace 10] [--log FILE] -- COMMAND [ARG ...]

The command starts in a session (and process group) of its own. When it runs past --limit, the group gets
SIGTERM, then SIGKILL after --grace seconds. Either way, once the command has ended, whatever it left behind
is ended too: the rest of its process group, and any descendant that moved to a group or session of its own
(this process is made a child subreaper, so orphaned descendants are re-parented here rather than to init and
can be found by their parent id). Nothing else on the machine is touched: no process is matched by name.

Exit status: the command's, or 124 when the limit was hit (as coreutils' timeout). Standard library only.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
TIMED_OUT = 124


def become_subreaper() -> bool:
    """Orphaned descendants are re-parented to this process (Linux 3.4+); False where that is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def children_of(pid: int) -> list[int]:
    """Ids of the live processes whose parent is `pid`, read from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()   # after "pid (comm) ": state, ppid, pgrp, ...
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry))
    return found


def signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def end_leftovers(own_pgid: int, step_pgid: int) -> int:
    """SIGKILL the step's process group and every remaining child of this process (and the group each one
    leads), then reap them. Returns how many processes were found left behind."""
    signal_group(step_pgid, signal.SIGKILL)
    ended: set[int] = set()
    for _ in range(50):
        left = children_of(os.getpid())
        if not left:
            break
        for pid in left:
            ended.add(pid)
            try:
                pgid = os.getpgid(pid)
            except ProcessLookupError:
                continue
            if pgid != own_pgid:
                signal_group(pgid, signal.SIGKILL)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            try:
                reaped, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if reaped == 0:
                time.sleep(0.02)
    return len(ended)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, required=True, help="seconds before the step is ended")
    parser.add_argument("--grace", type=float, default=10.0, help="seconds between SIGTERM and SIGKILL")
    parser.add_argument("--log", default=None, help="file for the command's stdout and stderr (default: ours)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")

    become_subreaper()
    own_pgid = os.getpgid(0)
    log = open(args.log, "wb") if args.log else None
    try:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT if log else None,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        print(f"run_step: cannot start {command[0]}: {e}", file=sys.stderr)
        return 127
    step_pgid = proc.pid   # a new session's leader leads its own process group
    status = None
    try:
        status = proc.wait(timeout=args.limit)
    except subprocess.TimeoutExpired:
        signal_group(step_pgid, signal.SIGTERM)
        try:
            proc.wait(timeout=args.grace)
        except subprocess.TimeoutExpired:
            signal_group(step_pgid, signal.SIGKILL)
            proc.wait()
    except KeyboardInterrupt:
        signal_group(step_pgid, signal.SIGTERM)
    finally:
        left = end_leftovers(own_pgid, step_pgid)
        if log is not None:
            if left:
                log.write(f"run_step: ended {left} process(es) the step left behind\n".encode())
            log.close()
    if status is None:
        return TIMED_OUT
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
