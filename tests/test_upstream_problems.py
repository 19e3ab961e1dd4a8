"""Upstream KernelBench problem files, with no kerneljudge metadata, judged on the CPU (issue 9, parts 4-5):
the judge derives a CPU-sized preset and held-out shapes from the problem's size constants."""

from __future__ import annotations

import pytest

from kerneljudge import Judge, JudgeOptions

from .conftest import FIXTURES

RELU = FIXTURES / "problems" / "upstream" / "relu_4096x393216.py"
SOLUTIONS = FIXTURES / "solutions" / "upstream"


@pytest.fixture(scope="module")
def judge(cache_dir):
    with Judge(JudgeOptions(device="cpu", trials=3, time_budget_s=0.2, run_timeout_s=60,
                            cache_dir=cache_dir)) as session:
        yield session


def test_an_upstream_problem_is_judged_at_its_derived_small_preset(judge):
    verdict = judge.judge(RELU, SOLUTIONS / "relu_triton.py")
    assert verdict.verdict == "correct" and verdict.accepted, verdict.reason
    assert verdict.preset == "small"
    shapes = verdict.shapes
    assert shapes["source"]["small"] == "derived" and shapes["source"]["held_out_small"] == "derived"
    # 4096 x 393216 floats is 6.4 GB; the derived preset keeps the input under the CPU budget
    assert shapes["preset"]["batch_size"] * shapes["preset"]["dim"] * 4 <= 4 << 20
    # aligned held-out widths: 393216 = 3 x 2^17 keeps the factor 128 (the small preset's 49152 = 3 x 2^14 too)
    widths = [v["dim"] for v in shapes["held_out"]]
    assert all(w % 128 == 0 for w in widths) and set(widths) - {shapes["preset"]["dim"]}, shapes


def test_a_hard_coded_width_fails_at_a_derived_held_out_shape(judge):
    verdict = judge.judge(RELU, SOLUTIONS / "relu_triton_fixed_width.py")
    assert not verdict.accepted
    assert "shape_specialized" in verdict.flags, verdict.reason
