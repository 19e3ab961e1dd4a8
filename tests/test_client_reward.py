"""The reward function (shaping, extraction, TRL's call) in-process and against a service; the clients."""

from __future__ import annotations

import asyncio
import math

import pytest

from .conftest import FIXTURES
from .service_proc import Service

from kerneljudge.service.reward import KernelReward, RewardShaping, reply_text

ROW_SUM = str(FIXTURES / "problems" / "row_sum.py")
CORRECT = (FIXTURES / "solutions" / "correct_triton_row_sum.py").read_text()
TORCH = (FIXTURES / "solutions" / "torch_plain.py").read_text()
OPTIONS = {"timing": False, "trials": 2}


def fenced(code: str, before: str = "Here is my kernel.") -> str:
    return f"{before}\n\n```python\n{code}```\n\nIt should be fast."


def test_shaping_never_pays_a_cheat_more_than_a_wrong_answer():
    s = RewardShaping()
    assert s.reward(None) == s.no_code == 0.0
    assert s.reward({"verdict": "build_error", "accepted": False}) == 0.0
    assert s.reward({"verdict": "timeout", "accepted": False}) == 0.0
    wrong = s.reward({"verdict": "wrong_output", "accepted": False})
    assert wrong == s.compiled > 0
    assert s.reward({"verdict": "rejected", "accepted": False, "flags": ["policy:torch_compute"]}) <= wrong
    flagged = {"verdict": "correct", "accepted": False, "speedup": 50.0, "flags": ["timing_inconsistent"]}
    assert s.reward(flagged) <= wrong                       # correct but not accepted: no more than wrong
    assert s.reward({"verdict": "correct", "accepted": True, "speedup": None}) == s.correct
    assert s.reward({"verdict": "correct", "accepted": True, "speedup": 2.0}) == pytest.approx(1.25)
    assert s.reward({"verdict": "correct", "accepted": True, "speedup": 0.01}) == pytest.approx(0.75)   # clamped
    assert s.reward({"verdict": "correct", "accepted": True, "speedup": 1e6}) == pytest.approx(1.75)    # clamped
    assert s.reward({"verdict": "correct", "accepted": True, "speedup": math.inf}) == s.correct
    with pytest.raises(ValueError, match="never earn more"):
        RewardShaping(rejected=0.5, compiled=0.1)
    with pytest.raises(ValueError, match="at least what a wrong one"):
        RewardShaping(correct=0.2, speedup_weight=1.0, log2_min=-2)


def test_reply_text_takes_strings_and_conversations():
    assert reply_text("abc") == "abc"
    assert reply_text([{"role": "assistant", "content": "x"}]) == "x"
    assert reply_text([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a1"},
                       {"role": "assistant", "content": "a2"}]) == "a2"
    assert reply_text(None) == ""


@pytest.mark.slow
def test_reward_in_process_with_trl_call(cache_dir):
    completions = [
        [{"role": "assistant", "content": fenced(CORRECT)}],         # TRL's conversational format
        [{"role": "assistant", "content": "I would use a Triton kernel, but I am not sure how."}],
        [{"role": "assistant", "content": fenced(TORCH, "Simplest is plain PyTorch:")}],
        [{"role": "assistant", "content": fenced(CORRECT, "Same again:")}],
    ]
    with KernelReward(device="cpu", options={**OPTIONS, "cache_dir": cache_dir}, workers=2) as reward:
        assert reward.__name__ == "kerneljudge_reward"
        scores = reward(prompts=["p"] * 4, completions=completions, completion_ids=[[1]] * 4,
                        problem_id=[ROW_SUM] * 4, trainer_state=None)
        results = reward.last_results
        assert scores == [1.0, 0.0, 0.0, 1.0]
        assert results[0].verdict["verdict"] == "correct" and results[1].verdict is None
        assert results[1].extraction["outcome"] == "no_code"
        assert results[2].verdict["verdict"] == "rejected"
        assert results[3].verdict == results[0].verdict           # judged once, from the cache
        with pytest.raises(TypeError, match="problem_id"):
            reward(prompts=["p"], completions=["x"])


@pytest.mark.slow
def test_reward_and_clients_against_a_service(tmp_path, cache_dir):
    pytest.importorskip("aiohttp")
    from kerneljudge.service.client import AsyncJudgeClient, JobTimeout, JudgeClient

    service = Service(tmp_path / "journal", "--no-timing", "--trials", "2", cache_dir=cache_dir)
    try:
        reward = KernelReward(url=service.url, options=OPTIONS)
        results = reward.score([fenced(CORRECT), "no code here", fenced(TORCH)], [ROW_SUM] * 3)
        assert [r.reward for r in results] == [1.0, 0.0, 0.0]
        assert results[0].verdict["device"] == "cpu" and results[2].verdict["verdict"] == "rejected"

        client = JudgeClient(service.url)
        assert client.health() and client.status()["counters"]["judged"] == 2
        job = client.submit(TORCH, problem_text=(FIXTURES / "problems" / "row_sum.py").read_text(),
                            options={"timing": False, "trials": 2})
        assert client.get(job)["state"] == "done"                 # the cached verdict: nothing to judge
        slow = client.submit((FIXTURES / "solutions" / "timeout_import_sleep.py").read_text(),
                             problem_text=(FIXTURES / "problems" / "row_sum.py").read_text(),
                             options={"build_timeout_s": 5.0})
        with pytest.raises(JobTimeout):
            client.wait(slow, timeout_s=0.5)

        async def use_async() -> tuple:
            async with AsyncJudgeClient(service.url) as aclient:
                ok = await aclient.health()
                verdict = await aclient.judge(TORCH, problem="level1/21_relu")
                waited = await aclient.wait(slow, timeout_s=60)
                return ok, verdict, waited, await aclient.status()

        ok, verdict, waited, status = asyncio.run(use_async())
        assert ok and verdict["verdict"] == "rejected" and verdict["problem_id"] == "level1/21_relu"
        assert waited["verdict"] == "timeout"
        assert status["counters"]["judged"] == 4
    finally:
        service.stop()


@pytest.mark.slow
def test_the_reward_example_runs(tmp_path):
    import os
    import subprocess
    import sys

    from .conftest import ROOT

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "reward_example.py"), "--steps", "2"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("mean reward 0.275") == 2, proc.stdout


def test_an_unjudgeable_verdict_earns_no_reward():
    s = RewardShaping()
    outcome = {"kind": "degenerate_reference", "reason": "noise-level output", "figures": {"ref_rms": 1e-9}}
    assert s.reward({"verdict": "unjudgeable", "accepted": False, "speedup": None, "problem_outcome": outcome}) is None
    assert s.reward({"verdict": "unjudgeable", "accepted": False}) is None    # whatever the outcome says


def test_the_trl_call_passes_none_through_for_unjudgeable_verdicts(monkeypatch):
    from kerneljudge.service.reward import KernelReward

    verdicts = {"good": {"verdict": "correct", "accepted": True, "speedup": 2.0},
                "noise": {"verdict": "unjudgeable", "accepted": False, "speedup": None,
                          "problem_outcome": {"kind": "reference_failed", "reason": "OOM", "figures": {}}}}
    reward = KernelReward.__new__(KernelReward)        # no pool or client: _judge is replaced below
    reward.shaping, reward.backend, reward.problem_column, reward.last_results = RewardShaping(), None, "problem_id", []
    monkeypatch.setattr(reward, "_judge", lambda pairs: [verdicts[p] for p, _ in pairs], raising=False)
    code = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    scores = reward(prompts=["p"] * 3, completions=[fenced(code), fenced(code), "no code here"],
                    problem_id=["good", "noise", "noise"])
    assert scores == [pytest.approx(1.25), None, 0.0]
    assert reward.last_results[1].reward is None and reward.last_results[1].verdict["verdict"] == "unjudgeable"
