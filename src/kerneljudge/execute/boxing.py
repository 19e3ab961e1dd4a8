"""The box around each solution process, seen from the orchestrator (the layers: kerneljudge/sandbox).

For every solution the orchestrator makes two private folders before the process starts (Landlock binds
its rules to paths that exist when it is applied): a scratch folder (its working directory, TMPDIR, HOME
and every JIT cache) and an output-exchange folder in shared memory. The process is started through the
box's launcher with an allow-list that lets it write only those two folders and the device files, and read
the system, Python and its packages, the problem file and its own solution file: not the judge's cache,
run logs, other solutions' folders or the home folder. Where CUDA IPC is wanted the box starts one notch
wider (torch writes its IPC reference counter in /dev/shm once) and the worker narrows it before the
solution is loaded.

Where a layer is missing on this machine (probe()), solutions still run with what is there, every verdict
carries the flag `unsandboxed` and the verdict's `sandbox` names what is missing; `--require-sandbox`
refuses to judge instead. The line on stderr is printed once per process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from ..sandbox import launch, probing
from ..sandbox import spec as box_spec

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
            import sys

            print(probing.describe(report), file=sys.stderr, flush=True)
    return report


@dataclass
class SolutionBox:
    """The folders, environment and command line of one boxed solution process."""

    scratch: str
    exchange: str
    env: dict[str, str]
    wrap: Callable[[str, list[str]], list[str]] | None
    report: probing.SandboxReport
    ipc_counters: set[str] = field(default_factory=set)

    def verdict_fields(self, reported: dict[str, Any] | None) -> dict[str, Any]:
        """The verdict's `sandbox`: what this machine offers, and what the worker said before solution code
        ran (its namespaces, Landlock, the narrowing step)."""
        found = {"layers": list(self.report.layers), "missing": list(self.report.missing),
                 "landlock_abi": self.report.landlock_abi}
        if reported:
            found["process"] = reported
        return found

    def remember_ipc(self, metas: Any) -> None:
        """torch's IPC reference-counter files a solution's exports created in /dev/shm, removed at the end."""
        for meta in metas if isinstance(metas, list) else []:
            counter = meta.get("counter") if isinstance(meta, dict) else None
            if isinstance(counter, str):
                try:
                    name = bytes.fromhex(counter).decode()
                except ValueError:
                    continue
                if name.startswith("/") and "/" not in name[1:] and name[1:].startswith("torch_"):
                    self.ipc_counters.add(os.path.join("/dev/shm", name[1:]))

    def remove(self) -> None:
        """After the process is dead: its folders and counter files go."""
        shutil.rmtree(self.scratch, ignore_errors=True)
        shutil.rmtree(self.exchange, ignore_errors=True)
        for path in self.ipc_counters:
            with contextlib.suppress(OSError):
                os.remove(path)


def make_box(report: probing.SandboxReport, base_env: dict[str, str], read: list[str], device: str,
             ipc: bool) -> SolutionBox:
    """Folders, environment and launcher for one solution (`read`: its problem and solution files)."""
    scratch = tempfile.mkdtemp(prefix="kj-box-")
    box_spec.prepare_scratch(scratch)
    exchange = tempfile.mkdtemp(prefix="kj-out-", dir=exchange_root())
    env = box_spec.boxed_env(base_env, scratch)
    wrap = None
    if report.layers:
        gpu = device == "cuda"
        wider = ipc and gpu
        box = box_spec.solution_box(scratch, exchange, extra_read=read, gpu=gpu, shm=wider)
        narrow = box_spec.solution_box(scratch, exchange, extra_read=read, gpu=gpu) if wider else None

        def wrap(module: str, args: list[str]) -> list[str]:
            return launch.argv(box, module, args, then=narrow)

    return SolutionBox(scratch, exchange, env, wrap, report)


def exchange_root() -> str | None:
    """Shared memory when the machine has it: outputs pass through RAM, not disk."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
