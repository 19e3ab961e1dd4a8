"""Timing (issue 11): reference and solution in alternating rounds, the cache only with consent, two clocks,
and the core layout. The judged runs use real child processes on the CPU."""

from __future__ import annotations

import pytest

from kerneljudge import Judge, JudgeOptions
from kerneljudge.judging.cores import plan_cores
from kerneljudge.worker.timing import SamplingPlan

from .conftest import FIXTURES

PROBLEM = FIXTURES / "problems" / "scale_relu.py"
SOLUTION = FIXTURES / "solutions" / "correct_triton_weight_cache.py"


def _judge(cache_dir, **options):
    with Judge(JudgeOptions(device="cpu", trials=3, time_budget_s=0.2, cache_dir=cache_dir, **options)) as judge:
        return judge.judge(PROBLEM, SOLUTION)


def test_reference_and_solution_are_timed_in_alternating_rounds(cache_dir):
    verdict = _judge(cache_dir)
    assert verdict.verdict == "correct", verdict.reason
    ref, sol = verdict.ref_timing, verdict.sol_timing
    assert ref["interleaved_rounds"] >= 1 and ref["cached"] is False and ref["arithmetic"] == "fp32"
    # both sides took the same number of rounds of the same size
    assert ref["samples"] == ref["interleaved_rounds"] * ref["calls_per_round"]
    assert sol["samples"] == ref["samples"]
    assert verdict.speedup == pytest.approx(verdict.ref_ms / verdict.sol_ms)
    assert verdict.clock == "end_to_end" and verdict.device_clock == "host"  # the CPU has one clock
    assert "reference_time_reused" not in verdict.flags


def test_cached_reference_times_only_on_request(cache_dir):
    _judge(cache_dir)  # makes sure a cached time exists
    again = _judge(cache_dir)
    assert again.ref_timing["cached"] is False  # measured anew, interleaved, without the flag
    reused = _judge(cache_dir, reuse_reference_times=True)
    assert reused.ref_timing["cached"] is True and "reference_time_reused" in reused.flags
    assert not set(reused.flags) - {"reference_time_reused"} and reused.accepted


def test_the_device_clock_can_be_chosen(cache_dir):
    verdict = _judge(cache_dir, clock="device")
    assert verdict.clock == "device" and verdict.speedup == pytest.approx(verdict.speedup_device)


def test_rounds_stop_together():
    plan = SamplingPlan("cuda", budget_s=1.0)
    tight = [1.0] * 20
    assert plan.done_together([tight, tight], elapsed_s=0.1)         # every median tight
    assert not plan.done_together([tight, [1.0, 3.0] * 10], 0.1)      # one is not, budget left
    assert plan.done_together([tight, [1.0, 3.0] * 10], 2.5)          # shared budget (2 x 1 s) used
    assert not plan.done_together([tight, [1.0] * 3], 2.5)            # but never below the minimum
    assert plan.done_together([tight, [1.0] * 3], 10.5)               # unless 5x the budget went by


def test_core_layout():
    layout = plan_cores(1, "cuda", cores=tuple(range(16)))
    assert layout.timing == ((14, 15),) and layout.builds == tuple(range(14)) and layout.active
    two = plan_cores(2, "cuda", cores=tuple(range(8)))
    assert two.timing == ((6, 7), (4, 5)) and two.builds == (0, 1, 2, 3)
    assert not plan_cores(1, "cpu", threads=1, cores=(0, 1)).active  # a 2-core CPU keeps both for builds
    assert plan_cores(1, "cpu", threads=1, cores=(0, 1, 2)).timing == ((2,),)
    assert not plan_cores(1, "cuda", reserved=0, cores=tuple(range(16))).active
