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

    def start(self) -> None:
        self.started = True

    def close(self) -> None:
        self.closed = True

    def prepare(self, path, preset, seed) -> None:
        self.prepared.append((path, tuple(preset.items()), seed))

    def park(self, wait: bool = True) -> None:
        self.parked += 1

    @property
    def pid(self) -> None:
        return None


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


def test_close_idle_closes_idle_processes_but_the_kept_and_the_general_one():
    pool = ReferencePool(FakeService, limit=4)
    general = pool.acquire("a")
    b = pool.acquire("b")
    c = pool.acquire("c")
    pool.release(c)
    d = pool.acquire("d")
    pool.release(d)
    pool.release(general)
    assert pool.users(b) == 1 and pool.users(c) == 0
    assert pool.close_idle(keep=d) == 1                # c: idle; b: busy; d: kept; general: never
    assert c.closed and not b.closed and not d.closed and not general.closed
    assert pool.acquire("c") is not c                  # a new process for c next time


def test_an_idle_process_parks_its_models_in_a_turn_unless_it_is_used_again():
    pool = ReferencePool(FakeService, limit=4)
    a = pool.acquire("a")
    assert pool.release(a) == 0
    turns_taken = []
    gate = threading.Event()

    class Turn:
        def __enter__(self):
            gate.wait(5)

        def __exit__(self, *exc):
            turns_taken.append(1)   # the park (or not) happened inside the turn
            return False

    pool.park_when_idle(a, Turn)
    assert pool.acquire("a") is a                      # used again before its turn came: nothing is parked
    gate.set()
    assert wait_until(lambda: turns_taken == [1]) and a.parked == 0
    pool.release(a)
    pool.park_when_idle(a, Turn)
    assert wait_until(lambda: turns_taken == [1, 1]) and a.parked == 1


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
