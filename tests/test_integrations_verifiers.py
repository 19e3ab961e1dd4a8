"""The verifiers environment end to end: a scripted OpenAI-compatible model server answers with recorded
replies, verifiers runs the rollouts, the local judge (child processes) decides, the rubric pays."""

from __future__ import annotations

import pytest

from .llm_server import llm_server  # noqa: F401  (the fixture)
from .rl_replies import EXPECTED, ONE_TURN, OPTIONS, PROBLEMS, TWO_TURNS, problem_of, responder

vf = pytest.importorskip("verifiers")
pytest.importorskip("verifiers.legacy", reason="the classic verifiers API (verifiers < 0.4)")


def client_for(server) -> "vf.ClientConfig":
    return vf.ClientConfig(api_base_url=server.openai_url, api_key_var="KJ_TEST_NO_KEY", max_retries=0)


def environment(cache_dir: str, turns: int):
    from kerneljudge.integrations.verifiers import load_environment

    return load_environment(problems=[str(p) for p in PROBLEMS.values()], backend="cpp", turns=turns,
                            device="cpu", options={**OPTIONS, "cache_dir": cache_dir})


def by_problem(outputs) -> dict[str, dict]:
    return {out["info"]["problem"]: out for out in outputs["outputs"]}


@pytest.mark.slow
def test_one_turn_evaluation_pays_only_the_honest_kernel(llm_server, cache_dir):  # noqa: F811
    llm_server.responder = responder(ONE_TURN)
    env = environment(cache_dir, turns=1)
    assert isinstance(env, vf.SingleTurnEnv)
    outputs = env.evaluate_sync(client=client_for(llm_server), model="recorded", state_columns=["kerneljudge"])
    rows = by_problem(outputs)
    assert set(rows) == set(EXPECTED)
    for name, (verdict, reward) in EXPECTED.items():
        row = rows[name]
        assert row["kerneljudge"]["final"]["verdict"] == verdict, (name, row["kerneljudge"])
        assert row["reward"] == pytest.approx(reward), (name, row["kerneljudge"])
        assert row["metrics"]["kerneljudge_accepted"] == (1.0 if verdict == "correct" else 0.0)
    assert rows["gather_rows"]["reward"] > 0 and rows["row_sum"]["reward"] == 0.0     # honest paid, hack not
    prompt = llm_server.requests[0].messages
    assert prompt[0]["role"] == "system" and "C++" in prompt[1]["content"]           # bench's own prompt


@pytest.mark.slow
def test_several_turns_feed_the_judges_report_back_until_accepted(llm_server, cache_dir):  # noqa: F811
    llm_server.responder = responder(TWO_TURNS)
    env = environment(cache_dir, turns=2)
    assert isinstance(env, vf.MultiTurnEnv) and not isinstance(env, vf.SingleTurnEnv)
    env.eval_dataset = env.eval_dataset.filter(lambda row: row["info"]["problem"] in TWO_TURNS)
    outputs = env.evaluate_sync(client=client_for(llm_server), model="recorded", state_columns=["kerneljudge"])
    rows = by_problem(outputs)
    fixed = rows["small_matmul"]["kerneljudge"]["turns"]
    assert [t["verdict"] for t in fixed] == ["build_error", "correct"]
    assert rows["small_matmul"]["reward"] == pytest.approx(1.0)
    assert [t["verdict"] for t in rows["row_sum"]["kerneljudge"]["turns"]] == ["rejected", "rejected"]
    assert rows["row_sum"]["reward"] == 0.0
    assert [t["verdict"] for t in rows["gather_rows"]["kerneljudge"]["turns"]] == ["correct"]   # stops at once
    second = [r.messages for r in llm_server.requests
              if problem_of(r.messages[1]["content"]) == "small_matmul" and len(r.messages) > 2]
    assert len(second) == 1
    feedback = second[0][-1]["content"]
    assert second[0][-1]["role"] == "user" and "failed to build" in feedback    # the judge's report, as bench's
