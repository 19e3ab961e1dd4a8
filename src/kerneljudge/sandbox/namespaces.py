"""Unprivileged Linux namespaces and process hygiene through libc, for Python without os.unshare.

Every function here either does its job or raises OSError with the kernel's errno; the launcher decides
what a failure means (a layer skipped and recorded). Nothing here imports anything heavy: the user
namespace can only be entered while the process is still single-threaded.
"""

from __future__ import annotations

import ctypes
import errno
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4

MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REC = 16384
MS_PRIVATE = 1 << 18

_LINUX_CAPABILITY_VERSION_3 = 0x20080522

_libc = ctypes.CDLL(None, use_errno=True)

# What the launcher set up for this process: active layers, missing ones with the reason, and notes.
RECORD: dict = {"active": [], "missing": {}, "notes": []}


def _check(result: int, what: str) -> int:
    if result == -1:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")
    return result


def prctl(option: int, arg2: int = 0, arg3: int = 0, arg4: int = 0, arg5: int = 0) -> int:
    args = [ctypes.c_ulong(a) for a in (arg2, arg3, arg4, arg5)]
    return _check(_libc.prctl(ctypes.c_int(option), *args), f"prctl({option})")


def unshare(flags: int, what: str) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), f"unshare({what})")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def enter_user_namespace() -> None:
    """A new user namespace in which this process keeps its own uid and gid (mapped to themselves).

    setgroups must be denied before an unprivileged process may write its gid map."""
    uid, gid = os.geteuid(), os.getegid()
    unshare(CLONE_NEWUSER, "user")
    try:
        _write("/proc/self/setgroups", "deny")
    except FileNotFoundError:  # kernels before 3.19 have no setgroups file and need none
        pass
    _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
    _write("/proc/self/gid_map", f"{gid} {gid} 1\n")


def enter_network_namespace() -> None:
    """A new network namespace: a loopback interface that stays down, nothing else."""
    unshare(CLONE_NEWNET, "network")


def enter_mount_namespace() -> None:
    unshare(CLONE_NEWNS, "mount")


def enter_pid_namespace() -> None:
    """The next child of this process becomes PID 1 of a new PID namespace (this process stays outside)."""
    unshare(CLONE_NEWPID, "pid")


def mount_private_proc() -> None:
    """In a new mount namespace, as PID 1 of a new PID namespace: a /proc that shows only this namespace.

    Propagation is made private first so nothing mounted here reaches the parent namespace."""
    _check(_libc.mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None), "mount(/, private)")
    _check(_libc.mount(b"proc", b"/proc", b"proc", ctypes.c_ulong(MS_NOSUID | MS_NODEV | MS_NOEXEC), None),
           "mount(/proc)")


def die_with_parent(sig: int) -> None:
    prctl(PR_SET_PDEATHSIG, sig)


def become_subreaper() -> None:
    """Orphaned descendants are re-parented to this process instead of the system's init."""
    prctl(PR_SET_CHILD_SUBREAPER, 1)


def set_no_new_privs() -> None:
    """execve can never grant more privileges (setuid bits and file capabilities are ignored)."""
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def no_new_privs() -> bool:
    return prctl(PR_GET_NO_NEW_PRIVS) == 1


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> bool:
    """Give up every capability: ambient, bounding set, then effective/permitted/inheritable.

    A process that created a user namespace holds every capability inside it (and real root holds them
    outside); without them, file permissions apply to it as to anyone. Returns False when the bounding
    set could not be emptied (no CAP_SETPCAP), which matters only for a process that could exec a
    setuid-root program, and no_new_privs already stops that."""
    try:
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    except OSError:
        pass  # kernels before 4.3 have no ambient set
    bounding_ok = True
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except (OSError, ValueError):
        last = 40
    for cap in range(last + 1):
        try:
            prctl(PR_CAPBSET_DROP, cap)
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                bounding_ok = False
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")
    return bounding_ok


def namespace_ids() -> dict[str, int]:
    """The inode of each of this process's namespaces: two processes share a namespace iff these match."""
    ids = {}
    for kind in ("user", "net", "pid", "mnt"):
        try:
            ids[kind] = os.stat(f"/proc/self/ns/{kind}").st_ino
        except OSError:
            ids[kind] = 0
    return ids
