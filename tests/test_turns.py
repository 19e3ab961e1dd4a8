"""Turns on a device: checks share it up to a limit, timing has it alone, and a waiting timing phase goes first."""

from __future__ import annotations

import threading
import time

from .conftest import FIXTURES, wait_for

from kerneljudge.judging.executors.local import JudgePool
from kerneljudge.judging.device.memory import SOLUTION_PROCESS_BYTES, DeviceMemory
from kerneljudge.judging.device.turns import DeviceTurns, Hold, checks_at_once
from kerneljudge.core.problem import read_problem
from kerneljudge.core.types import JudgeOptions


def _start(target) -> threading.Thread:
    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t


def test_checks_share_up_to_the_limit():
    turns = DeviceTurns()
    assert turns.take_shared(2) == (1, False)
    assert turns.take_shared(2) == (2, True)
    third = _start(lambda: turns.take_shared(2))
    assert not wait_for(lambda: not third.is_alive(), 0.3, every=0.01)      # a third check waits
    turns.drop_shared()
    third.join(5)
    assert not third.is_alive() and turns.status()["checking"] == 2


def test_timing_waits_for_checks_to_end_and_keeps_new_ones_out():
    turns = DeviceTurns()
    turns.take_shared(4)
    timer = _start(turns.take_alone)
    assert wait_for(lambda: turns.status()["waiting_to_time"] == 1, 5.0, every=0.01)
    late_check = _start(lambda: turns.take_shared(4))
    time.sleep(0.2)
    # the device has room for more checks, but a timing phase is waiting: the new check waits behind it
    assert late_check.is_alive() and timer.is_alive()
    turns.drop_shared()
    timer.join(5)
    assert not timer.is_alive() and turns.status()["timing"] and not turns.status()["checking"]
    assert late_check.is_alive()                               # nothing shares the device with a timing phase
    turns.drop_alone()
    late_check.join(5)
    assert not late_check.is_alive() and turns.status()["checking"] == 1


def test_one_timing_phase_at_a_time():
    turns = DeviceTurns()
    turns.take_alone()
    second = _start(turns.take_alone)
    assert not wait_for(lambda: not second.is_alive(), 0.3, every=0.01)
    turns.drop_alone()
    second.join(5)
    assert not second.is_alive() and turns.busy()


def test_a_hold_switches_turns_and_reports_waits_and_timing():
    turns = DeviceTurns()
    waits, timing = [], []
    hold = Hold(turns, 2, waits.append, timing.append)
    hold.check()
    hold.check()                                               # already checking: nothing changes
    assert turns.status()["checking"] == 1 and timing == []
    hold.time()
    assert turns.status() == {"checking": 0, "timing": True, "waiting_to_time": 0, "admitted": 1,
                              "reserved_bytes": 0, "budget_bytes": 0}
    assert timing == [True]
    hold.check()
    assert timing == [True, False] and turns.status()["checking"] == 1
    hold.release()
    assert not turns.busy() and len(waits) == 3 and all(w >= 0 for w in waits)
    assert turns.status()["admitted"] == 0
    assert not hold.crowded                                    # it was checked alone every time


def test_a_hold_knows_when_another_check_shared_the_device():
    turns = DeviceTurns()
    first, second, later = (Hold(turns, 2, lambda s: None) for _ in range(3))
    first.check()
    second.check()          # the device already had a check on it
    second.release()
    first.release()         # another check came while it was on the device
    later.check()
    later.release()         # alone throughout
    assert first.crowded and second.crowded and not later.crowded


def test_checks_at_once_defaults_and_option():
    assert checks_at_once(JudgeOptions(device="cpu"), "cpu") == 1
    assert checks_at_once(JudgeOptions(device="cpu"), "cuda") == 4
    assert checks_at_once(JudgeOptions(device="cpu", checks_at_once=3), "cuda") == 3


class _RecordingTurns(DeviceTurns):
    """DeviceTurns that checks, at every change, that timing never shares the device, and keeps a log."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, int]] = []
        self.most_checking = 0
        self.broken: list[str] = []

    def _note(self, what: str) -> None:
        state = self.status()
        self.most_checking = max(self.most_checking, int(state["checking"]))
        if state["timing"] and state["checking"]:
            self.broken.append(f"{what}: {state}")
        self.log.append((what, threading.get_ident()))

    def take_shared(self, limit: int) -> tuple[int, bool]:
        taken = super().take_shared(limit)
        self._note("check")
        return taken

    def take_alone(self) -> None:
        super().take_alone()
        self._note("time")


def test_a_pool_checks_two_solutions_at_once_and_times_each_alone(cache_dir):
    options = JudgeOptions(device="cpu", policy="lenient", trials=2, time_budget_s=0.2, cache_dir=cache_dir,
                           checks_at_once=2)
    problem = read_problem(FIXTURES / "problems" / "scale_relu.py")
    with JudgePool(options, workers=2) as pool:
        turns = pool.lanes[0].turns = _RecordingTurns()
        futures = [pool.submit(problem, FIXTURES / "solutions" / "torch_plain.py") for _ in range(2)]
        verdicts = [f.result(300) for f in futures]
    assert [v.verdict for v in verdicts] == ["correct", "correct"] and all(v.speedup for v in verdicts)
    assert not turns.broken and turns.most_checking <= 2
    # each judgement: checks (reference outputs, trials), one turn alone (timing, profile, device clock),
    # then checks again (held-out shapes)
    for thread in {t for _, t in turns.log}:
        assert [w for w, t in turns.log if t == thread] == ["check", "time", "check"]
    assert all("wait_for_device" in v.phases_s for v in verdicts)


class _AlwaysCrowded(DeviceTurns):
    """Turns where another solution always seems to be checked at the same time."""

    def __init__(self) -> None:
        super().__init__()
        self.checks_taken = 0

    def take_shared(self, limit: int) -> tuple[int, bool]:
        mark, _ = super().take_shared(limit)
        self.checks_taken += 1
        return mark, True


OOM_SOLUTION = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        raise RuntimeError("CUDA out of memory. Tried to allocate 80.00 GiB")
'''


def test_running_out_of_memory_beside_other_checks_is_judged_again_alone(cache_dir, tmp_path):
    from kerneljudge.api import Judge

    solution = tmp_path / "oom.py"
    solution.write_text(OOM_SOLUTION)
    options = JudgeOptions(device="cpu", policy="lenient", trials=2, timing=False, cache_dir=cache_dir,
                           checks_at_once=2)
    with Judge(options, warm_start=False) as judge:
        judge.slot.turns = turns = _AlwaysCrowded()
        verdict = judge.judge(FIXTURES / "problems" / "scale_relu.py", solution)
        # the second judgement checks alone, so it can neither be crowded nor run a third time
        assert verdict.verdict == "runtime_error" and "checked_alone_again" in verdict.flags
        assert turns.checks_taken == 2
        # where the first attempt failed, and the device's turns as it ended, for the sweep report
        first = verdict.first_attempt
        assert first["verdict"] == "runtime_error" and "out of memory" in first["error"]
        assert first["failed_in"] == "trials" and first["device"]["admitted"] == 0
        assert abs(verdict.ended_at - time.time()) < 600   # when it was reached: a run's timeline
        plain = judge.judge(FIXTURES / "problems" / "scale_relu.py", FIXTURES / "solutions" / "torch_plain.py")
        assert plain.verdict == "correct" and "checked_alone_again" not in plain.flags
        assert plain.first_attempt is None


OOM_AT_IMPORT = OOM_SOLUTION.replace("import torch.nn as nn\n", "import torch.nn as nn\n\nraise RuntimeError("
                                     "\"CUDA error: out of memory\")  # its CUDA context, before any turn\n")


def test_running_out_of_memory_before_any_turn_is_judged_again_alone(cache_dir, tmp_path):
    from kerneljudge.api import Judge

    solution = tmp_path / "oom_at_import.py"
    solution.write_text(OOM_AT_IMPORT)
    options = JudgeOptions(device="cpu", policy="lenient", trials=2, timing=False, cache_dir=cache_dir,
                           checks_at_once=2)
    with Judge(options, warm_start=False) as judge:
        verdict = judge.judge(FIXTURES / "problems" / "scale_relu.py", solution)
    # the device was never held when it failed, so the failure may be other processes' memory: judged again
    assert verdict.verdict != "correct" and "checked_alone_again" in verdict.flags
    alone = JudgeOptions(device="cpu", policy="lenient", trials=2, timing=False, cache_dir=cache_dir,
                         checks_at_once=1)
    with Judge(alone, warm_start=False) as judge:
        verdict = judge.judge(FIXTURES / "problems" / "scale_relu.py", solution)
    assert "checked_alone_again" not in verdict.flags   # checking alone already: nothing to judge again


def test_at_most_limit_judgements_keep_state_on_the_device():
    turns = DeviceTurns()
    first, second, third = (Hold(turns, 2, lambda s: None) for _ in range(3))
    first.check()
    second.check()
    second._drop()          # between two of its turns: no phase on the device, but its outputs are there
    assert turns.status()["checking"] == 1 and turns.status()["admitted"] == 2
    entered = threading.Event()
    _start(lambda: (third.check(), entered.set()))
    assert not entered.wait(0.3)     # room for another check phase, none for another judgement's state
    second.release()
    assert entered.wait(5) and turns.status()["admitted"] == 2 and turns.status()["checking"] == 2


def test_a_large_problem_keeps_the_device_alone_after_its_reference_outputs(cache_dir, monkeypatch):
    from kerneljudge.judging.device import turns as turns_module

    monkeypatch.setattr(turns_module, "SHARED_OUTPUT_BYTES", 0)    # every problem counts as large
    options = JudgeOptions(device="cpu", policy="lenient", trials=2, time_budget_s=0.2, cache_dir=cache_dir,
                           checks_at_once=2)
    problem = read_problem(FIXTURES / "problems" / "scale_relu.py")
    with JudgePool(options, workers=2) as pool:
        turns = pool.lanes[0].turns = _RecordingTurns()
        verdicts = [f.result(300) for f in [pool.submit(problem, FIXTURES / "solutions" / "torch_plain.py")
                                            for _ in range(2)]]
    assert [v.verdict for v in verdicts] == ["correct", "correct"] and not turns.broken
    # the reference outputs are computed in a shared turn; everything after them in one turn alone
    for thread in {t for _, t in turns.log}:
        assert [w for w, t in turns.log if t == thread] == ["check", "time"]


def test_admission_counts_memory_needs_within_the_budget():
    turns = DeviceTurns(memory_bytes=100)          # a budget of 60 bytes (ADMITTED_MEMORY_SHARE)
    assert turns.budget == 60
    turns.admit(4, need=40)
    small = _start(lambda: turns.admit(4, need=20))
    small.join(5)
    assert not small.is_alive() and turns.status()["reserved_bytes"] == 60
    large = _start(lambda: turns.admit(4, need=30))  # would go over the budget: waits, though the count allows it
    assert not wait_for(lambda: not large.is_alive(), 0.3, every=0.01)
    turns.leave(40)
    large.join(5)
    assert not large.is_alive() and turns.status()["reserved_bytes"] == 50
    turns.leave(20)
    turns.leave(30)
    huge = _start(lambda: turns.admit(4, need=500))  # larger than the whole budget: admitted when alone
    huge.join(5)
    assert not huge.is_alive() and turns.status()["admitted"] == 1
    turns.leave(500)
    for _ in range(4):                                     # the count still limits small needs
        turns.admit(4, need=1)
    one_more = _start(lambda: turns.admit(4, need=1))
    assert not wait_for(lambda: not one_more.is_alive(), 0.3, every=0.01)
    turns.leave(1)
    one_more.join(5)
    assert not one_more.is_alive()


def test_a_judgement_admitted_with_limit_one_has_the_memory_to_itself():
    turns = DeviceTurns()
    turns.admit(4)
    sole = _start(lambda: turns.admit(1))
    assert not wait_for(lambda: not sole.is_alive(), 0.3, every=0.01)   # waits for the one admitted to leave
    other = _start(lambda: turns.admit(4))         # and nobody is admitted past it while it waits
    assert not wait_for(lambda: not other.is_alive(), 0.3, every=0.01)
    turns.leave()
    sole.join(5)
    assert not sole.is_alive() and other.is_alive()  # admitted; the other still waits until it leaves
    turns.leave()
    other.join(5)
    assert not other.is_alive() and turns.status()["admitted"] == 1


def test_a_hold_of_unknown_need_takes_an_even_share_of_the_budget():
    turns = DeviceTurns(memory_bytes=1000)
    hold = Hold(turns, 4, lambda s: None, need=None)
    assert hold.need == turns.budget // 4 + SOLUTION_PROCESS_BYTES   # and the solution process's own
    hold.check()
    assert turns.status()["reserved_bytes"] == hold.need
    hold.release()
    assert turns.status()["reserved_bytes"] == 0


def test_a_hold_admitted_with_limit_one_says_so_once():
    told = []
    turns = DeviceTurns()
    shared = Hold(turns, 4, lambda s: None, sole=lambda: told.append("shared"))
    shared.check()
    shared.release()
    sole = Hold(turns, 1, lambda s: None, sole=lambda: told.append("sole"))
    sole.check()
    sole.time()
    sole.check()
    sole.release()
    assert told == ["sole"]


def test_admission_is_first_come_first_admitted():
    turns = DeviceTurns(memory_bytes=100)          # a budget of 60 bytes
    turns.admit(4, need=40)
    large = _start(lambda: turns.admit(4, need=50))  # waits for room
    assert not wait_for(lambda: not large.is_alive(), 0.2, every=0.01)
    small = _start(lambda: turns.admit(4, need=10))  # would fit now, but the large one asked first
    assert not wait_for(lambda: not small.is_alive(), 0.3, every=0.01)
    turns.leave(40)
    large.join(5)
    small.join(5)
    assert not large.is_alive() and not small.is_alive() and turns.status()["reserved_bytes"] == 60


def test_admission_against_the_cards_own_account():
    # a 100 GiB card (5 GiB margin); the card's use is whatever the stand-in reading says
    gib = 1 << 30
    use = {"now": 10 * gib}
    memory = DeviceMemory(100 * gib, lambda: use["now"])
    memory.used = lambda fresh=False: use["now"]     # no caching in the test
    asked = []
    turns = DeviceTurns(memory=memory, reclaim=lambda m: asked.append(1))
    turns.admit(4, need=50 * gib)            # the first always; 10 GiB in use outside it, measured now
    use["now"] = 30 * gib                     # it has allocated part of its need
    turns.admit(4, need=30 * gib)            # 50 + 30 <= 95 - max(10, 30 - 50)
    late = _start(lambda: turns.admit(4, need=10 * gib))   # 90 + 10 > 95 - 10: waits
    assert not wait_for(lambda: not late.is_alive(), 0.3, every=0.01)
    assert wait_for(lambda: asked, 2, every=0.01)           # and asks for idle processes to be closed
    turns.leave(30 * gib)
    late.join(5)
    assert not late.is_alive()
    turns.leave(50 * gib)
    turns.leave(10 * gib)
    # another process (not a judgement) took 80 GiB while nobody was admitted: measured at the next admission
    use["now"] = 80 * gib
    turns.admit(4, need=1 * gib)
    blocked = _start(lambda: turns.admit(4, need=20 * gib))   # 1 + 20 > 95 - 80
    assert not wait_for(lambda: not blocked.is_alive(), 0.3, every=0.01)
    use["now"] = 20 * gib                     # it went away: no more than all in use now is outside
    blocked.join(5)
    assert not blocked.is_alive() and turns.status()["admitted"] == 2


def test_the_first_judgement_waits_for_idle_processes_to_go_where_it_does_not_fit_beside_them():
    # 60 GiB held by processes that serve no judgement (idle reference processes' caches): the first judgement is
    # admitted however large, but only once they were asked to go and the card's use settled
    gib = 1 << 30
    use = {"now": 60 * gib}
    memory = DeviceMemory(100 * gib, lambda: use["now"])
    memory.used = lambda fresh=False: use["now"]
    reclaims = []

    def reclaim(m):
        reclaims.append(use["now"])
        time.sleep(0.2)
        use["now"] = 5 * gib
        return 2                                   # two processes closed

    turns = DeviceTurns(memory=memory, reclaim=reclaim)
    first = _start(lambda: turns.admit(4, need=50 * gib))   # 50 > 95 - 60
    assert wait_for(lambda: not first.is_alive(), 5, every=0.01)
    assert reclaims == [60 * gib] and use["now"] == 5 * gib and turns.status()["admitted"] == 1
    turns.leave(50 * gib)
    # one that fits beside what is in use is admitted at once, with nothing closed
    turns.admit(4, need=80 * gib)
    assert reclaims == [60 * gib]
    turns.leave(80 * gib)
    # a reclaim that frees nothing does not keep it out: it is the first, admitted however large
    use["now"] = 60 * gib
    freed_nothing = DeviceTurns(memory=memory, reclaim=lambda m: reclaims.append("none") or 0)
    started = time.monotonic()
    freed_nothing.admit(4, need=200 * gib)
    assert reclaims[-1] == "none" and time.monotonic() - started < 5
    # without a way to reclaim, as before: at once
    DeviceTurns(memory=memory).admit(4, need=200 * gib)


def test_memory_held_outside_the_admitted_judgements_counts_however_generous_their_needs():
    # the device lists each process: pid 11 and 12 are the admitted judgement's, pid 99 is an idle process that
    # kept 60 GiB. Without the list, the admitted need (80 GiB, generous) would hide those 60 GiB.
    gib = 1 << 30
    listed = {11: 8 * gib, 12: 2 * gib}
    memory = DeviceMemory(100 * gib, lambda: sum(listed.values()), read_processes=lambda: dict(listed))
    memory.used = lambda fresh=False: sum(listed.values())
    memory.processes = lambda fresh=False: dict(listed)
    turns = DeviceTurns(memory=memory, reclaim=lambda m: None)
    turns.admit(4, need=80 * gib, pids=lambda: [11, 12])
    listed[99] = 60 * gib                                            # measured after the first was admitted
    late = _start(lambda: turns.admit(4, need=10 * gib, pids=lambda: [13]))
    assert not wait_for(lambda: not late.is_alive(), 0.3, every=0.01)   # 80 + 10 > 95 - 60
    del listed[99]                                                   # the idle process was closed
    late.join(5)
    assert not late.is_alive() and turns.status()["admitted"] == 2


def test_admitted_processes_that_outgrow_their_need_count_what_they_hold():
    gib = 1 << 30
    listed = {11: 50 * gib}
    memory = DeviceMemory(100 * gib, lambda: 0, read_processes=lambda: dict(listed))
    memory.used = lambda fresh=False: sum(listed.values())
    memory.processes = lambda fresh=False: dict(listed)
    turns = DeviceTurns(memory=memory)
    key = turns.admit(4, need=10 * gib, pids=lambda: [11])      # needs 10 by estimate, holds 50
    late = _start(lambda: turns.admit(4, need=50 * gib, pids=lambda: [12]))
    assert not wait_for(lambda: not late.is_alive(), 0.3, every=0.01)   # 50 + 50 > 95
    turns.leave(10 * gib, key)
    listed.clear()
    late.join(5)
    assert not late.is_alive()


def test_the_devices_process_list_is_read_from_nvidia_smi(monkeypatch):
    from kerneljudge.judging.device import memory as device_memory

    class Done:
        returncode = 0
        stdout = "583, 19128\n629, [N/A]\n632, 13272\n"

    monkeypatch.setattr(device_memory.subprocess, "run", lambda *a, **k: Done())
    assert device_memory.read_processes("0") == {583: 19128 << 20, 632: 13272 << 20}
    Done.returncode = 9
    assert device_memory.read_processes("0") is None


def test_held_by_counts_a_process_and_its_descendants():
    import os
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        listed = {os.getpid(): 1 << 20, child.pid: 2 << 20, 1: 4 << 20}
        memory = DeviceMemory(1 << 30, lambda: 0, read_processes=lambda: listed)
        assert memory.held_by([os.getpid()]) == 3 << 20             # this process and its child, not pid 1
        assert memory.held_by([]) == 0
        assert DeviceMemory(1 << 30, lambda: 0).held_by([os.getpid()]) is None   # no list: unknown
    finally:
        child.kill()
        child.wait()


def test_a_device_memory_limit_shrinks_the_account():
    memory = DeviceMemory(80 << 30, lambda: 0, limit_bytes=24 << 30)
    assert memory.limit == 24 << 30 and memory.capacity == (24 << 30) - int((24 << 30) * 0.05)
    assert memory.describe(3 << 30)["device_free_bytes"] == 77 << 30


def test_failures_that_can_come_from_a_full_device_are_memory_failures():
    from kerneljudge.judging.evaluate import is_memory_failure

    for text in ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB",
                 "RuntimeError: CUDA error: out of memory", "CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate",
                 "cuDNN error: CUDNN_STATUS_NOT_INITIALIZED",
                 "CUDA error: CUDA-capable device(s) is/are busy or unavailable"):
        assert is_memory_failure(text), text
    for text in ("CUDA error: an illegal memory access was encountered", "shape mismatch", ""):
        assert not is_memory_failure(text), text


def test_the_first_attempts_error_is_the_line_that_says_what_failed():
    from kerneljudge.judging.evaluate import error_line

    # on the H100 a warning torch printed after the traceback came last and stood for the error
    excerpt = ("Traceback (most recent call last):\n  File \"x.py\", line 3, in forward\n"
               "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB\n"
               "W1207 19:06:20.724000 2 torch/utils/cpp_extension.py:140] No CUDA runtime is found\n")
    assert error_line(excerpt).startswith("torch.OutOfMemoryError: CUDA out of memory")
    assert error_line("Traceback\nValueError: shapes differ\nsome warning\n") == "ValueError: shapes differ"
    assert error_line("a plain message\n\n") == "a plain message" and error_line("") == ""


def test_a_reference_out_of_memory_beside_a_solution_holding_no_more_is_the_judges_failure():
    # upstream's 6 GiB elementwise problems on an H100, judged again alone: the reference ran out of memory in its
    # timed rounds at 42.6 GiB beside an identity copy's 32.6 GiB, and the verdict blamed the solution
    from types import SimpleNamespace

    from kerneljudge.judging import evaluate, solution_run

    gib = 1 << 30
    listed = {11: 32 * gib, 22: 42 * gib}
    memory = SimpleNamespace(held_by=lambda pids, fresh=False: sum(listed.get(p, 0) for p in pids))
    slot = SimpleNamespace(turns=SimpleNamespace(memory=memory))
    ctx = SimpleNamespace(device="cuda", child=SimpleNamespace(proc=SimpleNamespace(pid=11)),
                          reference=SimpleNamespace(pid=22), info={"alone_again": True})
    solution_run._note_memory_held(ctx, slot)   # read while the solution's process is still alive
    assert ctx.info["held_at_reference_failure"] == {"solution_bytes": 32 * gib, "reference_bytes": 42 * gib}
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB."
    outcome = evaluate._judge_side_memory_failure(ctx, oom)
    assert outcome is not None and outcome.kind == "reference_failed" and "32.0 GiB" in outcome.reason
    assert evaluate._fits_after_all(outcome.describe(), "cuda")   # judged again at a preset fitted to the card
    assert evaluate._judge_side_memory_failure(ctx, "RuntimeError: shape mismatch") is None
    ctx.info["alone_again"] = False   # beside other judgements: judged again alone first
    assert evaluate._judge_side_memory_failure(ctx, oom) is None
    ctx.info["card_sized"] = True     # admitted alone from the start (its need fills the card): the same
    assert evaluate._judge_side_memory_failure(ctx, oom).kind == "reference_failed"
    ctx.info["card_sized"] = False
    ctx.info["alone_again"] = True
    listed[11] = 60 * gib            # a solution that took more than its reference: its own doing
    solution_run._note_memory_held(ctx, slot)
    assert evaluate._judge_side_memory_failure(ctx, oom) is None
