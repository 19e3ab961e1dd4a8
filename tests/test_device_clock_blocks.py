"""The device clock's interleaved blocks (judging/timed.py), driven by a stand-in for the two processes: the
order of the blocks, when the second half is skipped, how blocks merge, and what a lying process gets."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

import pytest

from kerneljudge.judging import timed
from kerneljudge.judging.context import Outcome


class FakeSides:
    """Answers device_time for both sides from a function of (side, block number) -> replay times. The times
    are in units of 10 us so that a block's replays fit the real round trip of a call to this stand-in."""

    def __init__(self, times_of, sol_method="cuda_graph", graph_output_ok=True):
        self.times_of, self.sol_method, self.graph_output_ok = times_of, sol_method, graph_output_ok
        self.log: list[str] = []
        self.count = {"sol": 0, "ref": 0}

    def block(self, side: str) -> dict:
        self.log.append(side)
        n = self.count[side]
        self.count[side] += 1
        times = [t * 0.01 for t in self.times_of(side, n)]
        return {"method": "cuda_graph", "median_ms": sorted(times)[len(times) // 2], "times_ms": times,
                "sum_ms": sum(times), "note": ""}

    # the solution's process, through ctx.request
    def request(self, header: dict) -> dict:
        if header["cmd"] == "release_graph":
            self.log.append("sol-release")
            return {"status": "ok"}
        if header.get("method") == "profiler":
            self.log.append("sol-profiler")
            return {"method": "profiler", "median_ms": 1.0, "samples": 3, "note": ""}
        if self.sol_method != "cuda_graph":
            self.log.append("sol")
            return {"method": self.sol_method, "median_ms": 0.01, "samples": 3, "note": "graph capture failed"}
        return self.block("sol")

    # the reference process
    def device_time(self, *args, **kwargs) -> dict:
        if kwargs.get("method") == "profiler":
            self.log.append("ref-profiler")
            return {"method": "profiler", "median_ms": 0.02, "samples": 3, "note": ""}
        assert kwargs["block"] is True
        return self.block("ref")

    def release_graph(self) -> None:
        self.log.append("ref-release")


def _ctx(sides: FakeSides, budget_s: float = 2.0):
    return SimpleNamespace(
        device="cuda", numerics={"class": "fp32"}, preset={}, init_seed=1, flags=set(), info={},
        options=SimpleNamespace(time_budget_s=budget_s), problem=SimpleNamespace(path="p.py"),
        phase=lambda name: contextlib.nullcontext(), judges_time=contextlib.nullcontext,
        expect=lambda preset, seeds: None, request=sides.request, request_output=lambda header: object(),
        compare=lambda index, output: {"ok": sides.graph_output_ok, "reason": "max error 3.0"},
        reference=SimpleNamespace(device_time=sides.device_time, release_graph=sides.release_graph))


def test_tight_blocks_stop_after_one_abba():
    sides = FakeSides(lambda side, n: [1.0] * 20)
    result: dict = {}
    timed.device_clock(_ctx(sides), result)
    assert sides.log == ["sol", "ref", "ref", "sol", "sol-release", "ref-release"]
    assert result["speedup_device"] == pytest.approx(1.0) and result["device_clock"] == "cuda_graph"
    assert result["sol_timing"]["device"]["samples"] == 40


def test_noisy_blocks_run_the_second_abba():
    noisy = [1.0, 1.3, 0.7, 1.2, 0.8, 1.1, 0.9]
    sides = FakeSides(lambda side, n: list(noisy))
    timed.device_clock(_ctx(sides), {})
    assert sides.log[:8] == list(timed.DEVICE_ORDER)
    assert sides.log[8:] == ["sol-release", "ref-release"]


def test_a_linear_drift_falls_on_both_sides_alike():
    # the GPU slows by 2% per block whichever side runs: measured one after the other, the later side would
    # look 8% slower; in ABBA order the medians of the two sides come out equal
    clock = {"block": 0}

    def drifting(side, n):
        clock["block"] += 1
        return [1.0 + 0.02 * clock["block"]] * 5 + [1.3, 0.7]   # a spread that keeps the second ABBA
    result: dict = {}
    timed.device_clock(_ctx(FakeSides(drifting)), result)
    assert result["speedup_device"] == pytest.approx(1.0, abs=0.011)


def test_a_solution_without_a_graph_keeps_its_profiler_time():
    sides = FakeSides(lambda side, n: [2.0] * 20, sol_method="profiler")
    result: dict = {}
    timed.device_clock(_ctx(sides), result)
    assert sides.log.count("sol") == 1            # no second block: nothing to replay
    # the reference, replayed as a graph, is measured by the profiler too: one clock for both sides
    assert sides.log[-1] == "ref-profiler" and result["ref_timing"]["device"]["method"] == "profiler"
    assert result["device_clock"] == "profiler" and result["speedup_device"] == pytest.approx(2.0)


def test_a_reference_without_a_graph_gets_the_solution_measured_by_the_profiler_too():
    sides = FakeSides(lambda side, n: [1.0] * 20)
    sides.device_time = lambda *a, **k: {"method": "profiler", "median_ms": 3.0, "samples": 3,
                                         "note": "graph capture failed (OutOfMemoryError)"}
    result: dict = {}
    timed.device_clock(_ctx(sides), result)
    assert sides.log[-1] == "sol-profiler"
    assert result["sol_timing"]["device"]["method"] == "profiler" and result["speedup_device"] == pytest.approx(3.0)


def test_a_wrong_graph_output_falls_back_to_the_profiler():
    sides = FakeSides(lambda side, n: [1.0] * 20, graph_output_ok=False)
    result: dict = {}
    timed.device_clock(_ctx(sides), result)
    assert "sol-profiler" in sides.log and sides.log.count("sol") == 1
    assert result["sol_timing"]["device"]["method"] == "profiler"
    assert "graph's output was wrong" in result["sol_timing"]["device"]["note"]
    assert result["ref_timing"]["device"]["method"] == "profiler"


def test_replays_longer_than_the_round_trip_are_not_believed():
    sides = FakeSides(lambda side, n: [1e5] * 3)   # 3 s of replays reported within a millisecond's call
    ctx, result = _ctx(sides), {}
    timed.device_clock(ctx, result)
    assert "timing_inconsistent" in ctx.flags and "speedup_device" not in result


@pytest.mark.parametrize("times", [None, [], ["1"], [0.0], [-1.0], [float("nan")], [float("inf")], [True]])
def test_malformed_replay_times_break_the_protocol(times):
    with pytest.raises(Outcome) as caught:
        timed.replay_times({"method": "cuda_graph", "times_ms": times})
    assert caught.value.verdict == "rejected"


def test_merge_takes_the_median_of_every_replay():
    blocks = [{"method": "cuda_graph", "times_ms": [1.0, 2.0, 3.0], "note": ""},
              {"method": "cuda_graph", "times_ms": [4.0, 5.0], "note": ""}]
    merged = timed.merge_blocks(blocks)
    assert merged["median_ms"] == 3.0 and merged["samples"] == 5 and merged["blocks"] == 2
    failed = {"method": None, "median_ms": None, "note": "the reference failed"}
    assert timed.merge_blocks(blocks + [failed]) is failed
    assert timed.merge_blocks([])["median_ms"] is None


def test_cpu_keeps_the_host_clock():
    result = {"sol_ms": 2.0, "ref_ms": 3.0, "speedup_end_to_end": 1.5}
    ctx = SimpleNamespace(device="cpu")
    timed.device_clock(ctx, result)
    assert result["device_clock"] == "host" and result["speedup_device"] == 1.5


def test_a_graph_slower_than_its_own_eager_calls_sends_both_sides_to_the_profiler():
    # the reference's replays take 15.6 ms where its eager calls take 3.4 (cuDNN chose another algorithm while
    # capturing): a graph that does not run what the calls run is no device time
    # (in the stand-in's units: replays of 0.01 ms a side; the reference's are 4.6 times its eager calls)
    sides = FakeSides(lambda side, n: [4.6 if side == "ref" else 1.0] * 20)
    result = {"sol_ms": 0.0101, "ref_ms": 0.01}
    timed.device_clock(_ctx(sides), result)
    assert "sol-profiler" in sides.log and "ref-profiler" in sides.log
    assert result["ref_timing"]["device"]["method"] == "profiler"
    assert "reference's graph replays were slower" in result["ref_timing"]["device"]["note"]
    assert result["device_clock"] == "profiler"


def test_graph_replays_within_their_eager_time_stay():
    sides = FakeSides(lambda side, n: [1.0] * 20)              # 0.010 ms replays against 0.0115 ms eager calls
    result = {"sol_ms": 0.0115, "ref_ms": 0.0115}
    timed.device_clock(_ctx(sides), result)
    assert result["device_clock"] == "cuda_graph" and "ref-profiler" not in sides.log
