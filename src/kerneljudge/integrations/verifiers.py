"""A verifiers environment (Prime Intellect's `verifiers`, the classic Environment API: `pip install
'kerneljudge[verifiers]'`): the model writes a kernel, the judge decides, the rubric pays only for accepted
kernels.

    from kerneljudge.integrations.verifiers import load_environment
    env = load_environment(problems="examples", backend="cuda", turns=1)             # vf.SingleTurnEnv
    env = load_environment(problems="level1", turns=4, service_url="http://127.0.0.1:8000")   # vf.MultiTurnEnv
    results = env.evaluate_sync(client=ClientConfig(...), model="my-model")

One turn: a SingleTurnEnv over bench's zero-shot prompt. Several turns: a MultiTurnEnv whose environment
response is bench's refinement prompt (the previous solution and the judge's report on it); the episode
ends on an accepted kernel or after `turns` replies. The reward (`kerneljudge_reward`, episode.RL_SHAPING)
is that of the last reply's verdict: 0.0 unless accepted, 1 + 0.25 * clamp(log2(speedup), -1, 3) when
accepted. Every verdict stays in the rollout's state under "kerneljudge" ({"turns": [summary per judged
reply], "final": the last one}) and the rubric also reports `kerneljudge_accepted` (weight 0) for logging.
Judging never runs in the trainer's process: a `kerneljudge serve` at service_url, or child processes of a
local judging pool (device=...).
"""

from __future__ import annotations

import asyncio
from typing import Any, Sequence

import verifiers as vf
from datasets import Dataset

from kerneljudge.integrations.episode import (
    JudgeSettings, feedback_message, first_messages, judge_reply, open_judge, summary,
)
from kerneljudge.integrations.problems import ProblemRef, resolve_problems
from kerneljudge.service.reward import KernelReward, RewardShaping

STATE_KEY = "kerneljudge"


def load_environment(problems: str | Sequence[str] = "examples", backend: str = "cuda", turns: int = 1,
                     policy: str = "strict", numerics: str = "tf32", service_url: str | None = None,
                     token: str | None = None, device: str = "auto", precision: str = "fp32",
                     options: dict[str, Any] | None = None, shaping: RewardShaping | None = None,
                     **env_kwargs: Any) -> vf.Environment:
    """The kerneljudge environment (module docstring). `problems`: "examples", "suite", "levelN", a folder,
    a suite id or a list of ids/files (integrations/problems.py). `options`: more judge options
    (trials, timing, time_budget_s, cache_dir, ...). Extra keyword arguments go to the verifiers Environment."""
    if turns < 1:
        raise ValueError("turns must be at least 1")
    settings = JudgeSettings(backend=backend, policy=policy, numerics=numerics, precision=precision,
                             service_url=service_url, token=token, device=device, options=dict(options or {}),
                             **({"shaping": shaping} if shaping is not None else {}))
    refs = resolve_problems(problems)
    judge = open_judge(settings)
    by_id = {p.id: p for p in refs}
    rubric = KernelRubric(judge, by_id)
    dataset = Dataset.from_list([{"prompt": first_messages(p, settings), "answer": "",
                                  "info": {"problem_id": p.id, "problem": p.name}}
                                 for p in refs])
    common = dict(dataset=dataset, eval_dataset=dataset, rubric=rubric, env_id="kerneljudge", **env_kwargs)
    if turns == 1:
        return vf.SingleTurnEnv(**common)
    return KernelRefineEnv(judge, settings, by_id, max_turns=turns, **common)


async def _judged(state: dict, judge: KernelReward, problem: ProblemRef, reply: Any) -> tuple[dict, Any]:
    """Judge one reply in a worker thread (the judge blocks) and record its summary (plain JSON) in the state;
    returns the summary and the full RewardResult."""
    result = await asyncio.to_thread(judge_reply, judge, problem, _plain(reply))
    record = state.setdefault(STATE_KEY, {"turns": [], "final": None})
    entry = summary(result)
    record["turns"].append(entry)
    record["final"] = entry
    record["judged_replies"] = _replies(state)
    return entry, result


def _plain(messages: Any) -> Any:
    """verifiers' messages (pydantic models) as the role/content dicts KernelReward reads."""
    if isinstance(messages, (list, tuple)):
        return [m.model_dump() if hasattr(m, "model_dump") else m for m in messages]
    return messages


def _replies(state: dict) -> int:
    return len(state.get("trajectory") or [])


class KernelRubric(vf.Rubric):
    """The reward of the last reply's verdict; it judges the reply unless the environment already did."""

    def __init__(self, judge: KernelReward, problems: dict[str, ProblemRef]):
        self.judge = judge
        self.problems = problems

        async def kerneljudge_reward(completion: Any, state: dict, info: dict) -> float:
            record = state.get(STATE_KEY)
            if record is None or record.get("judged_replies") != _replies(state):
                record_entry, _ = await _judged(state, judge, problems[info["problem_id"]], completion)
            else:
                record_entry = record["final"]
            return record_entry["reward"]

        async def kerneljudge_accepted(state: dict) -> float:
            final = (state.get(STATE_KEY) or {}).get("final") or {}
            return 1.0 if final.get("accepted") else 0.0

        super().__init__(funcs=[kerneljudge_reward, kerneljudge_accepted], weights=[1.0, 0.0])


class KernelRefineEnv(vf.MultiTurnEnv):
    """Several turns: after each reply that is not accepted, the judge's refinement prompt is the next user
    message; an accepted reply ends the episode."""

    def __init__(self, judge: KernelReward, settings: JudgeSettings, problems: dict[str, ProblemRef], **kwargs):
        super().__init__(**kwargs)
        self.judge = judge
        self.settings = settings
        self.problems = problems

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs: Any) -> vf.Messages:
        problem = self.problems[state["info"]["problem_id"]]
        entry, result = await _judged(state, self.judge, problem, messages)
        if entry["accepted"]:
            done = [{"role": "user", "content": f"Accepted: {entry['reason']}"}]
            state["final_env_response"] = done       # ends the rollout (MultiTurnEnv's stop condition)
            return done
        return [feedback_message(problem, self.settings, result)]
