"""The profiler runs of one judgement are not taken twice: the solution's device clock reads the calls its
threat-C3 profile just took (worker/device_clock.from_profiles), and under lenient the reference's library work,
compared under strict only, is not profiled at all (judging/work_audit.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from kerneljudge.judging import work_audit
from kerneljudge.worker import device_clock


def _run(busy_us: float, summed_us: float, streams: int = 1) -> dict:
    return {"device": "cuda", "wall_us": busy_us * 2, "op_us": 0.0, "rows": [], "rows_left_out": 0,
            "left_out_us": 0.0, "busy_us": busy_us, "summed_us": summed_us, "activities": 3, "streams": streams}


def test_the_profiler_figure_is_the_median_of_the_calls_profiled():
    figure = device_clock.from_profiles([_run(300.0, 310.0), _run(100.0, 120.0, 2), _run(200.0, 200.0)])
    assert figure == {"method": "profiler", "median_ms": 0.2, "samples": 3, "summed_ms": 0.2, "streams": 2,
                      "note": ""}
    assert device_clock.from_profiles([_run(0.0, 0.0)])["method"] is None   # no device activity: no figure


def test_the_device_clock_reads_a_figure_taken_already_instead_of_profiling_again(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("profiled again")

    monkeypatch.setattr(device_clock, "profiled", never)
    taken = device_clock.from_profiles([_run(100.0, 100.0)] * 3)
    out, stats = device_clock.measure(torch.nn.Identity(), lambda seed: [torch.ones(2)], 1, None, 1.0,
                                      method="profiler", by_profiler=taken)
    assert out is None and stats == taken


class _Process:
    def __init__(self):
        self.asked: list[dict] = []

    def request(self, header: dict) -> dict:
        self.asked.append(header)
        run = {"device": "cpu", "wall_us": 50.0, "op_us": 40.0, "left_out_us": 0.0, "rows_left_out": 0,
               "rows": [{"name": "aten::mul", "chain": [], "us": 40.0, "calls": 1, "kind": "op"}]}
        return {"status": "ok", "profiles": [run] * 3,
                "reference_profiles": [run] * 3 if header.get("reference") else []}


@pytest.mark.parametrize("policy", ["strict", "lenient"])
def test_the_reference_is_profiled_under_strict_only(policy):
    process = _Process()
    ctx = SimpleNamespace(request=process.request, init_seed=7, info={}, flags=set(),
                          options=SimpleNamespace(policy=policy))
    try:
        work_audit.profile(ctx, {"ref_ms": 1.0})
    except Exception as exc:   # strict may reject this all-library profile: the request is what is checked
        assert policy == "strict" and getattr(exc, "verdict", "") == "rejected"
    assert process.asked[0]["cmd"] == "profile" and process.asked[0]["reference"] is (policy == "strict")
    if policy == "lenient":
        total = ctx.info["profile"][-1]
        assert total["name"] == "(total)" and total["reference_library_us"] is None


def _small_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).eval()


def test_the_profilers_own_events_give_the_same_busy_time_as_torchs_function_events():
    from kerneljudge.worker import busy_time, profiling

    prof, _ = profiling._profiled_once(_small_model(), [torch.randn(16, 32)], "cpu")
    raw = profiling.raw_events(prof, "cpu")
    assert raw, "the kineto events could not be read"
    fast, slow = busy_time.busy(raw, "cpu"), busy_time.busy(prof.function_events, "cpu")
    assert fast["activities"] == slow["activities"] > 0
    assert fast["busy_us"] == pytest.approx(slow["busy_us"], abs=0.01)
    assert fast["summed_us"] == pytest.approx(slow["summed_us"], abs=0.01)


def test_busy_of_call_falls_back_to_function_events_where_the_raw_events_cannot_be_read(monkeypatch):
    from kerneljudge.worker import profiling

    model, inputs = _small_model(), [torch.randn(16, 32)]
    fast = profiling.busy_of_call(model, inputs, "cpu")
    assert fast["activities"] > 0 and fast["busy_us"] > 0 and "rows" not in fast
    monkeypatch.setattr(profiling, "raw_events", lambda prof, device: None)
    slow = profiling.busy_of_call(model, inputs, "cpu")
    assert slow["activities"] > 0 and slow["busy_us"] > 0 and "rows" in slow   # summarize()'s full answer
