"""What the RL integrations share, without any RL framework: problem sets, prompts, feedback, the RL reward."""

from __future__ import annotations

import pytest

from .rl_replies import PROBLEMS

from kerneljudge.integrations.episode import JudgeSettings, RL_SHAPING, feedback_message, first_messages
from kerneljudge.integrations.problems import resolve_problems
from kerneljudge.service.reward import RewardResult


def test_problem_sets_resolve():
    examples = resolve_problems("examples")
    assert [p.name for p in examples] == ["1_gelu_scale", "2_softmax_rows", "3_layernorm", "4_matmul_bias_relu"]
    (relu,) = resolve_problems("level1/21_relu")
    assert relu.id == "level1/21_relu" and "class Model" in relu.text
    assert len(resolve_problems("level1")) > 50
    folder = resolve_problems(str(PROBLEMS["row_sum"].parent))
    assert {p.name for p in folder} >= set(PROBLEMS)
    assert resolve_problems([str(PROBLEMS["row_sum"]), "level1/21_relu"])[1].id == "level1/21_relu"
    with pytest.raises(ValueError, match="not a problem set"):
        resolve_problems("no/such/problem")


def test_prompts_and_feedback_are_benchs_and_hide_held_out_shapes():
    problem = resolve_problems(str(PROBLEMS["scale_relu"]))[0]
    settings = JudgeSettings(backend="cpp")
    system, user = first_messages(problem, settings)
    assert system["role"] == "system" and user["role"] == "user" and "HELD_OUT" not in user["content"]
    verdict = {"verdict": "wrong_output", "accepted": False, "reason": "output mismatch", "flags": [],
               "findings": [], "error_excerpt": ""}
    message = feedback_message(problem, settings, RewardResult(0.0, verdict, {"code": "print('mine')\n"}))
    assert message["role"] == "user" and "print('mine')" in message["content"]
    assert "wrong output" in message["content"] and "HELD_OUT" not in message["content"]
    no_code = feedback_message(problem, settings, RewardResult(0.0, None, {"note": "empty reply"}))
    assert "no usable code" in no_code["content"]


def test_the_rl_reward_pays_only_accepted_kernels():
    assert RL_SHAPING.reward(None) == 0.0
    for kind in ("build_error", "runtime_error", "timeout", "wrong_output", "rejected"):
        assert RL_SHAPING.reward({"verdict": kind, "accepted": False}) == 0.0
    assert RL_SHAPING.reward({"verdict": "correct", "accepted": False, "speedup": 40.0,
                              "flags": ["timing_inconsistent"]}) == 0.0
    assert RL_SHAPING.reward({"verdict": "correct", "accepted": True, "speedup": 2.0}) == pytest.approx(1.25)
    assert RL_SHAPING.reward({"verdict": "correct", "accepted": True, "speedup": 0.1}) == pytest.approx(0.75)
    assert RL_SHAPING.reward({"verdict": "unjudgeable", "accepted": False}) is None
