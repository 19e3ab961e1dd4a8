"""Which device clock serves and how a side's two device clocks and its end-to-end clock agree
(judging/clock_choice.py), and the device clock's flow with the profiler figure each graph measurement brings
(judging/timed.py, driven by the stand-in of test_device_clock_blocks)."""

from __future__ import annotations

import pytest

from kerneljudge.judging import clock_choice, timed

from .test_device_clock_blocks import FakeSides, _ctx


def _graph(ms, profiler_ms=None):
    stats = {"method": "cuda_graph", "median_ms": ms, "note": ""}
    if profiler_ms is not None:
        stats["profiler"] = {"method": "profiler", "median_ms": profiler_ms, "samples": 3, "note": ""}
    return stats


def test_checks_compare_the_profiler_with_the_replays_and_the_end_to_end_clock():
    agree = clock_choice.checks(_graph(2.70, 2.75), 2.70, 2.80)
    assert agree["profiler_agrees_with_graph"] and agree["profiler_within_end_to_end"]
    # issue 33's level 2 problem 63: a profile of 5.42 ms against replays of 2.72 and end to end 2.77
    doubled = clock_choice.checks(_graph(2.72, 5.42), 2.72, 2.77)
    assert not doubled["profiler_agrees_with_graph"] and not doubled["profiler_within_end_to_end"]
    assert doubled["profiler_vs_graph"] == pytest.approx(1.9926, abs=1e-4)
    assert clock_choice.checks({"method": None}, None, 2.0) == {"profiler_ms": None, "graph_ms": None,
                                                                "end_to_end_ms": 2.0}


def test_the_profiler_serves_both_sides_where_one_cannot_be_replayed_or_replays_slow():
    eager = {"solution": 1.0, "reference": 1.0}
    assert clock_choice.profiler_reason(_graph(1.0), _graph(1.0), eager) is None
    assert "could not be replayed" in clock_choice.profiler_reason({"method": "profiler", "median_ms": 1.0},
                                                                   _graph(1.0), eager)
    assert "reference's graph replays were slower" in clock_choice.profiler_reason(_graph(1.0), _graph(1.6), eager)


def test_as_profiler_keeps_only_known_fields():
    stats = _graph(2.0, 2.1)
    stats["profiler"].update(streams=2, summed_ms=2.5, junk="x" * 10_000)
    got = clock_choice.as_profiler(stats, "why")
    assert got == {"method": "profiler", "median_ms": 2.1, "note": "why", "samples": 3, "streams": 2,
                   "summed_ms": 2.5, "graph_ms": 2.0}
    assert clock_choice.as_profiler(_graph(2.0), "why") is None
    assert clock_choice.as_profiler(_graph(2.0, float("nan")), "why") is None


@pytest.mark.parametrize("state,verified", [({"verified": True, "note": ""}, True), ({"verified": "yes"}, False),
                                            ("fine", False), ({"note": "x"}, False)])
def test_a_device_state_is_verified_only_when_it_says_so(state, verified):
    assert clock_choice.device_state({"device_state": state})["verified"] is verified
    assert clock_choice.device_state({}) is None


class WithProfiler(FakeSides):
    """Graph blocks that bring a profiler figure per side, as worker/device_clock.py now sends."""

    def __init__(self, times_of, profiler_ms, **kwargs):
        super().__init__(times_of, **kwargs)
        self.profiler_ms = profiler_ms

    def block(self, side):
        reply = super().block(side)
        reply["profiler"] = {"method": "profiler", "median_ms": self.profiler_ms[side], "samples": 3, "note": ""}
        return reply


def test_slow_replays_switch_to_the_profiler_figures_taken_before_capture():
    # replays at 0.02 ms against eager calls of 0.01 ms on the reference side: both sides go to the profiler,
    # whose figures came with the first blocks (no request after the captures)
    sides = WithProfiler(lambda side, n: [2.0 if side == "ref" else 1.0] * 20, {"sol": 0.009, "ref": 0.0095})
    result = {"sol_ms": 0.01, "ref_ms": 0.01}
    timed.device_clock(_ctx(sides), result)
    assert "sol-profiler" not in sides.log and "ref-profiler" not in sides.log
    assert result["device_clock"] == "profiler" and result["speedup_device"] == pytest.approx(0.0095 / 0.009)
    ref = result["ref_timing"]["device"]
    assert ref["graph_ms"] == pytest.approx(0.02) and "slower than its eager calls" in ref["note"]
    assert ref["checks"]["profiler_agrees_with_graph"] is False


def test_checks_are_reported_beside_graph_replays():
    sides = WithProfiler(lambda side, n: [1.0] * 20, {"sol": 0.0101, "ref": 0.0130})
    result = {"sol_ms": 0.012, "ref_ms": 0.012}
    timed.device_clock(_ctx(sides), result)
    assert result["device_clock"] == "cuda_graph"
    assert result["sol_timing"]["device"]["checks"]["profiler_agrees_with_graph"] is True
    assert result["ref_timing"]["device"]["checks"]["profiler_agrees_with_graph"] is False
    assert result["ref_timing"]["device"]["checks"]["profiler_vs_graph"] == pytest.approx(1.3)


def test_a_profiler_figure_above_the_end_to_end_clock_is_not_a_device_time():
    sides = WithProfiler(lambda side, n: [1.0] * 20, {"sol": 0.0101, "ref": 0.0101})
    sides.device_time = lambda *a, **k: {"method": "profiler", "median_ms": 0.05, "samples": 3, "note": "capture"}
    result = {"sol_ms": 0.012, "ref_ms": 0.012}
    timed.device_clock(_ctx(sides), result)
    assert "speedup_device" not in result
    ref = result["ref_timing"]["device"]
    assert ref["median_ms"] is None and "above the end-to-end median" in ref["note"]
    assert ref["checks"]["profiler_within_end_to_end"] is False


def test_a_wrong_graph_output_uses_the_profiler_figure_it_took_first():
    sides = WithProfiler(lambda side, n: [1.0] * 20, {"sol": 0.0101, "ref": 0.0102}, graph_output_ok=False)
    result = {"sol_ms": 0.012, "ref_ms": 0.012}
    timed.device_clock(_ctx(sides), result)
    assert "sol-profiler" not in sides.log and "ref-profiler" not in sides.log
    assert result["device_clock"] == "profiler" and result["speedup_device"] == pytest.approx(0.0102 / 0.0101)
    assert "graph's output was wrong" in result["sol_timing"]["device"]["note"]


def test_an_unverified_device_state_asks_for_a_fresh_process():
    sides = FakeSides(lambda side, n: [1.0] * 20, sol_method="profiler")
    reply = sides.request

    def request(header):
        got = reply(header)
        if header.get("cmd") == "device_time" and got.get("method") == "profiler":
            got["device_state"] = {"verified": False, "note": "the device state could not be verified"}
        return got

    sides.request = request
    ctx, result = _ctx(sides), {"sol_ms": 1.0, "ref_ms": 1.0}
    timed.device_clock(ctx, result)
    assert ctx.info["device_state_unverified"] == {"solution": "the device state could not be verified"}
    assert result["sol_timing"]["device"]["device_state"]["verified"] is False


def test_the_default_clock_is_the_device_one_only_where_both_sides_replayed_a_graph():
    from kerneljudge.judging.evaluate import clock_for

    graph = {"speedup_end_to_end": 1.3, "speedup_device": 1.0, "device_clock": "cuda_graph"}
    profiled = {**graph, "device_clock": "profiler"}
    none = {"speedup_end_to_end": 1.3, "speedup_device": None, "device_clock": None}
    assert [clock_for("auto", r) for r in (graph, profiled, none)] == ["device", "end_to_end", "end_to_end"]
    assert [clock_for("device", r) for r in (graph, profiled, none)] == ["device", "device", "end_to_end"]
    assert {clock_for("end_to_end", r) for r in (graph, profiled, none)} == {"end_to_end"}


def test_held_out_shapes_run_in_a_fresh_process_where_the_device_state_was_not_put_back(cache_dir, monkeypatch):
    # a failed capture the judge could not undo must not become the solution's verdict at its held-out shapes
    from kerneljudge import Judge, JudgeOptions
    from kerneljudge.judging import timed

    from .conftest import FIXTURES

    measure = timed.device_clock

    def unverified(ctx, result):
        measure(ctx, result)
        ctx.info.setdefault("device_state_unverified", {})["solution"] = "stand-in: not put back"

    monkeypatch.setattr(timed, "device_clock", unverified)
    options = JudgeOptions(device="cpu", policy="lenient", trials=2, time_budget_s=0.2, cache_dir=cache_dir)
    with Judge(options, warm_start=False) as judge:
        verdict = judge.judge(FIXTURES / "problems" / "scale_relu.py", FIXTURES / "solutions" / "torch_plain.py")
    assert verdict.verdict == "correct" and verdict.accepted, verdict.reason
    assert verdict.shapes["held_out_process"] == "fresh" and verdict.shapes["held_out"]
