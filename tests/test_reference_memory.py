"""What a reference process tells of its problems' device memory (worker/reference_memory.py,
judging/reference.py's device_need)."""

from __future__ import annotations

from collections import OrderedDict

import pytest
import torch

from kerneljudge.judging.reference import INPUTS_PER_JUDGEMENT, ReferenceError, ReferenceService
from kerneljudge.worker import loading, reference_memory

PROBLEM = """
import torch
import torch.nn as nn

N = 256


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x, extra):
        return self.linear(x)


def get_inputs():
    return [torch.rand(N, 64), [torch.rand(8)]]


def get_init_inputs():
    return [64]
"""


def test_estimate_counts_weights_and_meta_inputs_at_the_run_precision(tmp_path):
    path = tmp_path / "p.py"
    path.write_text(PROBLEM)
    problem = loading.load_module(str(path))
    model = problem.Model(64)
    found = reference_memory.estimate(problem, model, "fp32", [64])
    assert found == {"model_bytes": (64 * 64 + 64) * 4, "input_bytes": (256 * 64 + 8) * 4,
                     "activation_bytes": 256 * 64 * 4}   # the linear layer's output
    # top-level tensors take the run precision (make_inputs), nested ones keep theirs
    assert reference_memory.estimate(problem, model, "bf16", [64])["input_bytes"] == 256 * 64 * 2 + 8 * 4


def test_inputs_that_cannot_be_made_on_meta_count_nothing(tmp_path):
    path = tmp_path / "p.py"
    path.write_text(PROBLEM.replace("return [torch.rand(N, 64), [torch.rand(8)]]",
                                    "return [torch.rand(N, 64).numpy()]"))
    assert reference_memory.input_bytes(loading.load_module(str(path)), "fp32") == 0


def test_the_largest_tensor_the_forward_makes_is_found_on_the_meta_device(tmp_path):
    path = tmp_path / "p.py"
    path.write_text("""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.up = nn.ConvTranspose2d(channels, channels, 4, stride=4)

    def forward(self, x):
        return torch.relu(self.up(x)).mean()


def get_inputs():
    return [torch.rand(2, 8, 16, 16)]


def get_init_inputs():
    return [8]
""")
    problem = loading.load_module(str(path))
    assert reference_memory.input_bytes(problem, "fp32") == 2 * 8 * 16 * 16 * 4
    assert reference_memory.largest_activation_bytes(problem, [8], "fp32") == 2 * 8 * 64 * 64 * 4   # 16x its input
    broken = loading.load_module(str(path))
    broken.Model = lambda channels: (_ for _ in ()).throw(RuntimeError("no meta kernel"))
    assert reference_memory.largest_activation_bytes(broken, [8], "fp32") == 0


def test_park_moves_models_to_the_host_and_drops_the_oldest_beyond_the_limit(monkeypatch):
    monkeypatch.setattr(reference_memory, "PARKED_HOST_BYTES", 3000)
    monkeypatch.setattr(reference_memory, "release_cached", lambda device: None)
    models = OrderedDict((k, ("problem", torch.nn.Linear(16, 16))) for k in ("a", "b", "c"))   # 1088 bytes each
    parked: dict = {}
    assert reference_memory.park(models, parked) == 3
    assert not models and list(parked) == ["b", "c"]
    assert all(next(m.parameters()).device.type == "cpu" for _, m in parked.values())


def test_park_keeps_the_models_of_problems_still_judged_on_the_device(monkeypatch):
    monkeypatch.setattr(reference_memory, "release_cached", lambda device: None)
    models = OrderedDict(((path, "preset"), ("problem", torch.nn.Linear(4, 4))) for path in ("a.py", "b.py"))
    models[("b.py", "held-out")] = ("problem", torch.nn.Linear(4, 4))
    parked: dict = {}
    assert reference_memory.park(models, parked, keep=frozenset({"b.py"})) == 1
    assert list(models) == [("b.py", "preset"), ("b.py", "held-out")] and list(parked) == [("a.py", "preset")]


def test_park_with_nothing_kept_drops_expected_outputs_nobody_forgot(monkeypatch):
    from kerneljudge.worker import reference as worker_reference

    sent = []
    monkeypatch.setattr(worker_reference.channel, "send", lambda fd, msg: sent.append(msg))
    monkeypatch.setitem(worker_reference._expected, "token", object())
    worker_reference.handle_park({"cmd": "park", "device": "cpu", "keep": ["x.py"]}, 0)
    assert "token" in worker_reference._expected and sent[-1]["dropped_expected"] == 0
    worker_reference.handle_park({"cmd": "park", "device": "cpu", "keep": []}, 0)
    assert not worker_reference._expected and sent[-1]["dropped_expected"] == 1


def test_device_need_prefers_the_measured_peak_over_the_estimate():
    service = ReferenceService("cuda", "fp32", 1, "/tmp")
    assert service.device_need("p.py") is None
    service._note_memory("p.py", {"model_bytes": 100, "input_bytes": 10})
    assert service.device_need("p.py") == 2 * 100 + INPUTS_PER_JUDGEMENT * 10
    service._note_memory("p.py", {"activation_bytes": 40})   # a tensor of the forward larger than the inputs
    assert service.device_need("p.py") == 2 * 100 + INPUTS_PER_JUDGEMENT * 40
    service._note_memory("p.py", {"peak_bytes": 1000})
    service._note_memory("p.py", {"peak_bytes": 400})      # a smaller held-out shape: the largest stays
    assert service.device_need("p.py") == 2000


def test_park_without_waiting_skips_a_process_busy_with_another_request(monkeypatch):
    import threading

    service = ReferenceService("cuda", "fp32", 1, "/tmp")
    sent = []
    monkeypatch.setattr(service, "_running", lambda: True)
    monkeypatch.setattr(service, "_request", lambda header: sent.append(header["cmd"]) or ({}, []))
    busy, release = threading.Event(), threading.Event()

    def other_request():
        with service._talk:
            busy.set()
            release.wait(5)
    worker = threading.Thread(target=other_request)
    worker.start()
    busy.wait(5)
    service.park(wait=False)
    assert sent == []                                     # busy: skipped, not waited for
    release.set()
    worker.join(5)
    service.park(wait=False)
    assert sent == ["park"]


def test_timing_drops_the_expected_outputs_kept_for_the_trials(tmp_path, monkeypatch):
    # upstream's 6 GiB elementwise problems: three kept outputs beside two timed calls ran the reference out of
    # memory on an 80 GB card with one judgement on it; one asked for after timing is computed again
    from kerneljudge.worker import reference as worker_reference

    path = tmp_path / "p.py"
    path.write_text(PROBLEM)
    sent = []
    monkeypatch.setattr(worker_reference.channel, "send", lambda fd, msg, tensors=(): sent.append(msg))
    monkeypatch.setattr(worker_reference, "_models", OrderedDict())
    request = {"problem_path": str(path), "preset": {}, "init_seed": 7, "device": "cpu", "precision": "fp32",
               "seeds": [11, 12, 13]}
    kept = worker_reference.Expected(request)
    first = kept.output(0)[1][0].clone()
    kept.output(1)
    monkeypatch.setitem(worker_reference._expected, "tok", kept)
    worker_reference.handle_time_round({**request, "calls": 1}, 0)
    assert sent[-1]["status"] == "ok" and not kept.kept
    assert torch.equal(kept.output(0)[1][0], first)   # the same seed's output, computed again
    worker_reference.handle_device_time({**request, "seed": 5, "budget_s": 0.05}, 0)
    assert not kept.kept and not worker_reference.reference_timing._kept


def test_the_solution_process_keeps_nothing_of_the_ownership_checks_once_timing_starts(tmp_path, monkeypatch):
    from kerneljudge.worker import solution as worker_solution, timing

    path = tmp_path / "p.py"
    path.write_text(PROBLEM)
    state = worker_solution.State()
    state.problem = loading.load_module(str(path))
    state.model = state.problem.Model(64)
    state.timer = timing.Timer("cpu")
    monkeypatch.setattr(worker_solution, "S", state)
    sent = []
    monkeypatch.setattr(worker_solution.channel, "send", lambda fd, msg, tensors=(): sent.append(msg))
    out = str(tmp_path / "out.bin")
    worker_solution.handle_call({"cmd": "call", "seed": 1, "hold": True, "out_path": out, "transport": "file"}, 0)
    worker_solution.handle_call({"cmd": "call", "seed": 2, "keep_inputs": True, "out_path": out,
                                 "transport": "file"}, 0)
    assert state.held_output is not None and state.kept_inputs is not None
    worker_solution.handle_call({"cmd": "call", "seed": 3, "rewrite": True, "out_path": out, "transport": "file"}, 0)
    assert [m["status"] for m in sent] == ["ok"] * 3
    # nothing of either check is held after trial 3
    assert state.held_output is None and state.kept_inputs is None
    state.held_output, state.kept_inputs = object(), object()
    worker_solution.handle_timed({"cmd": "timed", "seed": 4}, 0)
    assert sent[-1]["status"] == "ok" and state.held_output is None and state.kept_inputs is None
    assert state.previous_inputs is not None
    worker_solution.handle_device_time({"cmd": "device_time", "seed": 5, "budget_s": 0.05}, 0)
    assert state.previous_inputs is None


def test_the_shape_plan_gives_a_need_where_the_reference_process_has_none():
    """Admission falls back on the sizes the plan measured at the preset judged (judging/shape_budget.planned_need):
    a judgement admitted at an even share of the card beside an 8 GiB problem ran it out of memory (H100)."""
    from kerneljudge.judging import solution_run
    from kerneljudge.judging.shape_budget import planned_need
    from kerneljudge.shapes.plan import ShapePlan

    gib = 1 << 30
    measured = {"default": {"ok": True, "input_bytes": [8 * gib], "param_bytes": 0, "output_bytes": [8 * gib]},
                "fitted": {"ok": True, "input_bytes": [gib], "param_bytes": 2 * gib, "output_bytes": [gib],
                           "activation_bytes": 3 * gib},
                "small": {"ok": False}}
    plan = ShapePlan(measured=measured)
    assert planned_need(plan, small=False) == INPUTS_PER_JUDGEMENT * 8 * gib
    fitted = ShapePlan(measured=measured, fitted={"overrides": {"N": 2}, "need_bytes": 1, "budget_bytes": 2})
    assert planned_need(fitted, small=False) == 2 * 2 * gib + INPUTS_PER_JUDGEMENT * 3 * gib
    assert planned_need(plan, small=True) is None          # the probe failed there: nothing known
    assert planned_need(ShapePlan(), small=False) is None  # nothing measured

    class Ctx:   # what _admission_need reads of a judgement's context
        reference = ReferenceService("cuda", "fp32", 1, "/tmp")
        problem = type("P", (), {"path": "p.py"})()
        device, planned_need, info = "cuda", INPUTS_PER_JUDGEMENT * 8 * gib, {}

    ctx = Ctx()
    assert solution_run._admission_need(ctx) == INPUTS_PER_JUDGEMENT * 8 * gib
    assert ctx.info["admitted_need"] == {"bytes": INPUTS_PER_JUDGEMENT * 8 * gib, "from": "shape_plan"}
    ctx.reference._note_memory("p.py", {"peak_bytes": 1000})   # the reference's own figure wins once it has one
    assert solution_run._admission_need(ctx) == 2000 and ctx.info["admitted_need"]["from"] == "reference"
    ctx.planned_need, ctx.reference = None, ReferenceService("cuda", "fp32", 1, "/tmp")
    assert solution_run._admission_need(ctx) is None and ctx.info["admitted_need"]["from"] == "even_share"


def test_a_judgement_whose_need_fills_the_card_is_admitted_alone_with_the_other_processes_closed(monkeypatch):
    """Upstream's 6-8 GiB problems on the H100: one judgement held 69 GiB of the 79, and ran out of memory beside
    other processes' leftovers; judged alone with every other reference process closed, it passed."""
    from kerneljudge.core.types import JudgeOptions
    from kerneljudge.judging import solution_run
    from kerneljudge.judging.device.turns import DeviceTurns

    cleared = []
    monkeypatch.setattr(solution_run.slots, "clear_device",
                        lambda slot, keep, close_others=True: cleared.append(close_others))

    class Ctx:
        options, device, info = JudgeOptions(device="cuda"), "cuda", {}
        reference = ReferenceService("cuda", "fp32", 1, "/tmp")

    slot = type("Slot", (), {"turns": DeviceTurns(memory_bytes=100 << 30)})()
    budget = slot.turns.budget
    ctx = Ctx()
    assert solution_run._admission_limit(ctx, slot, budget // 2) == 4 and "card_sized" not in ctx.info
    assert solution_run._admission_limit(ctx, slot, None) == 4        # unknown: an even share, shared
    solution_run._memory_to_itself(ctx, slot)
    assert cleared == [False]                                         # alone by choice: the others only park
    ctx.info["admitted_need"] = {"bytes": budget, "from": "shape_plan"}
    assert solution_run._admission_limit(ctx, slot, budget) == 1
    assert ctx.info["card_sized"] and ctx.info["admitted_need"]["alone"] is True
    solution_run._memory_to_itself(ctx, slot)
    assert cleared == [False, True]                                   # every other reference process closed


def test_a_check_of_a_token_the_process_no_longer_holds_gives_the_expect_again(monkeypatch):
    """The reference process was closed (to free the device) or parked with nothing kept between a judgement's
    expect and its check: on the H100 that check failed on a KeyError and the judgement came out `runtime_error`.
    The worker says it lacks the token; the service gives the judgement's expect again, as it was, and checks once
    more."""
    from kerneljudge.worker import reference as worker_reference

    sent = []
    monkeypatch.setattr(worker_reference.channel, "send", lambda fd, msg: sent.append(msg))
    worker_reference.handle_check({"cmd": "check", "token": "gone", "index": 0}, 0)
    assert sent[-1] == {"status": "ok", "token_unknown": True}

    service = ReferenceService("cpu", "fp32", 1, "/tmp")
    held: set[str] = set()
    asked = []

    def request(header):   # a stand-in process that holds what it was given since it started
        asked.append(header["cmd"])
        if header["cmd"] == "expect":
            held.add(header["token"])
            return {"outputs": [], "seeds_seen": header["seeds"]}, []
        if header["cmd"] == "forget":
            held.discard(header["token"])
            return {}, []
        return ({"ok": True} if header["token"] in held else {"token_unknown": True}), []
    monkeypatch.setattr(service, "_request", request)
    monkeypatch.setattr(service, "_running", lambda: True)
    service.expect("t1", "p.py", {}, 7, [11, 12])
    held.clear()                                       # the process started again
    assert service.check("t1", 0, None, "out.bin", [], None) == {"ok": True}
    assert asked == ["expect", "check", "expect", "check"]
    service.forget("t1")
    held.clear()
    with pytest.raises(ReferenceError):                # a token never expected (or forgotten): the judge's error
        service.check("t1", 0, None, "out.bin", [], None)


def test_a_judgement_leaving_lets_the_timers_flush_buffer_go():
    """Made after a judgement's large tensors were freed, the timer's 100 MiB L2-flush buffer was cut from one of
    their cached blocks and kept all of it on the device (the H100 sweep of 2026-12-07): parking with nothing kept
    drops the timer; the next timing makes another."""
    from kerneljudge.worker import reference_timing

    first = reference_timing.timer_for("cpu")
    assert reference_timing.timer_for("cpu") is first
    reference_timing.release()
    assert reference_timing.timer_for("cpu") is not first
