"""Threat C4 (impossible speed): the speed-of-light floor the judge checks GPU times against, which problems
it trusts, and how `below_speed_of_light` and `suspicious_speedup` are decided. No GPU needed: the counts are
synthetic or come from the lint worker, the device is described the way the reference process reports it."""

from __future__ import annotations

import pytest

from kerneljudge.judging import speed_of_light as S
from kerneljudge.core.problem import read_problem
from kerneljudge.judging import roofline
from kerneljudge.suite import catalog

H200_ENV = {"device_name": "NVIDIA H200", "l2_bytes": 50 << 20}


def _suite(stem: str):
    return read_problem(catalog.suite_root() / "level1" / f"{stem}.py")


@pytest.mark.parametrize("stem,structured", [
    ("1_square_matmul", False),
    ("21_relu", False),
    ("13_lower_triangular_matmul", True),    # tril(A) @ tril(B): half of each operand is never read
    ("14_upper_triangular_matmul", True),
    ("15_diag_matmul", True),                # diag(a) @ B: the FLOP count is a dense matmul's
    ("100_causal_attention", True),
    ("112_embedding_lookup", True),          # reads a few rows of a big table
    ("72_conv2d_strided", True),
])
def test_structure_marks_problems_whose_counts_overstate_the_work(stem, structured):
    assert (S.structure(_suite(stem)) is not None) == structured


def test_spec_is_matched_by_device_name():
    assert S.spec_for("NVIDIA H200")[0] == "h200"
    assert S.spec_for("NVIDIA H200 NVL")[0] == "h200"
    assert S.spec_for("NVIDIA A100-SXM4-80GB") is None and S.spec_for("") is None


def _counts(inputs: int, outputs: int, params: int = 0, flops: int | None = None) -> dict:
    tally = lambda n: {"float_elems": n, "other_bytes": 0, "count": 1}  # noqa: E731
    return {"flops": flops, "inputs": tally(inputs), "outputs": tally(outputs), "params": tally(params),
            "notes": []}


def test_floor_counts_inputs_and_outputs_beyond_two_l2s_and_leaves_parameters_out():
    l2 = 50 << 20
    counts = _counts(inputs=1 << 28, outputs=1 << 28, params=1 << 28)
    floor = S.floor_ms(counts, 4.8e12, 1e15, "fp32", l2, use_flops=False)
    moved = 2 * (1 << 28) * 4 - 2 * l2
    assert floor["bytes"] == moved and floor["floor_ms"] == pytest.approx(moved / 4.8e12 * 1e3)
    half = S.floor_ms(counts, 4.8e12, 1e15, "bf16", l2, use_flops=False)
    assert half["bytes"] == 2 * (1 << 28) * 2 - 2 * l2
    tiny = S.floor_ms(_counts(1000, 1000), 4.8e12, 1e15, "fp32", l2, use_flops=False)
    assert tiny["floor_ms"] == 0.0  # everything fits in L2: no floor at all
    matmul = S.floor_ms(_counts(2 * 4096 * 4096, 4096 * 4096, flops=2 * 4096 ** 3), 4.8e12, 9.89e14, "fp32", l2, True)
    assert matmul["bound_by"] == "compute"
    assert matmul["floor_ms"] == pytest.approx(2 * 4096 ** 3 / (S.COMPUTE_SLACK * 9.89e14) * 1e3)


def test_ceilings_take_the_fastest_known_rates():
    key, spec = S.spec_for("NVIDIA H200")
    bandwidth, tc = S._ceilings(key, spec)
    assert bandwidth >= max(spec.memory_bandwidth, roofline.H200_DATASHEET["memory_bandwidth"])
    assert tc >= max(spec.bf16_flops, spec.fp16_flops, spec.tf32_flops, roofline.H200_DATASHEET["bf16_flops"])


@pytest.fixture
def big_relu(monkeypatch):
    problem = _suite("21_relu")
    counts = _counts(inputs=1 << 28, outputs=1 << 28)
    monkeypatch.setattr(S, "_counts", lambda p, cache_dir, timeout_s, count=None: counts)
    key, spec = S.spec_for("NVIDIA H200")
    bandwidth, _ = S._ceilings(key, spec)
    floor_ms = (2 * (1 << 28) * 4 - 2 * (50 << 20)) / bandwidth * 1e3
    standard_ms = roofline.bound(counts, spec, "fp32")["sol_ms"]
    return problem, floor_ms, standard_ms


def test_time_below_the_floor_is_flagged(big_relu, tmp_path):
    problem, floor_ms, _ = big_relu
    out = S.assess(problem, {}, "fp32", H200_ENV, 0.5 * floor_ms, str(tmp_path))
    assert out["add"] == ["below_speed_of_light"] and "suspicious_speedup" not in out["drop"]
    assert "NVIDIA H200" in out["note"] and "TB/s" in out["note"]


def test_time_just_under_the_floor_is_within_the_margin(big_relu, tmp_path):
    problem, floor_ms, _ = big_relu
    out = S.assess(problem, {}, "fp32", H200_ENV, 0.9 * floor_ms, str(tmp_path))
    assert out["add"] == []


def test_plausible_time_drops_the_review_flag(big_relu, tmp_path):
    problem, _, standard_ms = big_relu
    out = S.assess(problem, {}, "fp32", H200_ENV, 1.5 * standard_ms, str(tmp_path))
    assert out == {"add": [], "drop": ["suspicious_speedup"], "note": "", "floor_ms": pytest.approx(out["floor_ms"])}
    between = S.assess(problem, {}, "fp32", H200_ENV, 0.95 * standard_ms, str(tmp_path))
    assert between["add"] == [] and between["drop"] == []  # faster than the suite's bound: review stays


def test_no_bound_changes_nothing(big_relu, tmp_path, monkeypatch):
    problem, floor_ms, _ = big_relu
    for env, preset in (({"device_name": "NVIDIA A100-SXM4-80GB"}, {}), (H200_ENV, {"batch_size": 8})):
        out = S.assess(problem, preset, "fp32", env, 0.01 * floor_ms, str(tmp_path))
        assert out["add"] == [] and out["drop"] == [] and out["note"]
    monkeypatch.setattr(S, "_counts", lambda p, cache_dir, timeout_s, count=None: {"error": "the problem failed"})
    out = S.assess(problem, {}, "fp32", H200_ENV, 0.01 * floor_ms, str(tmp_path))
    assert out["add"] == [] and "counts unavailable" in out["note"]


def test_structured_problem_is_never_flagged(tmp_path, monkeypatch):
    problem = _suite("13_lower_triangular_matmul")
    monkeypatch.setattr(S, "_counts",
                        lambda p, cache_dir, timeout_s, count=None: _counts(3 << 24, 1 << 24, flops=2 << 36))
    out = S.assess(problem, {}, "fp32", H200_ENV, 1e-6, str(tmp_path))
    assert out["add"] == [] and "no floor" in out["note"]


def test_real_counts_of_a_square_matmul(cache_dir):
    problem = _suite("1_square_matmul")   # counted on the meta device in the lint worker, cached
    n = problem.constants["N"]
    out = S.assess(problem, {}, "fp32", H200_ENV, 1e-6, cache_dir)
    assert out["add"] == ["below_speed_of_light"] and "GFLOP" in out["note"]
    assert out["floor_ms"] == pytest.approx(2 * n ** 3 / (S.COMPUTE_SLACK * S._ceilings(*S.spec_for("H200"))[1]) * 1e3,
                                            rel=1e-6)
    assert S.assess(problem, {}, "fp32", H200_ENV, 1e3, cache_dir)["drop"] == ["suspicious_speedup"]


class _Reference:
    environment = dict(H200_ENV)


def _context(stem: str, device: str = "cuda"):
    from kerneljudge import JudgeOptions
    from kerneljudge.judging import context, work_audit

    return work_audit, context.Context(_suite(stem), JudgeOptions(device=device), device, _Reference(), False, {})


def test_judge_raises_the_flag_with_its_reason(big_relu, monkeypatch, cache_dir):
    E, ctx = _context("21_relu")
    ctx.flags.add("suspicious_speedup")
    _, floor_ms, _ = big_relu
    E.speed_of_light_check(ctx, {"sol_ms": 0.1 * floor_ms}, _Reference.environment, cache_dir)
    assert "below_speed_of_light" in ctx.flags  # the review flag may stay: both block acceptance
    assert "least time any NVIDIA H200 needs" in ctx.info["flag_notes"]["below_speed_of_light"]
    assert "speed_of_light" in ctx.phases


def test_judge_ignores_cpu_runs_and_survives_a_failing_bound(monkeypatch, cache_dir):
    E, ctx = _context("21_relu", device="cpu")
    ctx.flags.add("suspicious_speedup")
    E.speed_of_light_check(ctx, {"sol_ms": 1e-9}, _Reference.environment, cache_dir)
    assert ctx.flags == {"suspicious_speedup"}
    E, ctx = _context("21_relu")
    ctx.flags.add("suspicious_speedup")

    def broken(*a, **k):
        raise RuntimeError("lint worker gone")

    monkeypatch.setattr(S, "assess", broken)
    E.speed_of_light_check(ctx, {"sol_ms": 1e-9}, _Reference.environment, cache_dir)
    assert ctx.flags == {"suspicious_speedup"} and "lint worker gone" in ctx.info["speed_of_light"]


@pytest.mark.suite
def test_no_measured_h200_baseline_is_below_the_floor(cache_dir):
    """Honest kernels never trip the flag: PyTorch eager and torch.compile, timed on an H200 with the judge's
    method (docs/evidence/*-h200-baselines.jsonl), stay above the floor of every suite problem that has one."""
    import json
    from pathlib import Path

    files = sorted((Path(__file__).resolve().parent.parent / "docs" / "evidence").glob("*-h200-baselines.jsonl"))
    if not files:
        pytest.skip("no H200 baselines recorded")
    fastest: dict[str, float] = {}
    for line in files[-1].read_text().splitlines():
        row = json.loads(line)
        if row.get("status") == "ok" and row.get("precision", "fp32") == "fp32" and row.get("timing"):
            fastest[row["problem_id"]] = min(fastest.get(row["problem_id"], float("inf")), row["timing"]["min_ms"])
    key, spec = S.spec_for("NVIDIA H200")
    bandwidth, tc_rate = S._ceilings(key, spec)
    checked = 0
    with roofline.LintWorker(cache_dir) as worker:
        for problem in catalog.list_problems(None, None):
            if problem.id not in fastest or S.structure(problem):
                continue
            counts = roofline.measure_with(worker, problem)
            floor = S.floor_ms(counts, bandwidth, tc_rate, "fp32", 60 << 20, problem.category in S.COMPUTE_CATEGORIES)
            if counts.get("error") or not floor or floor["floor_ms"] <= 0:
                continue
            checked += 1
            # stricter than the flag itself (which needs MARGIN x the floor): the fastest sample is above it
            assert fastest[problem.id] >= floor["floor_ms"], (problem.id, fastest[problem.id], floor)
    assert checked >= 100
