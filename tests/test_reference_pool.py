"""The reference processes of a slot, one per problem (judging/device/reference_pool.py), with stand-in services."""

from __future__ import annotations

import threading
from pathlib import Path

from kerneljudge.judging.device import reference_pool
from kerneljudge.judging.device.reference_pool import ReferencePool, process_limit


class FakeService:
    made = 0

    def __init__(self) -> None:
        FakeService.made += 1
        self.name = f"service{FakeService.made}"
        self.env: dict[str, str] = {}
        self.cores: tuple[int, ...] = ()
        self.environment = {"device_name": "fake"}
        self.started = self.closed = False
        self.prepared: list[tuple] = []
        self.parked = 0
        self.kept: list[tuple] = []      # what each park was told to keep
        self.park_reply: dict = {}
        self.fake_pid: int | None = None

    def start(self) -> None:
        self.started = True

    def close(self, wait: bool = True) -> None:
        self.closed = True
        self.fake_pid = None

    def prepare(self, path, preset, seed) -> None:
        self.prepared.append((path, tuple(preset.items()), seed))

    def park(self, wait: bool = True, keep: tuple = ()) -> dict:
        self.parked += 1
        self.kept.append(tuple(keep))
        return self.park_reply

    @property
    def pid(self) -> int | None:
        return self.fake_pid


class ListedMemory:
    """The device's per-process figures, as a dict pid -> bytes (no descendants)."""

    def __init__(self, listed: dict[int, int]):
        self.listed = listed

    def held_by(self, pids, fresh: bool = False) -> int:
        return sum(self.listed.get(p, 0) for p in pids)


def test_first_problem_takes_the_general_process_and_others_get_their_own():
    pool = ReferencePool(FakeService, limit=3, idle_cores=(0, 1))
    first = pool.acquire("a")
    assert first is pool.general and first.started and first.cores == (0, 1)
    second = pool.acquire("b")
    assert second is not first and second.cores == (0, 1)
    assert pool.acquire("a") is first          # the same problem, the same process
    for s in (first, second, first):
        pool.release(s)


def test_at_the_limit_an_idle_process_goes_and_busy_ones_are_shared():
    pool = ReferencePool(FakeService, limit=2)
    a = pool.acquire("a")
    b = pool.acquire("b")
    pool.release(b)
    c = pool.acquire("c")                      # b is idle: closed to make room
    assert b.closed and c is not b and not a.closed
    d = pool.acquire("d")                      # a and c are busy: d shares one, nothing is closed
    assert d in (a, c) and not a.closed and not c.closed
    pool.close()
    assert a.closed and c.closed


def test_the_general_process_is_never_closed_to_make_room():
    pool = ReferencePool(FakeService, limit=1)
    a = pool.acquire("a")
    pool.release(a)
    b = pool.acquire("b")
    assert b is a and not a.closed             # shared: the general process answers hello and counts too


def test_prepare_runs_in_the_background_on_the_problems_process():
    pool = ReferencePool(FakeService, limit=4)
    pool.acquire("a")
    before = set(threading.enumerate())
    pool.prepare("b", "/p/b.py", {"n": 3}, 7)
    for t in set(threading.enumerate()) - before:
        t.join(5)
    b = pool.acquire("b")
    assert b.prepared == [("/p/b.py", (("n", 3),), 7)]


def test_process_limit_follows_free_memory():
    gib = 1 << 30
    assert process_limit("cpu", 1000 * gib) == 1
    assert process_limit("cuda", 0) == 1
    assert process_limit("cuda", 10 * reference_pool.PROCESS_MEMORY_BYTES) == 10
    assert process_limit("cuda", 1000 * gib) == reference_pool.MOST_PROCESSES


def test_a_pool_judges_two_problems_in_two_reference_processes(cache_dir, monkeypatch):
    """Real child processes: with room for several reference processes, each problem gets its own, its model
    is prepared ahead, and solutions of the same problem share one model (one init seed per problem)."""
    from kerneljudge.judging.executors import local as pool_module
    from kerneljudge.judging import shapes
    from kerneljudge.judging.executors.local import JudgePool
    from kerneljudge.core.problem import read_problem
    from kerneljudge.core.types import JudgeOptions

    from .conftest import FIXTURES

    monkeypatch.setattr(pool_module, "process_limit", lambda device, available: 3)
    options = JudgeOptions(device="cpu", policy="lenient", timing=False, held_out=False, trials=2,
                           cache_dir=cache_dir)
    problems = [read_problem(FIXTURES / "problems" / name) for name in ("scale_relu.py", "row_sum.py")]
    solutions = {"scale_relu.py": FIXTURES / "solutions" / "hack_fallback_torch.py",
                 "row_sum.py": FIXTURES / "solutions" / "correct_triton_row_sum.py"}
    with JudgePool(options, workers=2) as pool:
        futures = []
        for problem in problems + problems[:1]:
            plan = shapes.resolve(problem, cache_dir)
            futures.append(pool.submit(problem, solutions[Path(problem.path).name], plan=plan))
        verdicts = [f.result(timeout=300) for f in futures]
        slot = pool.slots.get(pool.options)[0]
        services = {id(s) for s in slot.reference._by_problem.values()}
        seeds = dict(slot.init_seeds)
    assert [v.verdict for v in verdicts] == ["correct", "correct", "correct"], [v.reason for v in verdicts]
    assert len(services) == 2 and len(seeds) == 2


def test_a_process_parks_what_no_admitted_judgement_uses_when_one_leaves_the_device():
    pool = ReferencePool(FakeService, limit=4)
    shared = pool.acquire("a")
    pool.entered(shared, "a.py")
    pool.entered(shared, "b.py")                       # a busy process serves two problems' judgements
    pool.left(shared, "a.py")
    assert shared.kept == [("b.py",)] and not shared.closed   # b's model stays; a's is parked
    pool.entered(shared, "b.py")
    pool.left(shared, "b.py")
    assert shared.kept[-1] == ("b.py",)                # another judgement of b is still admitted
    pool.left(shared, "b.py")
    assert shared.kept[-1] == () and pool.serving(shared) == ()


def test_a_process_that_keeps_memory_serving_no_judgement_is_closed(capsys):
    gib = 1 << 30
    pool = ReferencePool(FakeService, limit=4)
    a = pool.acquire("a")
    a.fake_pid = 501
    memory = ListedMemory({501: 19 * gib})           # it parked, but the device still lists 19 GiB for it
    a.park_reply = {"allocated_bytes": 18 * gib, "largest_tensors": ["(4096, 393216) float32 6144 MiB"],
                    "dropped_expected": 3}
    pool.entered(a, "a.py")
    pool.left(a, "a.py", memory)
    assert a.closed
    said = capsys.readouterr().err
    assert "kept 19.0 GiB" in said and "(4096, 393216) float32" in said and "3 expected outputs dropped" in said
    b = pool.acquire("b")
    b.fake_pid = 502
    pool.entered(b, "b.py")
    assert not pool.give_back(b, ListedMemory({502: 20 * gib}))   # still serving b: never closed
    pool.left(b, "b.py", ListedMemory({502: 500 << 20}))           # a context's worth is left: kept open
    assert not b.closed


def test_reclaim_closes_what_serves_no_admitted_judgement_and_holds_memory_or_nothing():
    gib = 1 << 30
    pool = ReferencePool(FakeService, limit=6)
    general, busy, waiting, idle, small = (pool.acquire(k) for k in "abcde")
    for i, s in enumerate((general, busy, waiting, idle, small)):
        s.fake_pid = 600 + i
    pool.release(idle)
    pool.release(small)
    pool.release(general)
    pool.entered(busy, "b.py")                         # on the device now: never closed
    memory = ListedMemory({600: 5 * gib, 601: 30 * gib, 602: 12 * gib, 603: 1 * gib})
    assert pool.reclaim(memory) == 4
    assert general.closed and waiting.closed and idle.closed and small.closed and not busy.closed
    assert pool.acquire("d") is not idle               # the idle one was forgotten: a new process
    assert pool.acquire("c") is waiting                # the busy one is the same service, started again


def test_a_process_whose_judgement_is_admitted_while_others_close_is_not_closed():
    """reclaim closes one process after another (each waits for its request in flight): a judgement admitted in the
    meantime keeps its process, and the expected outputs it holds (on the H100 one lost them: a KeyError)."""
    gib = 1 << 30
    pool = ReferencePool(FakeService, limit=6)
    general, first, second = pool.acquire("a"), pool.acquire("b"), pool.acquire("c")
    for i, s in enumerate((general, first, second)):
        s.fake_pid = 800 + i
    memory = ListedMemory({800: 2 * gib, 801: 2 * gib, 802: 2 * gib})
    closing = first.close

    def slow_close(wait: bool = True) -> None:   # while it closes, c's judgement is admitted and enters
        closing(wait)
        pool.entered(second, "c.py")
    first.close = slow_close
    pool.reclaim(memory)
    assert first.closed and not second.closed
    # and give_back: a judgement admitted between its park and its close keeps the process too
    pool.left(second, "c.py")
    second.park_reply = {"allocated_bytes": 3 * gib}
    parking = second.park

    def park_then_admitted(wait: bool = True, keep: tuple = ()) -> dict:
        reply = parking(wait, keep)
        pool.entered(second, "c.py")
        return reply
    second.park = park_then_admitted
    assert not pool.give_back(second, memory) and not second.closed


def test_close_all_but_closes_every_other_process_busy_or_not():
    pool = ReferencePool(FakeService, limit=4)
    general, b, c = pool.acquire("a"), pool.acquire("b"), pool.acquire("c")
    for i, s in enumerate((general, b, c)):
        s.fake_pid = 700 + i
    pool.release(c)
    assert sorted(pool.close_all_but(b)) == [700, 702]
    assert general.closed and c.closed and not b.closed


def wait_until(condition, seconds: float = 5.0) -> bool:
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def test_a_judgement_waits_for_its_problems_preparation_outside_any_turn():
    release = threading.Event()

    class SlowService(FakeService):
        def prepare(self, path, preset, seed) -> None:
            release.wait(5)
            super().prepare(path, preset, seed)

    pool = ReferencePool(SlowService, limit=4)
    assert pool.wait_prepared("a") == 0.0              # nothing started: nothing to wait for
    pool.prepare("a", "a.py", {}, 1)
    waited: list[float] = []
    waiter = threading.Thread(target=lambda: waited.append(pool.wait_prepared("a")))
    waiter.start()
    waiter.join(0.3)
    assert waiter.is_alive()                            # the model is still being drawn
    release.set()
    waiter.join(5)
    assert not waiter.is_alive() and waited[0] >= 0.25
    assert pool.wait_prepared("a") == 0.0


def test_park_others_parks_every_process_but_the_kept_one_used_or_not():
    pool = ReferencePool(FakeService, limit=4)
    general, b, c = pool.acquire("a"), pool.acquire("b"), pool.acquire("c")
    pool.release(c)
    pool.park_others(keep=b)
    assert general.parked == 1 and c.parked == 1 and b.parked == 0
