"""What a boxed process may touch, as plain data, and the environment it starts with.

The allow-list is built from what Python, torch, Triton, a compiler and CUDA need on this machine and
nothing else: not the home folder, not /tmp or /dev/shm, not the judge's cache, run logs or other
solutions' folders. A path that happens to live under the home folder (a virtualenv in ~/venv, a
pyenv Python) is granted by itself, never its parent.
"""

from __future__ import annotations

import glob
import os
import site
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from kerneljudge.core.paths import default_cache_dir

SYSTEM_READ = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/proc", "/sys", "/opt")
SYSTEM_HEADERS = ("/usr/include", "/usr/local/include", "/usr/lib/gcc", "/opt")
SYSTEM_EXECUTE = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/opt")
# device files a process may open for reading and writing; never the /dev folder itself, which holds
# /dev/shm (other solutions' output folders) and, for root, raw disks
PLAIN_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
GPU_DEVICE_PATTERNS = ("/dev/nvidia*", "/dev/nvidia-caps/*", "/dev/dri/*")
GPU_DEVICE_FOLDERS = ("/dev/nvidia-caps", "/dev/dri")


@dataclass(frozen=True)
class BoxSpec:
    """Paths (folders or files) a boxed process may read, write and execute; all else is refused.

    A folder's rights cover everything beneath it. `list_only` folders may only be listed (their files
    stay unreadable unless granted elsewhere). Write includes read and everything that changes a
    folder's contents, never execute. A path that does not exist is skipped when the box is applied."""

    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    execute: tuple[str, ...] = ()
    list_only: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("read", "write", "execute", "list_only"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(p, str) for p in value):
                raise TypeError(f"BoxSpec.{name} must be a list of path strings")
            object.__setattr__(self, name, tuple(os.path.abspath(p) for p in value))

    def to_dict(self) -> dict[str, Any]:
        return {"read": list(self.read), "write": list(self.write), "execute": list(self.execute),
                "list_only": list(self.list_only)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "BoxSpec":
        return cls(**{k: data.get(k, ()) for k in ("read", "write", "execute", "list_only")})

    def readable(self) -> tuple[str, ...]:
        return self.read + self.write + self.execute


def _contains(parent: str, child: str) -> bool:
    parent, child = os.path.abspath(parent), os.path.abspath(child)
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def hidden_paths(extra: Iterable[str] = ()) -> list[str]:
    """Folders a boxed process must never see; a candidate read path holding one of them is dropped."""
    paths = [os.path.expanduser("~"), "/tmp", "/var/tmp", "/dev/shm", default_cache_dir()]
    return [os.path.abspath(p) for p in [*paths, *extra] if p]


def _site_dirs() -> list[str]:
    dirs = [p for p in sys.path if p and os.path.basename(p.rstrip("/")) in ("site-packages", "dist-packages")]
    try:
        dirs += site.getsitepackages()
    except AttributeError:  # old virtualenv's site module
        pass
    if site.ENABLE_USER_SITE and site.USER_SITE in sys.path:
        dirs.append(site.USER_SITE)
    return dirs


def package_folder() -> str:
    """The kerneljudge package this process runs (an installed copy or an editable source tree)."""
    return str(Path(__file__).resolve().parent.parent)


def _cuda_dirs() -> list[str]:
    found = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", "")]
    found += glob.glob("/usr/local/cuda*")
    return [p for p in found if p]


def _keep(candidates: Iterable[str], hidden: list[str]) -> list[str]:
    """Existing paths, without duplicates, none of which contains (or is) a hidden folder."""
    kept: list[str] = []
    for path in candidates:
        path = os.path.abspath(path)
        if path in kept or not os.path.exists(path):
            continue
        if any(_contains(path, h) for h in hidden):
            continue
        kept.append(path)
    return kept


def default_read_paths(hidden: Iterable[str] = ()) -> list[str]:
    """What Python, torch, Triton, a compiler and CUDA need to read here (the execute paths included)."""
    prefixes = [sys.base_prefix, sys.prefix, sys.base_exec_prefix, sys.exec_prefix,
                os.path.dirname(os.path.realpath(sys.executable))]
    candidates = [*SYSTEM_READ, *prefixes, *_site_dirs(), package_folder(), *_cuda_dirs()]
    return _keep(candidates, hidden_paths(hidden))


def header_roots() -> list[str]:
    """Where the headers a build includes come from: the system's, Python's and its packages', CUDA's."""
    prefixes = [sys.base_prefix, sys.prefix, sys.base_exec_prefix, sys.exec_prefix]
    return [*SYSTEM_HEADERS, *prefixes, *_site_dirs(), *_cuda_dirs()]


def default_execute_paths(hidden: Iterable[str] = ()) -> list[str]:
    """Where programs a build or a JIT runs live: the system, Python's prefixes (ninja), site-packages
    (Triton's ptxas) and the CUDA toolkit."""
    prefixes = [sys.base_prefix, sys.prefix, os.path.dirname(os.path.realpath(sys.executable))]
    return _keep([*SYSTEM_EXECUTE, *prefixes, *_site_dirs(), *_cuda_dirs()], hidden_paths(hidden))


def default_list_paths() -> list[str]:
    """Folders that may be listed but not read: the parent of an editable package (the import system lists
    it), and the GPU's device folders."""
    parent = os.path.dirname(package_folder())
    listed = [] if parent in _site_dirs() else [parent]
    return _keep([*listed, *GPU_DEVICE_FOLDERS], hidden_paths())


def device_paths(gpu: bool = True) -> list[str]:
    """Character devices a process may open read-write: the plain ones, and the GPU's when `gpu`."""
    paths = list(PLAIN_DEVICES)
    if gpu:
        for pattern in GPU_DEVICE_PATTERNS:
            paths += sorted(p for p in glob.glob(pattern) if not os.path.isdir(p))
    return [p for p in paths if os.path.exists(p)]


def solution_box(scratch: str, exchange: str, extra_read: Iterable[str] = (), gpu: bool = True,
                 shm: bool = False) -> BoxSpec:
    """A solution process: writes only its scratch and output-exchange folders (and device files); reads
    the system, Python and its packages, and `extra_read` (the problem and solution files).

    `shm` also lets it create, read and write files in /dev/shm, which torch's CUDA IPC needs once, for
    its reference-counter file: meant for a first, wider box that a narrower one (without it) follows
    once the worker has made that file (see launch's "then")."""
    write = [scratch, exchange, *device_paths(gpu), *(["/dev/shm"] if shm else [])]
    return BoxSpec(read=[*default_read_paths(), *extra_read], write=write, execute=default_execute_paths(),
                   list_only=default_list_paths())


def build_box(build_dir: str, also_read: Iterable[str] = ()) -> BoxSpec:
    """A build of a solution's C++/CUDA sources: writes only its own build folder (and reads `also_read`,
    the builder's precompiled headers)."""
    return BoxSpec(read=[*default_read_paths(), *also_read], write=[build_dir, *device_paths(gpu=False)],
                   execute=default_execute_paths(), list_only=default_list_paths())


def exposed(spec: BoxSpec, paths: Iterable[str]) -> list[str]:
    """Those of `paths` a process in `spec` could read (a sign the allow-list is too wide for them)."""
    return [p for p in paths if any(_contains(granted, p) for granted in spec.readable())]


# The folders under a scratch folder that boxed_env points tools at. Besides Triton, torch's extensions and
# the driver's PTX cache: the JIT caches of the other solution backends (docs/backends.md): CuPy's kernel
# cache, Numba's, Helion's (its autotune records and the Triton cache it would set up for itself), torch
# inductor's (Helion lowers through it), the CuTe DSL's compiled-kernel cache and artefact dumps, TileLang's kernel
# cache (its generated CUDA, cubins and host libraries) and TVM-FFI's (where it would build its torch DLPack addon).
# cuda.core needs none: NVRTC keeps nothing on disk, and its opt-in program cache lives under XDG_CACHE_HOME.
SCRATCH_FOLDERS = ("tmp", "cache", "cache/triton", "cache/torch_extensions", "cache/nv", "cache/cupy", "cache/numba",
                   "cache/helion", "cache/inductor", "cache/cute_dsl", "cache/cute_dsl_dump", "cache/tilelang",
                   "cache/tvm_ffi")

# variable -> folder under the scratch folder (boxed_env); every one differs per solution, so a warm
# template is never keyed by them (judging/warm_start.py)
SCRATCH_CACHE_ENV = {"XDG_CACHE_HOME": "cache", "TRITON_CACHE_DIR": "cache/triton",
                     "TORCH_EXTENSIONS_DIR": "cache/torch_extensions", "CUDA_CACHE_PATH": "cache/nv",
                     "CUPY_CACHE_DIR": "cache/cupy", "NUMBA_CACHE_DIR": "cache/numba",
                     "HELION_CACHE_DIR": "cache/helion", "TORCHINDUCTOR_CACHE_DIR": "cache/inductor",
                     "CUTE_DSL_CACHE_DIR": "cache/cute_dsl", "CUTE_DSL_DUMP_DIR": "cache/cute_dsl_dump",
                     "TILELANG_CACHE_DIR": "cache/tilelang", "TVM_FFI_CACHE_DIR": "cache/tvm_ffi"}
SCRATCH_ENV = ("TMPDIR", "TMP", "TEMP", "HOME", *SCRATCH_CACHE_ENV)


def prepare_scratch(scratch: str) -> None:
    """Create the folders boxed_env points into (before the boxed process starts, so it owns none of
    the path above them)."""
    for sub in SCRATCH_FOLDERS:
        os.makedirs(os.path.join(scratch, sub), mode=0o700, exist_ok=True)


def seed_scratch_cache(template: str, scratch: str) -> int:
    """Copy a trusted, pre-warmed cache folder (say a Triton cache made by a warm-up kernel the judge ran
    itself) into a scratch folder's cache/, so each solution does not recompile Triton's own helper
    modules. Regular files only, copied (never linked: a solution may change its copy, not the template).
    Returns how many files were copied; a missing template copies nothing."""
    import shutil

    copied = 0
    for root, dirs, files in os.walk(template, followlinks=False):
        relative = os.path.relpath(root, template)
        target = os.path.normpath(os.path.join(scratch, "cache", relative))
        os.makedirs(target, mode=0o700, exist_ok=True)
        for name in files:
            source = os.path.join(root, name)
            if os.path.islink(source) or not os.path.isfile(source):
                continue
            shutil.copyfile(source, os.path.join(target, name), follow_symlinks=False)
            copied += 1
    return copied


def boxed_env(env: dict[str, str], scratch: str) -> dict[str, str]:
    """`env` with every place a tool writes by default moved inside `scratch` (see prepare_scratch).

    HOME points at the scratch folder too: tools that write under ~ (~/.triton, ~/.nv, ~/.cache,
    ~/.config, ~/.cupy, ~/.tilelang) then stay inside the box, and a solution that looks for the judge's files under ~
    finds its own folder. Every JIT cache a solution backend keeps is named explicitly as well
    (SCRATCH_CACHE_ENV), so none depends on HOME or TMPDIR being honoured. Bytecode is not written
    (PYTHONDONTWRITEBYTECODE) rather than redirected: a PYTHONPYCACHEPREFIX would make Python ignore the
    installed __pycache__ and recompile torch."""
    out = dict(env)
    tmp = os.path.join(scratch, "tmp")
    out.update(TMPDIR=tmp, TMP=tmp, TEMP=tmp, HOME=scratch, PYTHONDONTWRITEBYTECODE="1")
    out.update({name: os.path.join(scratch, folder) for name, folder in SCRATCH_CACHE_ENV.items()})
    out.pop("PYTHONPYCACHEPREFIX", None)
    # packages installed with `pip --user` are found through HOME; keep finding them where they are
    if site.ENABLE_USER_SITE and site.USER_SITE in sys.path and "PYTHONUSERBASE" not in env:
        out["PYTHONUSERBASE"] = site.getuserbase()
    return out
