"""The box around each solution process, seen from the orchestrator (the layers: kerneljudge/sandbox).

For every solution the orchestrator makes two private folders before the process starts (Landlock binds
its rules to paths that exist when it is applied): a scratch folder (its working directory, TMPDIR, HOME
and every JIT cache) and an output-exchange folder in shared memory. The process is started through the
box's launcher with an allow-list that lets it write only those two folders and the device files, and read
the system, Python and its packages, the problem file and its own solution file: not the judge's cache,
run logs, other solutions' folders or the home folder. The box is the same from the start to the end: CUDA IPC
needs no file in /dev/shm (worker/cuda_driver.py), so no wider first box is needed.

Where a layer is missing on this machine (probe()), solutions still run with what is there, every verdict
carries the flag `unsandboxed` and the verdict's `sandbox` names what is missing; `--require-sandbox`
refuses to judge instead. The line on stderr is printed once per process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import Any

from kerneljudge.sandbox import launch, probing
from kerneljudge.sandbox import spec as box_spec

_said = threading.Event()


class SandboxRequired(RuntimeError):
    """--require-sandbox was given and a layer of the box is missing on this machine."""


def session_report(require: bool = False) -> probing.SandboxReport:
    """What the box is made of here (measured once per process); says so on stderr once if incomplete."""
    report = probing.probe()
    if not report.complete:
        if require:
            raise SandboxRequired(f"{probing.describe(report)} (and --require-sandbox was given)")
        if not _said.is_set():
            _said.set()
            print(probing.describe(report), file=sys.stderr, flush=True)
    return report


@dataclass
class SolutionBox:
    """The folders, environment and command line of one boxed solution process."""

    scratch: str
    exchange: str
    env: dict[str, str]
    spec: dict[str, Any] | None   # the launcher's spec (sandbox/launch.make_spec); None: no layer to set up
    report: probing.SandboxReport

    def wrap(self, module: str, args: list[str]) -> list[str]:
        """The cold command line: the box's launcher when there is a box, else a plain interpreter."""
        if self.spec is None:
            return [sys.executable, "-u", "-m", module, *args]
        return launch.command(self.spec, module, args)

    def verdict_fields(self, reported: dict[str, Any] | None) -> dict[str, Any]:
        """The verdict's `sandbox`: what this machine offers, and what the worker said before solution code
        ran (its namespaces, Landlock, the narrowing step)."""
        found = {"layers": list(self.report.layers), "missing": list(self.report.missing),
                 "landlock_abi": self.report.landlock_abi}
        if reported:
            found["process"] = reported
        return found

    def remove(self) -> None:
        """After the process is dead: its folders go."""
        shutil.rmtree(self.scratch, ignore_errors=True)
        shutil.rmtree(self.exchange, ignore_errors=True)


def make_box(report: probing.SandboxReport, base_env: dict[str, str], read: list[str], device: str,
             cache_template: str | None = None) -> SolutionBox:
    """Folders, environment and launcher for one solution (`read`: its problem and solution files;
    `cache_template`: a trusted, pre-warmed JIT cache copied into its scratch, see triton_template)."""
    scratch = tempfile.mkdtemp(prefix="kj-box-")
    box_spec.prepare_scratch(scratch)
    if cache_template:
        box_spec.seed_scratch_cache(cache_template, scratch)
    exchange = tempfile.mkdtemp(prefix="kj-out-", dir=exchange_root())
    env = box_spec.boxed_env(base_env, scratch)
    spec = None
    if report.layers:
        spec = launch.make_spec(box_spec.solution_box(scratch, exchange, extra_read=read, gpu=device == "cuda"))
    return SolutionBox(scratch, exchange, env, spec, report)


def start_env(base_env: dict[str, str]) -> dict[str, str]:
    """The environment a solution process starts with, but for its own folders (a warm template's key)."""
    return box_spec.boxed_env(base_env, tempfile.gettempdir())


def exchange_root() -> str | None:
    """Shared memory when the machine has it: outputs pass through RAM, not disk."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


_TRITON_WARMUP = """
import torch
import triton
import triton.language as tl


@triton.jit
def _add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


x = torch.zeros(1000, device="cuda")
_add_one[(1,)](x, 1000, BLOCK=1024)
torch.cuda.synchronize()
"""
_template_lock = threading.Lock()


def triton_template(cache_dir: str, env: dict[str, str]) -> str | None:
    """A Triton cache warmed by one trivial kernel the judge runs itself (never solution code), made once per
    cache folder and Triton version. Each Triton solution starts with a copy, so it does not pay for
    compiling Triton's own driver helpers in its fresh cache (about 0.6 s on an H200). None if it cannot be
    made (then solutions start with an empty cache, as before)."""
    try:
        import importlib.metadata

        version = importlib.metadata.version("triton")
    except Exception:
        return None
    root = os.path.join(cache_dir, "jit-templates", f"triton-{version}")
    with _template_lock:
        if os.path.isdir(root):
            return root
        work = tempfile.mkdtemp(prefix=".making-", dir=os.path.dirname(root) if _mkdirs(root) else None)
        script = os.path.join(work, "warmup.py")
        with open(script, "w") as f:
            f.write(_TRITON_WARMUP)
        made = os.path.join(work, "cache")
        run_env = {**env, "TRITON_CACHE_DIR": os.path.join(made, "triton")}
        run_env.pop("TRITON_INTERPRET", None)
        import subprocess

        try:
            done = subprocess.run([sys.executable, script], env=run_env, capture_output=True, timeout=300)
            ok = done.returncode == 0 and os.path.isdir(made)
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if ok:
            with contextlib.suppress(OSError):
                os.replace(made, root)
        shutil.rmtree(work, ignore_errors=True)
        return root if os.path.isdir(root) else None


def _mkdirs(path: str) -> bool:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return True
    except OSError:
        return False
