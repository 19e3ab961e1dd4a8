"""The profiler clock counts one call once (issue 33, item 1): the union of a call's device intervals
(worker/busy_time.py), each activity under one launching op (worker/profiling.py), and a real CPU profile of
one call, not several (worker/device_clock.profiled)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kerneljudge.worker import busy_time, device_clock, profiling


def _span(start, end):
    return SimpleNamespace(start=start, end=end, elapsed_us=lambda: end - start)


def _kernel(name, start, end, stream=7, kind="kernel", linked=0):
    return SimpleNamespace(name=name, device_type="DeviceType.CUDA", activity_type=kind, time_range=_span(start, end),
                           device_resource_id=stream, linked_correlation_id=linked, is_async=False)


def _op(name, op_id, start, end, kind="cpu_op", parent=None, kernels=()):
    return SimpleNamespace(name=name, device_type="DeviceType.CPU", activity_type=kind, time_range=_span(start, end),
                           id=op_id, cpu_parent=parent, kernels=list(kernels), is_async=False, self_cpu_time_total=0.0)


def test_union_counts_overlap_once():
    assert busy_time.union_us([(0, 10), (5, 15), (20, 30)]) == 25
    assert busy_time.union_us([(0, 10), (2, 3), (10, 12)]) == 12   # nested, and touching
    assert busy_time.union_us([]) == 0


def test_concurrent_streams_count_as_the_time_the_device_was_busy():
    events = [_kernel("gemm", 0, 100, stream=7), _kernel("gemm", 0, 100, stream=9), _kernel("relu", 100, 110)]
    got = busy_time.busy(events, "cuda")
    assert got["busy_us"] == 110 and got["summed_us"] == 210 and got["streams"] == 2 and got["activities"] == 3


def test_an_activity_listed_twice_is_one_activity():
    gemm = _kernel("gemm", 0, 2690)
    got = busy_time.busy([gemm, _kernel("gemm", 0, 2690), _kernel("relu", 2690, 2705)], "cuda")
    assert got["busy_us"] == 2705 and got["summed_us"] == 2705 and got["activities"] == 2


def test_annotations_and_syncs_on_the_device_track_are_no_work():
    events = [_kernel("kerneljudge::call", 0, 500, kind="gpu_user_annotation"),
              _kernel("Context Sync", 0, 800, kind="cuda_sync"), _kernel("Memcpy DtoD", 10, 20, kind="gpu_memcpy"),
              _kernel("k", 20, 30), _op("cudaLaunchKernel", 3, 0, 5, kind="cuda_runtime")]
    assert busy_time.busy(events, "cuda")["busy_us"] == 20


def test_a_kernel_listed_under_two_events_is_counted_once():
    # the shape of issue 33's doubled profiles: the gemm of one call came back with "calls": 2 and twice its time,
    # the ops launched after it once; here a runtime call that shares the op's number also lists the kernel
    linear = _op("aten::linear", 1, 0, 50)
    addmm = _op("aten::addmm", 5, 2, 48, parent=linear, kernels=[SimpleNamespace(name="gemm", duration=2690.0)])
    stray = _op("cudaDeviceSynchronize", 5, 60, 2800, kind="cuda_runtime",
                kernels=[SimpleNamespace(name="gemm", duration=2690.0)])
    relu = _op("aten::relu", 9, 50, 55)
    events = [linear, addmm, stray, relu, _kernel("gemm", 10, 2700, linked=5), _kernel("relu_k", 2700, 2715, linked=9)]
    data = profiling.summarize(events, "cuda", 3000.0)
    by_name = {r["name"]: r for r in data["rows"]}
    assert by_name["gemm"] == {"name": "gemm", "chain": ["aten::linear", "aten::addmm"], "us": 2690.0, "calls": 1,
                               "kind": "kernel"}
    assert sum(r["us"] for r in data["rows"]) == pytest.approx(2705.0) and data["busy_us"] == 2705.0


def test_without_links_each_listed_kernel_goes_to_one_activity_only():
    # older torch: no linked_correlation_id on device events; two events listing the same kernel entry
    first = _op("aten::mm", None, 0, 10, kind=None, kernels=[SimpleNamespace(name="gemm", duration=40.0)])
    second = _op("aten::matmul", None, 0, 12, kind=None, kernels=[SimpleNamespace(name="gemm", duration=40.0)])
    gemm = SimpleNamespace(name="gemm", device_type="DeviceType.CUDA", time_range=_span(0, 40), is_async=False)
    data = profiling.summarize([first, second, gemm], "cuda", 50.0)
    assert [(r["name"], r["us"], r["calls"]) for r in data["rows"]] == [("gemm", 40.0, 1)]


class _Counted:
    """A CPU model of three distinct ops that counts its calls."""

    def __init__(self):
        import torch

        self.calls = 0
        self.w = torch.randn(192, 192)

    def __call__(self, x):
        import torch

        self.calls += 1
        return torch.tanh(torch.mm(x, self.w)).sum(dim=1)


def test_one_profiled_call_holds_one_forward_and_its_busy_time_fits_inside_it():
    import torch

    model = _Counted()
    run = profiling.profile_call(model, [torch.randn(192, 192)], "cpu")
    calls = {r["name"]: r["calls"] for r in run["rows"]}
    assert model.calls == 1
    assert calls["aten::mm"] == 1 and calls["aten::tanh"] == 1 and calls["aten::sum"] == 1
    assert 0 < run["busy_us"] <= run["wall_us"]


def test_the_profiler_clock_samples_single_calls_after_one_warm_call(monkeypatch):
    import statistics

    import torch

    model, seen, runs = _Counted(), [], []
    real = profiling.busy_of_call

    def spy(m, inputs, device):
        before = model.calls
        runs.append(real(m, inputs, device))
        runs[-1]["forwards"] = model.calls - before
        return runs[-1]

    def make_inputs(seed):
        seen.append(seed)
        return [torch.randn(192, 192)]

    monkeypatch.setattr(profiling, "busy_of_call", spy)
    got = device_clock.profiled(model, make_inputs, 100, device="cpu")
    assert got["method"] == "profiler" and got["samples"] == device_clock.PROFILED_CALLS
    assert model.calls == 1 + device_clock.PROFILED_CALLS and seen == [100, 101, 102, 103]
    # every sample is one forward: as many ops in its window as one call's full profile has, and the figure is the
    # median of their busy times
    assert [r["forwards"] for r in runs] == [1] * device_clock.PROFILED_CALLS
    one_call = profiling.profile_call(model, make_inputs(104), "cpu")
    assert {r["name"]: r["calls"] for r in one_call["rows"]}["aten::mm"] == 1
    assert all(run["activities"] == one_call["activities"] for run in runs)
    assert got["median_ms"] == pytest.approx(statistics.median(r["busy_us"] for r in runs) / 1e3)
