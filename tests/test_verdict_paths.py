"""Every verdict path with real child processes: each labelled fixture must get its labelled verdict."""

from __future__ import annotations

import pytest

from kerneljudge import Judge, JudgeOptions
from kerneljudge.core.types import BLOCKING_FLAGS

from .conftest import FIXTURES, has_cuda
from .labels import collect

CASES = collect(FIXTURES / "solutions")


def _options(cache_dir: str, device: str, policy: str) -> JudgeOptions:
    # short limits keep the hang cases quick; 5 trials is the judge's minimum worth trusting
    return JudgeOptions(device=device, policy=policy, trials=5, time_budget_s=0.3, build_timeout_s=120,
                        run_timeout_s=25, cache_dir=cache_dir)


@pytest.fixture(scope="module")
def judges(cache_dir):
    device = "cuda" if has_cuda() else "cpu"
    sessions = {policy: Judge(_options(cache_dir, device, policy)) for policy in ("strict", "lenient")}
    yield sessions
    for s in sessions.values():
        s.close()


def _params():
    out = []
    for case in CASES:
        marks = [pytest.mark.gpu] if "cuda" in case.needs else []
        out.append(pytest.param(case, "strict", case.expect, marks=marks, id=f"{case.path.stem}-strict"))
        if case.expect_lenient:
            out.append(pytest.param(case, "lenient", case.expect_lenient, marks=marks,
                                    id=f"{case.path.stem}-lenient"))
    return out


def test_fixtures_exist():
    assert len(CASES) >= 20, "the fixture suite went missing"


@pytest.mark.parametrize("case,policy,expected", _params())
def test_fixture_gets_its_label(case, policy, expected, judges):
    problem = FIXTURES / "problems" / (case.problem or "scale_relu.py")
    verdict = judges[policy].judge(problem, case.path)
    detail = f"{verdict.verdict}: {verdict.reason} flags={verdict.flags}\n{verdict.error_excerpt[-1500:]}"
    assert verdict.verdict == expected, detail
    assert case.flags <= set(verdict.flags), detail
    if expected == "correct":
        assert verdict.accepted != bool(case.flags & BLOCKING_FLAGS), detail
        assert verdict.speedup and verdict.speedup > 0 and verdict.ref_ms and verdict.sol_ms
    else:
        assert not verdict.accepted and verdict.speedup is None
