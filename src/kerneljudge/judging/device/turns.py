"""Whose turn it is on a device: checks may share it, timing has it alone.

Checking a solution (its reference outputs, trials, held-out shapes) only needs the device to compute the
right values, which it does whoever else runs there: each process has its own CUDA context, and no value
crosses between them. Timing needs the device to itself. So several solutions may be checked at once (up to
a limit the caller names), while a timing phase waits until the device is empty and keeps everyone else out
until it ends. A timing phase that waits stops new checks from starting, so timing never starves behind a
stream of checks. Since a judgement keeps its inputs, outputs and the reference's kept outputs on the device
between its turns, at most the same limit of judgements are admitted to the device at once (`Hold`), and,
where the device's memory can be read (judging/device/memory.py), only as many as their problems' memory needs fit
in beside what the card reports in use by everything else (`need` bytes each; the first is always admitted).
Only admitted judgements hold device memory: a solution's process creates its CUDA context at its first turn.
Judgements are admitted in the order they asked, so a large need is never passed over for ever by small ones. A
judgement admitted with limit 1 has the device's memory to itself: no other is admitted beside it.

    turns = DeviceTurns()
    with turns.shared(limit=4):   # reference outputs, trials: up to four solutions at once
        ...
    with turns.alone():           # interleaved timing, device clock: no one else on the device
        ...
"""

from __future__ import annotations

import collections
import contextlib
import threading
import time
from typing import Any, Callable, Iterable, Iterator

from kerneljudge.judging.device import memory as device_memory
from kerneljudge.judging.device.memory import DeviceMemory


CHECKS_AT_ONCE_GPU = 4   # solutions checked on one GPU at once, unless the options say otherwise
# A solution whose expected outputs are larger than this is checked alone: the reference process keeps a few
# expected outputs of every solution it checks at once (three 1.25 GiB outputs for a KernelBench-sized
# elementwise problem), besides the inputs and outputs each solution holds on the device meanwhile.
SHARED_OUTPUT_BYTES = 1 << 30
# Share of a device's memory the admitted judgements' needs may add up to where the card's use cannot be read
# (then the rest is for the processes outside the admitted judgements: reference processes' contexts and caches).
ADMITTED_MEMORY_SHARE = 0.6
RECLAIM_EVERY_S = 5.0   # at most this often, a judgement waiting for memory asks for idle processes to be closed
# The first judgement is admitted however large; where its need does not fit beside what the card has in use outside
# it, the idle processes holding that memory are closed first, for at most this long
FIRST_RECLAIM_WAIT_S = 15.0
# At most as many judgements are admitted as are checked at once: admitting twice as many gained no wall time on
# the H200 and filled the memory more (cuDNN then picked other algorithms in one process than in the other).


def checks_at_once(options: Any, device: str) -> int:
    """How many solutions may be checked on one device at once: `options.checks_at_once`, else four on a GPU
    (each holds its model, inputs and outputs in device memory meanwhile) and one on the CPU (whose cores
    the builds need)."""
    chosen = getattr(options, "checks_at_once", None)
    if chosen:
        return max(1, int(chosen))
    return CHECKS_AT_ONCE_GPU if device == "cuda" else 1


def judgement_memory_budget(total_bytes: int) -> int:
    """Bytes one judgement may need on a device of `total_bytes` where it is admitted beside nothing else."""
    return int(total_bytes * ADMITTED_MEMORY_SHARE)


class DeviceTurns:
    """`memory`: the card's own account (judging/device/memory.py); without it, `memory_bytes` (the card's size)
    gives a fixed budget of ADMITTED_MEMORY_SHARE; with neither, admission is by count alone. `reclaim(memory)` is
    called (in a thread of its own, at most every RECLAIM_EVERY_S) while a judgement waits for memory: the caller
    closes processes that hold device memory and serve no admitted judgement."""

    def __init__(self, memory_bytes: int = 0, memory: DeviceMemory | None = None,
                 reclaim: Callable[[DeviceMemory], Any] | None = None) -> None:
        self._cond = threading.Condition()
        self._sharing = 0           # checking phases on the device now
        self._alone = False         # a timing phase holds the device
        self._waiting_alone = 0     # timing phases waiting for their turn
        self._entries = 0           # checking phases started so far
        self._admitted = 0          # judgements with state on the device (Hold: from first turn to release)
        self._reserved = 0          # the admitted judgements' memory needs, in bytes
        self._sole = False          # a judgement admitted with limit 1 holds the device's memory alone
        self._queue: collections.deque[int] = collections.deque()   # tickets of the judgements waiting, in order
        self._tickets = 0
        # per admitted judgement (by its ticket): the processes whose device memory is its (its solution's, its
        # reference's), where the caller named them
        self._holders: dict[int, Callable[[], Iterable[int]]] = {}
        self.memory = memory
        self.reclaim = reclaim
        self._reclaimed_at = -1e9
        self._reclaiming = False    # a reclaim runs now
        self._reclaims_ended = 0    # reclaims that have ended (and the card's use settled after them)
        self._first_wait: tuple[int, int, float] | None = None   # (ticket, reclaims to have ended, deadline)
        self._outside_idle = 0      # what the card had in use when no judgement was admitted, at the last look
        # 0: the device's memory is not known
        self.budget = memory.capacity if memory else judgement_memory_budget(memory_bytes)

    def admit(self, limit: int, need: int = 0, pids: Callable[[], Iterable[int]] | None = None) -> int:
        """Wait for this judgement's turn in order of asking (first come, first admitted: a large need is never
        passed over for ever by small ones), until fewer than `limit` judgements have state on the device (their
        inputs, outputs and the reference's kept outputs stay there between their turns) and `need` more bytes
        fit in the budget; then count one more. With limit 1: until no one else is admitted, and keep everyone
        else out. `pids`: the processes whose device memory is this judgement's (the card's per-process figures
        then tell what is in use outside the admitted judgements). Returns the key for leave()."""
        sole = max(1, limit) == 1
        with self._cond:
            self._tickets += 1
            ticket = self._tickets
            self._queue.append(ticket)
            try:
                # with the card's account, look again now and then: memory is handed back without a notify
                while not (self._queue[0] == ticket and self._admissible(limit, need, sole, ticket)):
                    self._cond.wait(0.5 if self.memory else None)
            finally:
                self._queue.remove(ticket)
                self._cond.notify_all()   # the next in line may fit now
            self._admitted += 1
            self._reserved += max(0, need)
            self._sole = sole
            if pids is not None:
                self._holders[ticket] = pids
            return ticket

    def _admissible(self, limit: int, need: int, sole: bool, ticket: int) -> bool:
        if self._sole:
            return False
        if sole:
            return self._admitted == 0
        if self._admitted >= max(1, limit):
            return False
        if self.memory is not None:
            return self._fits_card(need, ticket)
        return self._admitted == 0 or not self.budget or self._reserved + need <= self.budget

    def _fits_card(self, need: int, ticket: int) -> bool:
        """Whether `need` more bytes fit beside the admitted judgements and what the card has in use outside them.
        With the device's per-process figures: outside is all in use less what the admitted judgements' processes
        hold, and each admitted judgement counts its need or, where its processes already hold more, that. Without
        them: outside is measured whole when none is admitted; otherwise what is in use beyond the admitted needs
        now (a process started since shows there), or, where more, that measurement, but never more than all in use
        now (what was handed back since shows there). A generous need must not hide memory held outside: hence the
        per-process figures where the device lists them."""
        used = self.memory.used()
        if used is None:
            return self._admitted == 0 or self._reserved + need <= self.budget
        if self._admitted == 0:
            self._outside_idle = used
            return self._first_may_enter(need, used, ticket)
        inside = self._held_inside()
        if inside is not None:
            outside, admitted = max(0, used - inside), max(self._reserved, inside)
        else:
            outside, admitted = max(used - self._reserved, min(self._outside_idle, used)), self._reserved
        if admitted + need <= self.memory.capacity - outside:
            return True
        self._ask_reclaim()
        return False

    def _first_may_enter(self, need: int, used: int, ticket: int) -> bool:
        """The first judgement is always admitted, however large (its need may be a generous estimate beyond the
        card). But where it does not fit beside what the card has in use with no judgement admitted (reference
        processes serving none, with their models, caches and contexts), that memory is reclaimed first: it waits
        until one reclaim asked for now has ended and the card's use settled, or FIRST_RECLAIM_WAIT_S. (On the H100
        this alone did not keep upstream's 6 GiB problems from running out of memory in the batch: judgements
        admitted without a need figure sat beside them; shape_budget.planned_need gives them one now.)"""
        if need <= self.memory.capacity - used or self.reclaim is None:
            self._first_wait = None
            return True
        wait = self._first_wait
        if wait is None or wait[0] != ticket:
            # a reclaim that runs now may have looked before these processes were idle: the next one counts
            self._first_wait = (ticket, self._reclaims_ended + (2 if self._reclaiming else 1),
                                time.monotonic() + FIRST_RECLAIM_WAIT_S)
            self._ask_reclaim(now=True)
            return False
        if self._reclaims_ended >= wait[1] or time.monotonic() >= wait[2]:
            self._first_wait = None
            return True
        self._ask_reclaim(now=True)   # the one running when it asked has ended: the next
        return False

    def _held_inside(self) -> int | None:
        """Bytes the device lists for the admitted judgements' processes; None where it lists none or some
        admitted judgement did not name its processes."""
        if self.memory is None or len(self._holders) != self._admitted:
            return None
        try:   # admission must never fail for a process that ended while its id was read
            pids = {pid for named in self._holders.values() for pid in named() if pid}
        except Exception:
            return None
        return self.memory.held_by(pids) if pids else None

    def _ask_reclaim(self, now: bool = False) -> None:
        """Start a reclaim in a thread of its own (called with the condition held), unless one runs, or, unless
        `now`, one started less than RECLAIM_EVERY_S ago."""
        at = time.monotonic()
        if self.reclaim is None or self._reclaiming or (not now and at - self._reclaimed_at < RECLAIM_EVERY_S):
            return
        self._reclaimed_at, self._reclaiming = at, True
        threading.Thread(target=self._reclaim_and_settle, name="kj-reclaim-device-memory", daemon=True).start()

    def _reclaim_and_settle(self) -> None:
        try:
            closed = self.reclaim(self.memory)
            if closed and self.memory is not None:   # the closed processes' memory goes back as they end
                self.memory.settle()
        finally:
            with self._cond:
                self._reclaiming = False
                self._reclaims_ended += 1
                self._cond.notify_all()

    def leave(self, need: int = 0, key: int | None = None) -> None:
        with self._cond:
            self._holders.pop(key, None)
            self._admitted -= 1
            self._reserved = max(0, self._reserved - max(0, need))
            if self._admitted == 0:
                self._sole = False
            self._cond.notify_all()

    def take_shared(self, limit: int) -> tuple[int, bool]:
        """Wait until no timing phase holds or waits for the device and fewer than `limit` share it. Returns
        (a mark for drop_shared, whether another check is on the device)."""
        limit = max(1, limit)
        with self._cond:
            self._cond.wait_for(lambda: not self._alone and not self._waiting_alone and self._sharing < limit)
            self._sharing += 1
            self._entries += 1
            return self._entries, self._sharing > 1

    def drop_shared(self, mark: int = 0) -> bool:
        """End a checking phase; True when another one started on the device since `mark` (take_shared's)."""
        with self._cond:
            self._sharing -= 1
            self._cond.notify_all()
            return bool(mark) and self._entries != mark

    def take_alone(self) -> None:
        """Wait until no one else is on the device, then hold it alone."""
        with self._cond:
            self._waiting_alone += 1
            try:
                self._cond.wait_for(lambda: not self._alone and self._sharing == 0)
            finally:
                self._waiting_alone -= 1
            self._alone = True

    def drop_alone(self) -> None:
        with self._cond:
            self._alone = False
            self._cond.notify_all()

    @contextlib.contextmanager
    def shared(self, limit: int = 1) -> Iterator[None]:
        mark, _ = self.take_shared(limit)
        try:
            yield
        finally:
            self.drop_shared(mark)

    @contextlib.contextmanager
    def alone(self) -> Iterator[None]:
        self.take_alone()
        try:
            yield
        finally:
            self.drop_alone()

    @contextlib.contextmanager
    def to_itself(self) -> Iterator[None]:
        """The device alone, with no other judgement admitted to its memory (a failure tried again alone)."""
        self.admit(1)
        try:
            with self.alone():
                yield
        finally:
            self.leave()

    def busy(self) -> bool:
        with self._cond:
            return self._alone or self._sharing > 0

    def status(self) -> dict[str, int | bool]:
        with self._cond:
            found = {"checking": self._sharing, "timing": self._alone, "waiting_to_time": self._waiting_alone,
                     "admitted": self._admitted, "reserved_bytes": self._reserved, "budget_bytes": self.budget}
        if self.memory is not None:
            found["device_used_bytes"] = self.memory.used() or 0
        return found


class Hold:
    """One judgement's turns on a device, switched between checking (shared) and timing (alone) as its phases
    go. Its first turn waits to be admitted (at most `limit` judgements have state on the device at once);
    release() ends its last turn and makes room. `need`: the bytes of device memory the judgement is expected to
    hold (its problem's, ReferenceService.device_need; None: not known); `sole()` is called once it is admitted
    with limit 1 (no other judgement on the device's memory). `waited(seconds)` hears of every wait;
    `timing(True/False)` of every start and end of a turn alone (where the caller moves the solution's process
    onto the quiet cores and off them again); `pids()` names the processes whose device memory is the
    judgement's (DeviceTurns.admit)."""

    def __init__(self, turns: DeviceTurns, limit: int, waited: Callable[[float], None],
                 timing: Callable[[bool], None] = lambda alone: None, need: int | None = 0,
                 sole: Callable[[], None] = lambda: None, pids: Callable[[], Iterable[int]] | None = None):
        self.turns, self.limit, self._waited, self._timing, self._sole = turns, limit, waited, timing, sole
        self._pids = pids
        self._key: int | None = None
        # a problem whose need is not known yet is taken for an even share of the budget; on a GPU the solution
        # process's own device memory counts too (its context and poisoned block, made at the first turn)
        self.need = (need if need is not None else turns.budget // max(1, limit)) \
            + (device_memory.SOLUTION_PROCESS_BYTES if turns.budget else 0)
        self.mode = ""   # "", "shared" or "alone"
        self.admitted = False
        self.alone_only = False   # checks too take the device alone (a large problem)
        self.crowded = False   # another solution was checked on the device during one of our checks
        self._mark = 0

    def check(self) -> None:
        if self.alone_only:
            self.time()
        elif self.mode != "shared":
            started = self._switch()
            self._mark, others = self.turns.take_shared(self.limit)
            self._waited(time.monotonic() - started)
            self.crowded |= others
            self.mode = "shared"

    def time(self) -> None:
        if self.mode != "alone":
            started = self._switch()
            self.turns.take_alone()
            self._waited(time.monotonic() - started)
            self.mode = "alone"
            self._timing(True)

    def check_alone(self) -> None:
        """From now on, checks too have the device alone."""
        self.alone_only = True
        self.time()

    def release(self) -> None:
        """End the current turn and leave the device."""
        try:
            self._drop()
        finally:
            if self.admitted:
                self.admitted = False
                self.turns.leave(self.need, self._key)

    def _switch(self) -> float:
        """End the current turn (being admitted first if this is the first); when the wait began."""
        started = time.monotonic()
        self._drop()
        if not self.admitted:
            self._key = self.turns.admit(self.limit, self.need, self._pids)
            self.admitted = True
            if max(1, self.limit) == 1:
                self._sole()   # the device's memory is this judgement's alone now
        return started

    def _drop(self) -> None:
        mode, self.mode = self.mode, ""
        if mode == "shared":
            self.crowded |= self.turns.drop_shared(self._mark)
        elif mode == "alone":
            try:
                self._timing(False)
            finally:
                self.turns.drop_alone()
