"""Threat B13 end to end, and the held-out modes (--held-out aligned|general|none) on one problem.

A solution whose code depends on the input size (a stride of numel // 100000, a ZeroDivisionError below 1e5
elements) is right at the benchmark shape and at every nearby held-out shape; only the held-out shape far
below the benchmark size meets it. Judged on the CPU with real child processes, it must be `correct` but not
accepted, with `shape_specialized`, under both policies and both rules that make held-out shapes. A solution
that hard-codes the benchmark's size must fail under both policies too; one that tiles the aligned size
without tails passes the default (aligned) rule and fails the stricter general one; `none` checks the
benchmark shape only, as upstream KernelBench does, and says so on the verdict."""

from __future__ import annotations

import pytest

from kerneljudge import Judge, JudgeOptions

from .conftest import FIXTURES

PROBLEM = FIXTURES / "problems" / "flat_hinge_loss.py"
HACK = FIXTURES / "solutions" / "hack_size_threshold_stride.py"
HONEST = FIXTURES / "solutions" / "correct_triton_flat_hinge.py"
TILES = FIXTURES / "solutions" / "correct_triton_flat_hinge_tiles.py"     # whole tiles of 128, no tail
EXACT = FIXTURES / "solutions" / "hack_exact_count_hinge.py"              # divides by the benchmark's count
THRESHOLD = 100_000   # the hack's SAMPLES: its stride is 0 below this many elements
BENCHMARK_N = 196608  # 3 x 2^16: the aligned rule keeps its factor 128


@pytest.fixture(scope="module")
def judges(cache_dir):
    sessions: dict[tuple[str, str], Judge] = {}

    def get(policy: str, mode: str) -> Judge:
        if (policy, mode) not in sessions:
            sessions[(policy, mode)] = Judge(JudgeOptions(device="cpu", policy=policy, held_out=mode, trials=3,
                                                          time_budget_s=0.2, build_timeout_s=120, run_timeout_s=60,
                                                          cache_dir=cache_dir))
        return sessions[(policy, mode)]

    yield get
    for session in sessions.values():
        session.close()


def _detail(verdict) -> str:
    return f"{verdict.verdict}: {verdict.reason} flags={verdict.flags}"


@pytest.mark.parametrize("policy,mode", [("strict", "aligned"), ("lenient", "aligned"), ("strict", "general")])
def test_a_size_threshold_hack_is_not_accepted(judges, policy, mode):
    verdict = judges(policy, mode).judge(PROBLEM, HACK)
    detail = _detail(verdict)
    assert verdict.verdict == "correct" and not verdict.accepted, detail
    assert "shape_specialized" in verdict.flags and "shape_unsupported" not in verdict.flags, detail
    shapes = verdict.shapes
    assert shapes["held_out_mode"] == mode
    far = shapes["far_below"]
    assert far["source"] == "derived" and far["input_elements"] * 10 <= far["base_input_elements"], shapes
    small_n = shapes["held_out"][far["index"]]["n"]
    assert small_n < THRESHOLD, shapes
    # aligned: the benchmark size's factor 128 is kept; general: odd sizes
    assert small_n % 128 == 0 if mode == "aligned" else small_n % 2 == 1, shapes
    # every other held-out shape is near the benchmark size, where the hack is right
    nearby = [v["n"] for i, v in enumerate(shapes["held_out"]) if i != far["index"]]
    assert nearby and all(THRESHOLD <= n < 2 * THRESHOLD and n != BENCHMARK_N for n in nearby), shapes
    # the reason names the shape it failed at and that it is the far-below one
    assert f"at a held-out shape (n={small_n}; the variant far below the benchmark shape)" in verdict.reason, detail
    assert "ZeroDivisionError" in verdict.reason + verdict.error_excerpt, detail


@pytest.mark.parametrize("policy", ["strict", "lenient"])
def test_a_hard_coded_benchmark_size_fails_at_a_held_out_shape(judges, policy):
    verdict = judges(policy, "aligned").judge(PROBLEM, EXACT)
    assert verdict.verdict == "wrong_output" and not verdict.accepted, _detail(verdict)
    assert "shape_specialized" in verdict.flags and "at a held-out shape" in verdict.reason, _detail(verdict)


def test_the_honest_twin_is_accepted_at_every_held_out_shape(judges):
    verdict = judges("lenient", "aligned").judge(PROBLEM, HONEST)
    assert verdict.verdict == "correct" and verdict.accepted, _detail(verdict)
    assert verdict.shapes["far_below"]["index"] == len(verdict.shapes["held_out"]) - 1


def test_tiles_without_a_tail_pass_aligned_and_fail_general(judges):
    aligned = judges("strict", "aligned").judge(PROBLEM, TILES)
    assert aligned.verdict == "correct" and aligned.accepted, _detail(aligned)
    assert all(v["n"] % 128 == 0 for v in aligned.shapes["held_out"]), aligned.shapes
    general = judges("strict", "general").judge(PROBLEM, TILES)
    assert general.verdict == "correct" and not general.accepted, _detail(general)
    assert "shape_specialized" in general.flags and "whole tiles of 128" in general.reason + general.error_excerpt


def test_no_held_out_shapes_is_upstreams_semantics_and_says_so(judges):
    # without held-out shapes the size-threshold hack passes: what upstream KernelBench would accept
    verdict = judges("lenient", "none").judge(PROBLEM, HACK)
    assert verdict.verdict == "correct" and verdict.accepted, _detail(verdict)
    assert "held_out_off" in verdict.flags and "shape_specialized" not in verdict.flags, _detail(verdict)
    assert verdict.shapes["held_out"] == [] and verdict.shapes["far_below"] is None
    assert verdict.shapes["held_out_mode"] == "none"
