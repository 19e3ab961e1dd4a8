"""Landlock: an allow-list of what this process (and everything it starts later) may do with files.

Applied by the process to itself; it can never be lifted, only narrowed further. Every filesystem right of
the running kernel's ABI is handled (so anything not granted is refused), TCP bind/connect are refused
where the ABI has network rights (4+), and abstract UNIX sockets and signals are scoped to the sandbox
where the ABI has scopes (6+).

The restriction covers the calling thread and the threads and processes it creates afterwards. Threads
that already exist keep their freedom (the kernel has no way to restrict them before ABI 8's thread
sync), which is why `restrict` reports how many other threads were alive.
"""

from __future__ import annotations

import ctypes
import os
import stat
from dataclasses import dataclass
from typing import Any

from kerneljudge.sandbox.spec import BoxSpec

# landlock_create_ruleset, landlock_add_rule, landlock_restrict_self: one number on every architecture
_CREATE, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13       # ABI 2: link or rename across folders
TRUNCATE = 1 << 14    # ABI 3
IOCTL_DEV = 1 << 15   # ABI 5: ioctl on device files opened after the restriction

NET_BIND_TCP = 1 << 0     # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

# rights that may be granted on a file (the rest only make sense on a folder)
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ = READ_FILE | READ_DIR
# everything a writable folder allows: create, change, remove, rename inside it; never execute what is there
WRITE = (READ | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO
         | MAKE_SYM | REFER | TRUNCATE | IOCTL_DEV)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 8 + 4 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long

# A spec the launcher was asked to apply later (after CUDA is initialised), in this same interpreter.
PENDING: BoxSpec | None = None


@dataclass(frozen=True)
class Outcome:
    applied: bool
    abi: int
    reason: str = ""
    other_threads: int = 0          # threads alive at restriction time, which stay unrestricted
    network: bool = False           # TCP bind/connect refused by Landlock itself
    scoped: bool = False            # abstract UNIX sockets and signals confined to the sandbox
    skipped: tuple[str, ...] = ()   # paths of the spec that could not be opened here (not granted)

    def to_dict(self) -> dict[str, Any]:
        return {"applied": self.applied, "abi": self.abi, "reason": self.reason,
                "other_threads": self.other_threads, "network": self.network, "scoped": self.scoped,
                "skipped": list(self.skipped)}


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is missing or disabled."""
    result = _libc.syscall(ctypes.c_long(_CREATE), None, ctypes.c_size_t(0),
                           ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(result), 0)


def handled_fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def _other_threads() -> int:
    try:
        return max(len(os.listdir("/proc/self/task")) - 1, 0)
    except OSError:
        return 0


def _rules(spec: BoxSpec) -> dict[str, int]:
    """One entry per path: the union of every right the spec grants it.

    Plus this process's own thread folder, writable: the CUDA driver names the threads it starts by
    opening /proc/self/task/<tid>/comm for writing with truncation, and cudaGetDeviceCount fails with
    error 304 when it cannot (measured on an H200, kernel 6.18: read+write alone fail, +truncate works).
    The folder holds only this process's threads."""
    rules: dict[str, int] = {"/proc/self/task": READ_FILE | WRITE_FILE | TRUNCATE}  # resolved when opened
    for paths, rights in ((spec.list_only, READ_DIR), (spec.read, READ), (spec.execute, READ | EXECUTE),
                          (spec.write, WRITE)):
        for path in paths:
            rules[path] = rules.get(path, 0) | rights
    return rules


def _add_rule(ruleset: int, path: str, rights: int, handled: int) -> bool:
    """False when the path cannot be opened (missing, or hidden from this user): it is then not granted,
    which only narrows the box. OSError when the kernel refuses the rule."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS
        rights &= handled
        if not rights:
            return True
        attr = _PathBeneathAttr(rights, fd)
        if _libc.syscall(ctypes.c_long(_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                         ctypes.byref(attr), ctypes.c_uint32(0)) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"landlock_add_rule({path}): {os.strerror(code)}")
    finally:
        os.close(fd)
    return True


def restrict(spec: BoxSpec, network: bool = True) -> Outcome:
    """Restrict this process to `spec` for good. Never raises: an unavailable Landlock is an Outcome.

    no_new_privs is set first (Landlock requires it of an unprivileged process). `network` also refuses
    TCP bind and connect where the ABI allows it, a second wall behind the network namespace."""
    from kerneljudge.sandbox import namespaces

    abi = abi_version()
    if abi <= 0:
        return Outcome(False, 0, "Landlock is not available in this kernel (or disabled at boot)")
    handled = handled_fs_rights(abi)
    attr = _RulesetAttr(handled, 0, 0)
    size = 8
    if abi >= 4:
        size = 16
        if network:
            attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
    if abi >= 6:
        size = 24
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    try:
        namespaces.set_no_new_privs()
    except OSError as exc:
        return Outcome(False, abi, f"no_new_privs could not be set: {exc}")
    ruleset = int(_libc.syscall(ctypes.c_long(_CREATE), ctypes.byref(attr), ctypes.c_size_t(size),
                                ctypes.c_uint32(0)))
    if ruleset < 0:
        code = ctypes.get_errno()
        return Outcome(False, abi, f"landlock_create_ruleset: {os.strerror(code)}")
    skipped = []
    try:
        for path, rights in _rules(spec).items():
            if not _add_rule(ruleset, path, rights, handled):
                skipped.append(path)
        threads = _other_threads()
        if _libc.syscall(ctypes.c_long(_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            code = ctypes.get_errno()
            return Outcome(False, abi, f"landlock_restrict_self: {os.strerror(code)}")
    except OSError as exc:
        return Outcome(False, abi, str(exc))
    finally:
        os.close(ruleset)
    return Outcome(True, abi, "", threads, bool(attr.handled_access_net), bool(attr.scoped), tuple(skipped))


def apply_pending() -> Outcome:
    """Apply the box the launcher left pending, once; an Outcome with applied=False if there is none.

    Pending is the box itself in the launcher's "later" mode, or the narrower "then" box in its "start"
    mode. The solution worker calls this after CUDA is initialised (and, for the two-stage box, after its
    first CUDA IPC export) and before it loads the solution."""
    global PENDING
    spec, PENDING = PENDING, None
    if spec is None:
        return Outcome(False, abi_version(), "no restriction was pending (not started by the sandbox launcher)")
    return restrict(spec)
