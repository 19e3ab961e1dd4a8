"""Which CPU cores do what: quiet cores for the processes that time on a device, the rest for builds.

A timed call of a 0.1 ms kernel is mostly the host launching it, so a timing process that shares its core
with a compiler measures the compiler. The layout keeps `reserved` cores per device slot for the two
processes that time there (the trusted reference process, and a solution's process while it holds the
device); builds and solutions waiting for a device run on the other cores, builds at a lower priority.

    layout = plan_cores(slots=1, device="cuda", threads=1, reserved=None)
    layout.timing[0]   # cores of slot 0's timing processes, e.g. (14, 15)
    layout.builds      # every other core, e.g. (0, ..., 13)
    pin_tree(pid, layout.timing[0])

`reserved=None` picks: 2 per GPU slot where at least two cores per slot stay for builds, else 1, else none;
on the CPU the timed process runs `threads` threads, so it reserves that many when two cores stay for builds.
With no cores reserved every process may use every core (`layout.active` is False).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from kerneljudge.judging.process_group import process_tree


@dataclass(frozen=True)
class CoreLayout:
    timing: tuple[tuple[int, ...], ...]  # per device slot
    builds: tuple[int, ...]
    everything: tuple[int, ...]

    @property
    def active(self) -> bool:
        return any(self.timing)

    def describe(self) -> str:
        if not self.active:
            return f"no cores reserved: every process may use cores {_ranges(self.everything)}"
        slots = "; ".join(f"device slot {i}: cores {_ranges(c)}" for i, c in enumerate(self.timing))
        return f"timing processes pinned ({slots}); builds and waiting solutions on cores {_ranges(self.builds)}"


def available_cores() -> tuple[int, ...]:
    try:
        return tuple(sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return tuple(range(os.cpu_count() or 1))


def plan_cores(slots: int, device: str, threads: int = 1, reserved: int | None = None,
               cores: tuple[int, ...] | None = None) -> CoreLayout:
    cores = tuple(cores) if cores is not None else available_cores()
    slots = max(1, slots)
    per_slot = _auto_reserved(len(cores), slots, device, threads) if reserved is None else reserved
    if per_slot <= 0 or per_slot * slots >= len(cores):  # nothing would be left for builds
        return CoreLayout(tuple(() for _ in range(slots)), cores, cores)
    # reserve from the top, where the OS tends to put less (cores 0.. take interrupts and stray work)
    timing = tuple(cores[len(cores) - (i + 1) * per_slot: len(cores) - i * per_slot] for i in range(slots))
    return CoreLayout(timing, cores[: len(cores) - per_slot * slots], cores)


def _auto_reserved(n_cores: int, slots: int, device: str, threads: int) -> int:
    if device != "cuda":  # only where two cores stay for builds: a lone build core would slow builds down more
        return max(1, threads) if n_cores - max(1, threads) >= 2 else 0
    for per_slot in (2, 1):
        if n_cores - per_slot * slots >= 2 * slots:
            return per_slot
    return 0


def pin_tree(pid: int, cores: tuple[int, ...]) -> int:
    """Set the affinity of every thread of `pid` and of all its descendants; the number of threads pinned.

    Threads started later inherit it from the thread that starts them. Processes that end meanwhile are
    skipped (pinning is best effort: it never decides a verdict)."""
    if not cores:
        return 0
    pinned = 0
    for proc in process_tree(pid):
        try:
            tids = [int(t) for t in os.listdir(f"/proc/{proc}/task")]
        except OSError:
            continue
        for tid in tids:
            try:
                os.sched_setaffinity(tid, cores)
                pinned += 1
            except OSError:
                pass
    return pinned


def lower_priority(pid: int, niceness: int = 10) -> None:
    """Builds yield to everything else on their cores."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, niceness)
    except OSError:
        pass


def _ranges(cores: tuple[int, ...]) -> str:
    if not cores:
        return "(none)"
    parts, start, prev = [], cores[0], cores[0]
    for c in cores[1:] + (None,):
        if c is not None and c == prev + 1:
            prev = c
            continue
        parts.append(f"{start}-{prev}" if prev > start else str(start))
        if c is not None:
            start = prev = c
    return ",".join(parts)
