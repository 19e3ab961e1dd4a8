"""The keyed build store (the trusted builder): solutions' C++/CUDA extensions, each built once per key in a
folder of its own, in a box (judging/build/boxed_run.py), never in the solution's process.

A solution's load_inline/load call arrives as a plain request (worker/builds.py). The request is untrusted:
it is validated (types, sizes, names), then keyed by a sha256 of every argument that changes the result
plus the torch, Python and compiler versions and TORCH_CUDA_ARCH_LIST. Each key has one folder:

    <build_root>/<key>/        the only place the build's box may write (build/, tmp/, src/ inside)
    <build_root>/<key>.lock    flock held while the key is checked or built (two judge processes agree)
    <build_root>/<key>.json    the marker, written by the orchestrator only, after the build ended

A folder with a marker is complete: it was made read-only when its build ended, and its library's sha256
is in the marker, checked again before every reuse and copy. A folder without a marker is debris (a build
killed mid-way, a judge that died) and is wiped before it is built again. Compiler flags can run programs
(`-wrapper`, `-fplugin`, `-specs`, and torch writes them unquoted into a ninja file run by /bin/sh), which is
why the build runs in the box: user, network and PID namespaces, nice 10 or more, and Landlock allowing
writes to its own folder only. A build started while others run gets one nice level more per running build
(up to 19): when a batch starts many builds at once, the first ones get the cores and finish early, so the
device has work while the rest compile, instead of every build of the wave finishing together. The build
never initialises CUDA: TORCH_CUDA_ARCH_LIST comes from the caller.
CUDA units are tried first against a slim stand-in for torch/types.h written for their own source
(judging/build/slim_headers.py; KERNELJUDGE_SLIM_HEADERS=0 turns that off), then, where they include
torch/extension.h, with torch/types.h in its place (judging/build/lean_headers.py; KERNELJUDGE_LEAN_HEADERS=0);
the marker records `slim_headers` or `lean_headers` when such a build served.
Binding units load a shared precompiled torch/extension.h (judging/build/pch.py), made the first time a build
asks for one by a process of its own (judging/build/pch_maker.py, which outlives a short judge):
<build_root>/pch/<key>/ (its box's only writable folder) and <build_root>/pch/<key>.json, written once it is
complete.
KERNELJUDGE_PCH=0 turns that off.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import importlib.metadata
import json
import os
import secrets
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator

from kerneljudge.judging.build import pch, pch_maker
from kerneljudge.judging.build.boxed_run import LOG_CHARS, LineWatch, boxed_command, run_boxed
from kerneljudge.judging.build.folders import freeze, remove, wipe, write_json
from kerneljudge.judging.build.request import uses_cuda, validate
from kerneljudge.judging.child import TailBuffer
from kerneljudge.judging.cores import available_cores
from kerneljudge.sandbox import spec as box_spec

__all__ = ["BuildResult", "Builder"]

FORMAT = 1  # bump when the worker's way of building changes: old folders are then never reused
MAX_NICE = 19


@dataclass(frozen=True)
class BuildResult:
    ok: bool
    key: str
    name: str
    so_path: str | None      # the library in the (read-only) build folder; copy_into hands out copies
    sha256: str
    log: str                 # the compiler's output (an excerpt) when the build failed
    seconds: float           # how long the build took when it ran (0 when reused)
    reused: bool             # an earlier build (or an earlier failure) of the same key was returned
    is_python_module: bool = True
    lean_headers: bool = False  # its CUDA units were compiled with torch/types.h for torch/extension.h
    slim_headers: bool = False  # ... against the slim stand-in for torch/types.h (judging/build/slim_headers.py)
    precompiled_header: bool = False  # its binding unit was given the shared torch/extension.h.gch
    queued_s: float = 0.0    # how long it waited for a free build slot (not counted against its time limit)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "key": self.key, "name": self.name, "so_path": self.so_path,
                "sha256": self.sha256, "log": self.log, "seconds": self.seconds, "reused": self.reused,
                "lean_headers": self.lean_headers, "slim_headers": self.slim_headers,
                "precompiled_header": self.precompiled_header}


class Builder:
    """Builds validated requests in hash-keyed folders under `build_root`, each build in the box.

    `env` is the environment builds start from (the judge's child environment: PYTHONPATH to this
    package, no secrets); `cuda_arch_list` is the GPU's capability ("9.0"), so no build touches CUDA.
    With `reuse=False` (say, where the box is incomplete) every request is built afresh."""

    def __init__(self, build_root: str, env: dict[str, str], cuda_arch_list: str | None = None,
                 reuse: bool = True, nice: int = 10, require: tuple[str, ...] = (), cores: tuple[int, ...] = ()):
        self.root = os.path.abspath(build_root)
        os.makedirs(self.root, exist_ok=True)
        self.env = dict(env)
        self.cuda_arch_list = cuda_arch_list if cuda_arch_list is not None else env.get("TORCH_CUDA_ARCH_LIST", "")
        self.reuse, self.nice, self.require = reuse, nice, tuple(require)
        self.cores = tuple(cores)  # builds stay off the cores reserved for timing (judging/cores.py)
        self.lean_headers = os.environ.get("KERNELJUDGE_LEAN_HEADERS", "1") != "0"
        self.slim_headers = os.environ.get("KERNELJUDGE_SLIM_HEADERS", "1") != "0"
        self.pch_root = os.path.join(self.root, "pch") if os.environ.get("KERNELJUDGE_PCH", "1") != "0" else ""
        self.pch_makers: dict[str, subprocess.Popen] = {}  # key -> the process making that .gch
        self.builds_started = 0
        # builds at once: one per build core (at least two). A build is mostly one compile job now: on the H200
        # its binding unit takes 5.5 s with the precompiled header beside the CUDA unit's 33 s, so half as many
        # builds as cores (one per MAX_JOBS pair) left cores idle and made builds the batch's bound; more than
        # the cores only makes every build of a wave finish later, with the GPU waiting
        self.at_once = max(2, len(self.cores or available_cores()))
        self._build_slots = threading.BoundedSemaphore(self.at_once)
        self._running = 0   # builds compiling now (their count sets a new build's nice level)
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._versions: dict[str, str] = {}

    # ---- keys ----
    def _tool_version(self, label: str, command: list[str]) -> str:
        with self._guard:
            if label in self._versions:
                return self._versions[label]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=30, env=self.env)
            found = (done.stdout or done.stderr).strip()
        except (OSError, subprocess.TimeoutExpired) as exc:
            found = f"unavailable: {type(exc).__name__}"
        with self._guard:
            self._versions[label] = found
        return found

    def key(self, request: dict[str, Any]) -> str:
        """sha256 of a validated request and of everything else its result depends on."""
        material = {"format": FORMAT, "request": request, "torch": _torch_version(), "python": sys.version,
                    "cxx": self._tool_version("cxx", [self.env.get("CXX", "c++"), "--version"]),
                    "arch": self.cuda_arch_list, "lean_headers": self.lean_headers,
                    "slim_headers": self.slim_headers}
        if uses_cuda(request):
            material["nvcc"] = self._tool_version("nvcc", [self._nvcc(), "--version"])
            material["cuda_home"] = self.env.get("CUDA_HOME", "")
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:32]

    def _nvcc(self) -> str:
        home = self.env.get("CUDA_HOME") or self.env.get("CUDA_PATH") or "/usr/local/cuda"
        candidate = os.path.join(home, "bin", "nvcc")
        return candidate if os.path.exists(candidate) else "nvcc"

    # ---- building ----
    def build(self, request: Any, timeout_s: float) -> BuildResult:
        """Build (or reuse) the extension a solution asked for. BuildRefused for a malformed request."""
        request = validate(request)
        key = self.key(request)
        deadline = time.monotonic() + timeout_s
        with self._thread_lock(key):
            with self._key_lock(key, deadline) as locked:
                if not locked:
                    return self._failure(key, request, "waited past the build time limit for another build "
                                         "of the same sources", 0.0)
                if self.reuse:
                    found = self._reusable(key, request)
                    if found is not None:
                        return found
                waiting = time.monotonic()
                with self._build_slots, self._counted() as running_before:
                    queued = round(time.monotonic() - waiting, 3)
                    nice = min(MAX_NICE, self.nice + running_before)
                    return dataclasses.replace(self._run(key, request, deadline + queued, nice), queued_s=queued)

    @contextlib.contextmanager
    def _counted(self) -> Iterator[int]:
        """Count a build as running while it runs; yields how many others were running when it started."""
        with self._guard:
            before = self._running
            self._running += 1
        try:
            yield before
        finally:
            with self._guard:
                self._running -= 1

    def _thread_lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    @contextlib.contextmanager
    def _key_lock(self, key: str, deadline: float) -> Iterator[bool]:
        """An flock beside the folder: released by the kernel if this process dies, so never stale."""
        with open(os.path.join(self.root, f"{key}.lock"), "a+") as handle:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        yield False
                        return
                    time.sleep(0.05)
            try:
                yield True
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _folder(self, key: str) -> str:
        return os.path.join(self.root, key)

    def _marker_path(self, key: str) -> str:
        return os.path.join(self.root, f"{key}.json")

    def _reusable(self, key: str, request: dict[str, Any]) -> BuildResult | None:
        try:
            with open(self._marker_path(key)) as f:
                marker = json.load(f)
        except (OSError, ValueError):
            return None
        if not isinstance(marker, dict) or marker.get("format") != FORMAT:
            return None
        if not marker.get("ok"):
            log = str(marker.get("log", ""))
            return BuildResult(False, key, request["name"], None, "", "(the same sources failed to build before; "
                               "this is that build's output)\n" + log, 0.0, True, request["is_python_module"])
        try:
            digest = _sha256_of(self._folder(key), request["name"])
        except OSError:
            return None
        if digest != marker.get("sha256"):
            return None  # changed since it was built: never handed out, built again
        return BuildResult(True, key, request["name"], self._library(key, request["name"]), digest, "", 0.0, True,
                           request["is_python_module"], bool(marker.get("lean_headers")),
                           bool(marker.get("slim_headers")), bool(marker.get("pch")))

    def _library(self, key: str, name: str) -> str:
        return os.path.join(self._folder(key), "build", f"{name}.so")

    def _run(self, key: str, request: dict[str, Any], deadline: float, nice: int) -> BuildResult:
        folder = self._folder(key)
        remove(self._marker_path(key))
        wipe(folder)
        box_spec.prepare_scratch(folder)
        env = box_spec.boxed_env(self.env, folder)
        env.update(TORCH_CUDA_ARCH_LIST=self.cuda_arch_list, CUDA_VISIBLE_DEVICES="")
        if self.pch_root:
            os.makedirs(self.pch_root, exist_ok=True)
        command = boxed_command(folder, "kerneljudge.judging.build.compile_worker", nice=nice, require=self.require,
                                also_read=[self.pch_root] if self.pch_root else [], die_with_parent=True)
        with self._guard:
            self.builds_started += 1
        started = time.monotonic()
        output = TailBuffer(LOG_CHARS * 2)
        sent = {**request, "lean_headers": self.lean_headers, "slim_headers": self.slim_headers,
                "pch_root": self.pch_root}
        code = run_boxed(command, env, folder, json.dumps(sent).encode(), output, deadline - started, self.cores,
                         watch=LineWatch(self._want_pch, b"pch-wanted ") if self.pch_root else None)
        seconds = round(time.monotonic() - started, 3)
        log = _clean_log(output.text(LOG_CHARS), request["name"])
        if code is None:
            wipe(folder)
            return self._failure(key, request, f"the build ran past its time limit\n{log}", seconds)
        if code == 0 and _is_plain_library(folder, request["name"]):
            freeze(folder)
            digest = _sha256_of(folder, request["name"])
            said = output.text(LOG_CHARS)
            lean = f"built {request['name']} (lean headers)" in said
            slim = f"built {request['name']} (slim headers)" in said
            used_pch = "pch-used" in said
            self._write_marker(key, {"ok": True, "sha256": digest, "seconds": seconds, "lean_headers": lean,
                                     "slim_headers": slim, "pch": used_pch})
            return BuildResult(True, key, request["name"], self._library(key, request["name"]), digest, "", seconds,
                               False, request["is_python_module"], lean, slim, used_pch)
        wipe(folder)
        if code == 3:  # the compiler failed: the same request will fail the same way
            self._write_marker(key, {"ok": False, "log": log, "seconds": seconds})
        elif code == 0:
            log = f"the build left no library {request['name']}.so\n{log}"
        else:
            log = f"the build process failed (status {code})\n{log}"
        return self._failure(key, request, log, seconds)

    # ---- the shared precompiled header (judging/build/pch.py) ----
    def _want_pch(self, line: str) -> None:
        """A build asked for a .gch: have it made once, if its flags are safe to share. The maker is a process
        of its own that outlives this one (a single `kerneljudge eval` ends before a .gch is made)."""
        wanted = pch.parse_wanted(line)
        if wanted is None:
            return
        key, flags = wanted
        with self._guard:
            if key in self.pch_makers:
                return
        header_roots, writable = box_spec.header_roots(), [self.root]
        if not pch.trusted_flags(flags, header_roots, writable) or key != pch.key(
                flags, self._tool_version("cxx", [self.env.get("CXX", "c++"), "--version"]), _torch_version()):
            return  # the build's output is not trusted: only flags that hash to their key, on system headers
        job = {"pch_root": self.pch_root, "key": key, "flags": flags, "env": self.env, "nice": self.nice,
               "require": list(self.require), "cores": list(self.cores)}
        with self._guard:
            if key in self.pch_makers:
                return
            self.pch_makers[key] = maker = pch_maker.start(self.env)
        pch_maker.send(maker, job)

    def _failure(self, key: str, request: dict[str, Any], log: str, seconds: float) -> BuildResult:
        return BuildResult(False, key, request["name"], None, "", log, seconds, False, request["is_python_module"])

    def _write_marker(self, key: str, fields: dict[str, Any]) -> None:
        write_json(self._marker_path(key), {"format": FORMAT, **fields})

    # ---- handing out ----
    def copy_into(self, result: BuildResult, scratch_dir: str) -> str:
        """Copy a built library into a solution's scratch folder; the path of the copy.

        The scratch folder is the solution's own, so nothing in it is trusted: the copy goes to a fresh
        folder of a random name created here, opened without following links, and the bytes copied must
        hash to what the build produced."""
        if not result.ok or not result.so_path:
            raise ValueError("only a successful build can be copied")
        target = os.path.join(scratch_dir, f"kj-ext-{secrets.token_hex(8)}")
        os.mkdir(target, 0o700)
        target_fd = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        filename = f"{result.name}.so"
        try:
            source = _open_library(self._folder(result.key), result.name)
            digest = hashlib.sha256()
            try:
                out = os.open(filename, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o500, dir_fd=target_fd)
                with os.fdopen(source, "rb", closefd=False) as src, os.fdopen(out, "wb") as dst:
                    while chunk := src.read(1 << 20):
                        digest.update(chunk)
                        dst.write(chunk)
            finally:
                os.close(source)
            if digest.hexdigest() != result.sha256:
                os.unlink(filename, dir_fd=target_fd)
                raise OSError(f"the build of {result.name} changed after it was made; not handed out")
        finally:
            os.close(target_fd)
        return os.path.join(target, filename)


def _torch_version() -> str:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _clean_log(log: str, name: str) -> str:
    """The compiler's output without torch's own prefix (the solution side adds it back)."""
    prefix = f"Error building extension '{name}': "
    log = "".join(line for line in log.splitlines(keepends=True) if not line.startswith(("pch-wanted ", "pch-used")))
    return log.replace(prefix, "", 1).strip()


def _open_library(folder: str, name: str) -> int:
    """An fd for <folder>/build/<name>.so, every component opened without following a link."""
    flags = os.O_RDONLY | os.O_NOFOLLOW
    top = os.open(folder, flags | os.O_DIRECTORY)
    try:
        build = os.open("build", flags | os.O_DIRECTORY, dir_fd=top)
    finally:
        os.close(top)
    try:
        fd = os.open(f"{name}.so", flags | os.O_NONBLOCK, dir_fd=build)
    finally:
        os.close(build)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{name}.so is not a regular file")
    return fd


def _is_plain_library(folder: str, name: str) -> bool:
    try:
        os.close(_open_library(folder, name))
    except OSError:
        return False
    return True


def _sha256_of(folder: str, name: str) -> str:
    fd = _open_library(folder, name)
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
