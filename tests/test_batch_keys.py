"""A run log is resumed only for verdicts judged under the same options (judging/batch.py's keys)."""

from __future__ import annotations

from types import SimpleNamespace

from kerneljudge.core.problem import sha256_text
from kerneljudge.core.types import JudgeOptions
from kerneljudge.judging.batch import Job, verdict_key


def _verdict(solution_text: str, problem_sha: str, **shapes) -> dict:
    return {"problem_sha256": problem_sha, "solution_sha256": sha256_text(solution_text), "device": "cuda",
            "precision": "fp32", "policy": "strict", "contract": "tf32", "clock_rule": "auto",
            "shapes": {"held_out_mode": "aligned", **shapes}}


def test_a_verdict_judged_under_a_device_memory_budget_is_not_reused_without_it(tmp_path):
    solution = tmp_path / "s.py"
    solution.write_text("class ModelNew: pass\n")
    job = Job(SimpleNamespace(sha256="p" * 64), solution)
    plain = JudgeOptions(device="cuda")
    budget = JudgeOptions(device="cuda", device_memory=24 << 30)
    judged_plain = _verdict(solution.read_text(), "p" * 64)
    judged_budget = _verdict(solution.read_text(), "p" * 64, device_memory=24 << 30)
    assert job.key(plain, "cuda") == verdict_key(judged_plain)
    assert job.key(budget, "cuda") == verdict_key(judged_budget)
    assert job.key(budget, "cuda") != verdict_key(judged_plain)
    assert job.key(plain, "cuda") != verdict_key(judged_budget)
