"""One GPU's memory as the device itself reports it, read by the orchestrator without a CUDA context.

The judge admits judgements to a GPU against this account (judging/device/turns.py): what the card reports in use is
everything on it, CUDA contexts, parked models and allocator caches of every process included, so admission
needs no estimate of what the processes outside the admitted judgements hold. `--device-memory SIZE` makes the
account smaller than the card (a 24 GB card's budget on an 80 GB one), contexts included.

    memory = DeviceMemory.of_gpu("0", limit_bytes=None)   # None where nvidia-smi cannot tell
    memory.capacity        # bytes the judge may fill: the card's (or the limit), less a margin
    memory.used()          # bytes in use on the card now (read at most every READ_EVERY_S)
"""

from __future__ import annotations

import subprocess
import threading
import time
from typing import Callable

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


def margin(total_bytes: int) -> int:
    return max(MARGIN_MIN_BYTES, int(total_bytes * MARGIN_SHARE))


class DeviceMemory:
    def __init__(self, total_bytes: int, read_used: Callable[[], int | None], limit_bytes: int | None = None):
        self.total = total_bytes
        self.limit = min(total_bytes, limit_bytes) if limit_bytes else total_bytes
        self.capacity = max(0, self.limit - margin(self.limit))
        self._read_used = read_used
        self._lock = threading.Lock()
        self._last: tuple[float, int | None] = (-1e9, None)

    @classmethod
    def of_gpu(cls, gpu: str, limit_bytes: int | None = None) -> DeviceMemory | None:
        total = read_mib("memory.total", gpu)
        if not total or read_mib("memory.used", gpu) is None:
            return None
        return cls(total, lambda: read_mib("memory.used", gpu), limit_bytes)

    def used(self, fresh: bool = False) -> int | None:
        """Bytes in use on the card (a reading at most READ_EVERY_S old, unless `fresh`); None if unreadable."""
        with self._lock:
            at, value = self._last
            if fresh or time.monotonic() - at >= READ_EVERY_S:
                value = self._read_used()
                self._last = (time.monotonic(), value)
            return value

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
