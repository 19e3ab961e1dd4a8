"""One GPU's memory as the device itself reports it, read by the orchestrator without a CUDA context.

The judge admits judgements to a GPU against this account (judging/device/turns.py): what the card reports in use is
everything on it, CUDA contexts, parked models and allocator caches of every process included, so admission
needs no estimate of what the processes outside the admitted judgements hold. `--device-memory SIZE` makes the
account smaller than the card (a 24 GB card's budget on an 80 GB one), contexts included.

    memory = DeviceMemory.of_gpu("0", limit_bytes=None)   # None where nvidia-smi cannot tell
    memory.capacity        # bytes the judge may fill: the card's (or the limit), less a margin
    memory.used()          # bytes in use on the card now (read at most every READ_EVERY_S)
    memory.held_by(pids)   # bytes the device lists for these processes and their descendants (None: no list)

The device's own list of processes using memory (nvidia-smi --query-compute-apps) tells whose memory it is: what
the admitted judgements' processes hold, what the judge's other processes still hold after they were told to give
it back, and whether a judgement tried again alone has the card to itself.
"""

from __future__ import annotations

import subprocess
import threading
import time
from typing import Any, Callable, Iterable

from kerneljudge.judging.process_group import process_tree

MIB = 1 << 20
# what a solution's process holds on the device beyond its problem's data, counted in its judgement's need since it
# makes it once admitted: its CUDA context (torch 2.11, CUDA 13, lazy module loading: about 0.5 GB on an H100 and
# an H200) and the NaN-poisoned block its allocator keeps for the outputs to come (worker/common.py, up to 2 GiB)
CONTEXT_BYTES = 640 * MIB
POISON_BYTES = 2 << 30
SOLUTION_PROCESS_BYTES = CONTEXT_BYTES + POISON_BYTES
# kept free of the account: the driver's own use, and fragmentation of the processes' allocator caches
MARGIN_SHARE = 0.05
MARGIN_MIN_BYTES = 1 << 30
READ_EVERY_S = 0.5          # nvidia-smi takes ~50 ms; admission asks far more often while judgements wait
SETTLE_STEP_S = 0.5
SETTLED_BYTES = 256 * MIB   # two readings this close: the processes have handed back what they were told to
# what a reference process may still hold once it serves no admitted judgement: its CUDA context, cuBLAS and cuDNN
# workspaces; more, and it is closed (judging/device/reference_pool.py)
RESIDUAL_BYTES = CONTEXT_BYTES + 512 * MIB


def query_gpus(field: str, gpu: str = "") -> list[str]:
    """One nvidia-smi field per GPU (of one GPU, by index or UUID), without units; none where it cannot run."""
    try:
        done = subprocess.run(["nvidia-smi", *([f"--id={gpu}"] if gpu else []), f"--query-gpu={field}",
                               "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


def read_mib(field: str, gpu: str) -> int | None:
    """One memory field of one GPU in bytes (nvidia-smi answers in MiB), or None."""
    try:
        return int(float(query_gpus(field, gpu)[0])) * MIB
    except (ValueError, IndexError):
        return None


def read_processes(gpu: str) -> dict[int, int] | None:
    """Bytes of device memory per process on one GPU, from the device's own list; None where it cannot be read.
    A process whose figure the driver does not give ("[N/A]") is left out."""
    try:
        done = subprocess.run(["nvidia-smi", f"--id={gpu}", "--query-compute-apps=pid,used_memory",
                               "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    found: dict[int, int] = {}
    for line in done.stdout.splitlines():
        pid, _, used = (part.strip() for part in line.partition(","))
        try:
            found[int(pid)] = found.get(int(pid), 0) + int(float(used)) * MIB
        except ValueError:
            continue
    return found


def margin(total_bytes: int) -> int:
    return max(MARGIN_MIN_BYTES, int(total_bytes * MARGIN_SHARE))


class Reading:
    """One nvidia-smi reading, taken again at most every READ_EVERY_S (admission asks far more often), or at once
    when asked `fresh`."""

    def __init__(self, read: Callable[[], Any]):
        self._read = read
        self._lock = threading.Lock()
        self._last: tuple[float, Any] = (-1e9, None)

    def get(self, fresh: bool = False) -> Any:
        with self._lock:
            at, value = self._last
            if fresh or time.monotonic() - at >= READ_EVERY_S:
                value = self._read()
                self._last = (time.monotonic(), value)
            return value


class DeviceMemory:
    def __init__(self, total_bytes: int, read_used: Callable[[], int | None], limit_bytes: int | None = None,
                 read_processes: Callable[[], dict[int, int] | None] | None = None):
        self.total = total_bytes
        self.limit = min(total_bytes, limit_bytes) if limit_bytes else total_bytes
        self.capacity = max(0, self.limit - margin(self.limit))
        self._used = Reading(read_used)
        self._processes = Reading(read_processes) if read_processes is not None else None

    @classmethod
    def of_gpu(cls, gpu: str, limit_bytes: int | None = None) -> DeviceMemory | None:
        total = read_mib("memory.total", gpu)
        if not total or read_mib("memory.used", gpu) is None:
            return None
        return cls(total, lambda: read_mib("memory.used", gpu), limit_bytes, lambda: read_processes(gpu))

    def used(self, fresh: bool = False) -> int | None:
        """Bytes in use on the card (a reading at most READ_EVERY_S old, unless `fresh`); None if unreadable."""
        return self._used.get(fresh)

    def processes(self, fresh: bool = False) -> dict[int, int] | None:
        """Bytes per process on the card (a reading at most READ_EVERY_S old, unless `fresh`); None if unreadable."""
        return self._processes.get(fresh) if self._processes is not None else None

    def held_by(self, pids: Iterable[int], fresh: bool = False) -> int | None:
        """Bytes the device lists for `pids` and their descendants (a boxed solution's memory is its box's
        worker's, two levels down); None where the list cannot be read."""
        listed = self.processes(fresh)
        if listed is None:
            return None
        tree = {p for pid in pids if pid for p in process_tree(pid)}
        return sum(listed.get(p, 0) for p in tree)

    def settle(self, timeout_s: float = 10.0) -> int | None:
        """Read until the use stops falling (processes told to hand memory back have done so), at most
        `timeout_s`; the last reading."""
        deadline = time.monotonic() + timeout_s
        last = self.used(fresh=True)
        while last is not None and time.monotonic() < deadline:
            time.sleep(SETTLE_STEP_S)
            now = self.used(fresh=True)
            if now is None or last - now < SETTLED_BYTES:
                return now
            last = now
        return last

    def describe(self, used: int | None) -> dict[str, int]:
        """The figures a verdict reports about the card at a moment."""
        found = {"device_total_bytes": self.total, "judge_limit_bytes": self.limit}
        if used is not None:
            found.update(device_used_bytes=used, device_free_bytes=max(0, self.total - used))
        return found
