"""The profiler runs of one judgement: each process's device clock takes its own profiler figure
(worker/device_clock.from_profiles of calls profiled one each, read from the profiler's own events), and under
lenient the reference's library work, compared under strict only, is not profiled at all (judging/work_audit.py)."""

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


def test_each_process_takes_its_device_clocks_profiler_figure_itself(monkeypatch):
    """Both sides' profiler figures come from the same procedure at the same moment of their measurement: the
    solution's once came from its threat-C3 profile, taken after timing, and on the H100 a cuDNN FFT transposed
    convolution's came out 17% above its reference's (2026-12-07)."""
    taken = []
    figure = device_clock.from_profiles([_run(100.0, 100.0)] * 3)
    monkeypatch.setattr(device_clock, "profiled", lambda model, make_inputs, seed: taken.append(seed) or figure)
    out, stats = device_clock.measure(torch.nn.Identity(), lambda seed: [torch.ones(2)], 5, None, 1.0,
                                      method="profiler")
    assert out is None and stats == figure and taken == [5]


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


def test_kineto_events_without_an_activity_type_are_read_as_device_work():
    """torch 2.11 (the GPU image's) gives its kineto events no activity_type: asking for one failed every raw read
    there, and every profile fell back to the slow FunctionEvents (the H100 probe of 2026-12-07)."""
    from types import SimpleNamespace

    from kerneljudge.worker import busy_time, profiling

    def event(name, device, start_ns, end_ns, stream=7):
        return SimpleNamespace(name=lambda: name, device_type=lambda: device, device_resource_id=lambda: stream,
                               start_ns=lambda: start_ns, end_ns=lambda: end_ns, is_async=lambda: False,
                               start_thread_id=lambda: 1, end_thread_id=lambda: 1, is_hidden_event=lambda: False)

    events = [event("aten::mm", "DeviceType.CPU", 1000, 9000), event("gemv_kernel", "DeviceType.CUDA", 2000, 4000),
              event("cell_kernel", "DeviceType.CUDA", 3000, 6000)]
    prof = SimpleNamespace(kineto_results=SimpleNamespace(events=lambda: events, trace_start_ns=lambda: 1000))
    raw = profiling.raw_events(prof, "cuda")
    assert [e.name for e in raw] == ["gemv_kernel", "cell_kernel"] and all(e.activity_type is None for e in raw)
    found = busy_time.busy(raw, "cuda")
    assert found["activities"] == 2
    assert found["busy_us"] == pytest.approx(4.0) and found["summed_us"] == pytest.approx(5.0)


def _kineto_event(name, device, start_ns, end_ns, correlation=0, linked=0, thread=1, stream=7):
    return SimpleNamespace(name=lambda: name, device_type=lambda: device, device_resource_id=lambda: stream,
                           start_ns=lambda: start_ns, end_ns=lambda: end_ns, is_async=lambda: False,
                           start_thread_id=lambda: thread, end_thread_id=lambda: thread,
                           is_hidden_event=lambda: False, correlation_id=lambda: correlation,
                           linked_correlation_id=lambda: linked)


def test_a_cuda_profile_is_read_from_the_profilers_own_events_with_each_kernel_under_its_launching_op(monkeypatch):
    """The rows threat C3 reads, built from kineto's events rather than torch's FunctionEvents (up to 16 s per
    profiled call of a recurrent model on the H100): each kernel under the op its link names, inside the ops
    around that one; a runtime call sharing an op's number (its own correlation id) is never the owner."""
    from kerneljudge.worker import profiling

    cpu, gpu = "DeviceType.CPU", "DeviceType.CUDA"
    events = [
        _kineto_event("aten::lstm", cpu, 1000, 9000, correlation=5),
        _kineto_event("aten::addmm", cpu, 1500, 3000, correlation=7),
        _kineto_event("cudaLaunchKernel", cpu, 1600, 1700, correlation=5, linked=7, thread=99),
        _kineto_event("gemv_kernel", gpu, 2000, 4000, correlation=5, linked=7),
        _kineto_event("cell_kernel", gpu, 4000, 6000, correlation=6, linked=5),
        _kineto_event("decoy_kernel", gpu, 6500, 7000, correlation=8),
    ]
    prof = SimpleNamespace(kineto_results=SimpleNamespace(events=lambda: events, trace_start_ns=lambda: 1000),
                           function_events=None)   # read, the test fails: the raw events must serve
    monkeypatch.setattr(profiling, "_profiled_once", lambda model, inputs, device: (prof, 10.0))
    found = profiling.profile_call(None, [], "cuda")
    rows = {row["name"]: row for row in found["rows"]}
    assert rows["gemv_kernel"]["chain"] == ["aten::lstm", "aten::addmm"]
    assert rows["cell_kernel"]["chain"] == ["aten::lstm"]
    assert rows["decoy_kernel"]["chain"] == []          # launched by no op: the solution's own
    assert [rows[n]["us"] for n in ("gemv_kernel", "cell_kernel", "decoy_kernel")] == [2.0, 2.0, 0.5]
    assert found["activities"] == 3 and found["busy_us"] == pytest.approx(4.5)


def test_the_ops_nest_as_in_torchs_function_events():
    from kerneljudge.worker import profiling

    model = torch.nn.Sequential(torch.nn.Conv1d(4, 8, 3), torch.nn.GELU(), torch.nn.Flatten(), torch.nn.LazyLinear(5))
    model(torch.randn(2, 4, 16))
    prof, _ = profiling._profiled_once(model.eval(), [torch.randn(2, 4, 16)], "cpu")
    raw = profiling.raw_events(prof, "cpu", with_ops=True)
    assert raw

    def chains(events):
        found = {}
        for ev in events:
            if ev.is_async or getattr(ev, "cpu_parent", "absent") == "absent":
                continue
            found.setdefault((ev.name, round(ev.time_range.start, 3)), profiling._ancestors(ev))
        return found

    ours, torchs = chains(raw), chains(prof.function_events)
    assert len(torchs) > 5 and ours == torchs
    assert any(len(chain) >= 2 for chain in ours.values())   # nesting was there to be found
