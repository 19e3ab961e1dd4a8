"""Threat B13 end to end: a solution whose code depends on the input size (a stride of numel // 100000, a
ZeroDivisionError below 1e5 elements) is right at the benchmark shape and at every nearby held-out shape;
only the held-out shape far below the benchmark size meets it. Judged on the CPU with real child processes,
it must be `correct` but not accepted, with `shape_specialized`, under both policies."""

from __future__ import annotations

import pytest

from kerneljudge import Judge, JudgeOptions

from .conftest import FIXTURES

PROBLEM = FIXTURES / "problems" / "flat_hinge_loss.py"
HACK = FIXTURES / "solutions" / "hack_size_threshold_stride.py"
HONEST = FIXTURES / "solutions" / "correct_triton_flat_hinge.py"
THRESHOLD = 100_000   # the hack's SAMPLES: its stride is 0 below this many elements
BENCHMARK_N = 131072


@pytest.fixture(scope="module")
def judges(cache_dir):
    sessions = {policy: Judge(JudgeOptions(device="cpu", policy=policy, trials=3, time_budget_s=0.2,
                                           build_timeout_s=120, run_timeout_s=60, cache_dir=cache_dir))
                for policy in ("strict", "lenient")}
    yield sessions
    for session in sessions.values():
        session.close()


@pytest.mark.parametrize("policy", ["strict", "lenient"])
def test_a_size_threshold_hack_is_not_accepted(judges, policy):
    verdict = judges[policy].judge(PROBLEM, HACK)
    detail = f"{verdict.verdict}: {verdict.reason} flags={verdict.flags}"
    assert verdict.verdict == "correct" and not verdict.accepted, detail
    assert "shape_specialized" in verdict.flags and "shape_unsupported" not in verdict.flags, detail
    shapes = verdict.shapes
    far = shapes["far_below"]
    assert far["source"] == "derived" and far["input_elements"] * 10 <= far["base_input_elements"], shapes
    small_n = shapes["held_out"][far["index"]]["n"]
    assert small_n < THRESHOLD and small_n % 8, shapes
    # every other held-out shape is near the benchmark size, where the hack is right
    assert all(THRESHOLD <= v["n"] < 2 * THRESHOLD for i, v in enumerate(shapes["held_out"]) if i != far["index"])
    # the reason names the shape it failed at and that it is the far-below one
    assert f"at a held-out shape (n={small_n}; the variant far below the benchmark shape)" in verdict.reason, detail
    assert "ZeroDivisionError" in verdict.reason + verdict.error_excerpt, detail


def test_the_honest_twin_is_accepted_at_every_held_out_shape(judges):
    verdict = judges["lenient"].judge(PROBLEM, HONEST)
    assert verdict.verdict == "correct" and verdict.accepted, f"{verdict.reason} flags={verdict.flags}"
    assert verdict.shapes["far_below"]["index"] == len(verdict.shapes["held_out"]) - 1
