"""Numerics fixtures judged end to end, with real child processes, under each contract (issue: every
published reward hack rejected): partial computations in long sums, precision laundering, a constant on a
noise-level reference are refused; honest atomics, split-K and TF32 get what their arithmetic deserves; a
problem whose reference is noise or cannot run gets the problem-level verdict `unjudgeable` (`# outcome:`).

Each solution under tests/fixtures/numerics/solutions names its problem and, per contract, its verdict in a
`# numerics: tf32=... fp32=...` line. The solutions call PyTorch or Triton, so they are judged under the lenient
policy: this file is about numerics, not about what strict policy thinks of library calls.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kerneljudge import Judge, JudgeOptions

from .conftest import FIXTURES

HERE = FIXTURES / "numerics"
_EXPECT = re.compile(r"^#\s*numerics:\s*(.+)$")
_PROBLEM = re.compile(r"^#\s*problem:\s*(\S+)")
_OUTCOME = re.compile(r"^#\s*outcome:\s*(\S+)")


def _cases() -> list[tuple[Path, Path, str, str, str | None]]:
    cases = []
    for path in sorted((HERE / "solutions").glob("*.py")):
        head = path.read_text().splitlines()[:10]
        problem = next(m.group(1) for line in head if (m := _PROBLEM.match(line)))
        expected = next(m.group(1) for line in head if (m := _EXPECT.match(line)))
        outcome = next((m.group(1) for line in head if (m := _OUTCOME.match(line))), None)
        where = HERE / "problems" / problem
        where = where if where.exists() else FIXTURES / "problems" / problem
        for pair in expected.split():
            contract, verdict = pair.split("=")
            cases.append((where, path, contract, verdict, outcome))
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def judges(cache_dir):
    sessions = {contract: Judge(JudgeOptions(device="cpu", policy="lenient", preset="default", numerics=contract,
                                             trials=5, timing=False, held_out=False, run_timeout_s=120,
                                             cache_dir=cache_dir))
                for contract in ("tf32", "fp32", "kernelbench")}
    yield sessions
    for s in sessions.values():
        s.close()


def test_every_named_fixture_is_here():
    names = {path.stem for _, path, _, _, _ in CASES}
    assert {"heavy_mean__atomics_triton", "heavy_mean__strided_partial", "hinge_mean__partial", "scale_relu__bf16",
            "small_matmul__split_k_triton", "small_matmul__tf32_operands", "noise_mean__constant",
            "reference_fails__identity", "cancelling_matmul__identity", "cancelling_matmul__tf32_operands"} <= names


@pytest.mark.slow
@pytest.mark.parametrize("problem,solution,contract,expected,outcome", CASES,
                         ids=[f"{s.stem}-{c}" for _, s, c, _, _ in CASES])
def test_numerics_fixture(problem, solution, contract, expected, outcome, judges):
    verdict = judges[contract].judge(problem, solution)
    detail = f"{verdict.verdict}: {verdict.reason} flags={verdict.flags}\n{verdict.error_excerpt[-1500:]}"
    assert verdict.verdict == expected, detail
    assert verdict.accepted == (expected == "correct"), detail
    if expected == "correct" and (verdict.numerics or {}).get("class") == "tf32":
        assert "reduced_precision" in verdict.flags, detail
    if "cancelling_matmul" in problem.name and contract == "tf32":   # degenerate under tf32 alone: judged under fp32
        assert verdict.contract == "fp32" and "contract_tightened" in verdict.flags, detail
    if outcome:
        assert (verdict.problem_outcome or {}).get("kind") == outcome, detail
        assert "reference_error" not in verdict.flags, detail
