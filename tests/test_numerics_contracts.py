"""The numerics contract chosen by the user decides, with real child processes (issue 9, part 2): an fp16-operand
Triton matmul is of the tf32 class, so it is correct under the default contract (flagged reduced_precision)
and wrong under fp32; every contract refuses a zero output; the verdict carries the numerics object."""

from __future__ import annotations

import pytest

from kerneljudge import Judge, JudgeOptions

from .conftest import FIXTURES

MATMUL = FIXTURES / "problems" / "small_matmul.py"
ROW_SUM = FIXTURES / "problems" / "row_sum.py"


@pytest.fixture(scope="module")
def judges(cache_dir):
    sessions = {c: Judge(JudgeOptions(device="cpu", trials=3, time_budget_s=0.2, run_timeout_s=60, numerics=c,
                                      cache_dir=cache_dir)) for c in ("tf32", "fp32", "kernelbench")}
    yield sessions
    for s in sessions.values():
        s.close()


def test_fp16_operands_are_the_tf32_class(judges):
    default = judges["tf32"].judge(MATMUL, FIXTURES / "solutions" / "reduced_fp16_dot.py")
    assert default.verdict == "correct" and default.accepted, default.reason
    assert default.contract == "tf32" and default.numerics["class"] == "tf32"
    assert "reduced_precision" in default.flags
    assert set(default.numerics) >= {"max_abs_err", "max_rel_err", "rel_l2", "frac_over_tol", "class", "contract"}
    strict = judges["fp32"].judge(MATMUL, FIXTURES / "solutions" / "reduced_fp16_dot.py")
    assert strict.verdict == "wrong_output" and "tf32" in strict.reason
    assert strict.numerics and strict.numerics["class"] == "tf32"  # a refused output still reports its error


def test_exact_fp32_kernel_passes_every_contract(judges):
    for contract, judge in judges.items():
        verdict = judge.judge(MATMUL, FIXTURES / "solutions" / "correct_triton_small_matmul.py")
        assert verdict.verdict == "correct" and verdict.accepted, (contract, verdict.reason)
        assert verdict.numerics["class"] in ("exact", "fp32") and "reduced_precision" not in verdict.flags
    assert "kernelbench_tolerance" in verdict.flags


@pytest.mark.parametrize("contract", ["tf32", "fp32", "kernelbench"])
def test_zero_output_fails_in_every_contract(judges, contract):
    verdict = judges[contract].judge(ROW_SUM, FIXTURES / "solutions" / "wrong_returns_zeros.py")
    assert verdict.verdict == "wrong_output", verdict.reason
    assert verdict.numerics["class"] == "wrong"
