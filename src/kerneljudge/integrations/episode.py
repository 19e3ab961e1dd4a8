"""What every RL integration does the same way: the prompt, the judge, the feedback and the reward.

The prompts are bench's own (generate/messages.py): the first one asks for a solution of the problem, and a
refinement carries the previous solution and the judge's report on it, as `kerneljudge bench --turns`
sends it. Judging goes through KernelReward (service/reward.py): a running `kerneljudge serve` (url) or a
JudgePool in this process whose solutions each run in a disposable child process; never in the caller's
own process.

The RL reward (RL_SHAPING, docs/rl.md) pays nothing for anything that is not accepted: no code, a build
error, a crash, a timeout, a wrong output, a rejection (a hack or a policy breach) and a correct solution
with a blocking flag all earn 0.0. An accepted solution earns 1 + 0.25 * clamp(log2(speedup), -1, 3),
0.75 to 1.75 (1.0 when it was not timed). An unjudgeable verdict (the problem's reference cannot tell right
from wrong) has no reward: None, which the integrations report as 0.0 with the verdict kept for logging.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kerneljudge.generate.feedback import feedback_from_verdict, feedback_no_code
from kerneljudge.generate.messages import build_messages, build_refinement_messages
from kerneljudge.generate.scrub import held_out_shapes
from kerneljudge.integrations.problems import ProblemRef
from kerneljudge.service.reward import KernelReward, RewardResult, RewardShaping

RL_SHAPING = RewardShaping(compiled=0.0, rejected=0.0)


@dataclass(frozen=True)
class JudgeSettings:
    backend: str = "cuda"                 # the backend the prompt asks for (and extraction prefers)
    policy: str = "strict"
    numerics: str = "tf32"
    precision: str = "fp32"
    service_url: str | None = None        # a running `kerneljudge serve`; None: judge here, in child processes
    token: str | None = None              # the service's token, when it has one
    device: str = "auto"                  # the local judge's device (ignored with service_url)
    options: dict[str, Any] = field(default_factory=dict)   # more JudgeOptions fields (trials, timing, ...)
    shaping: RewardShaping = RL_SHAPING

    def judge_options(self) -> dict[str, Any]:
        return {"policy": self.policy, "numerics": self.numerics, "precision": self.precision, **self.options}


def open_judge(settings: JudgeSettings) -> KernelReward:
    """The KernelReward that judges for an environment: through the service, or a local judging pool."""
    common = dict(options=settings.judge_options(), shaping=settings.shaping, backend=settings.backend)
    if settings.service_url:
        return KernelReward(url=settings.service_url, token=settings.token, **common)
    return KernelReward(device=settings.device, **common)


def first_messages(problem: ProblemRef, settings: JudgeSettings) -> list[dict[str, str]]:
    """[system, user]: bench's zero-shot prompt for the problem."""
    return build_messages(problem.text, settings.backend, 0, None, precision=settings.precision)


def feedback_message(problem: ProblemRef, settings: JudgeSettings, result: RewardResult) -> dict[str, str]:
    """The user message after a judged reply that was not accepted: bench's refinement prompt (the previous
    solution and the judge's report), held-out shapes kept out."""
    if result.verdict is None:
        feedback, code = feedback_no_code(result.extraction.get("note") or ""), ""
    else:
        feedback = feedback_from_verdict(result.verdict, result.verdict.get("profile") or [],
                                         hidden_shapes=held_out_shapes(problem.text))
        code = result.extraction.get("code") or ""
    messages = build_refinement_messages(problem.text, settings.backend, code, feedback, None,
                                         precision=settings.precision)
    return messages[-1]


def judge_reply(judge: KernelReward, problem: ProblemRef, reply: Any) -> RewardResult:
    """One reply (a string or a conversation) judged against one problem; the extracted code is kept in
    `extraction["code"]` so the refinement prompt can show it back."""
    from kerneljudge.generate.extract import extract_solution
    from kerneljudge.service.reward import reply_text

    (result,) = judge.score([reply], [problem.id])
    code = extract_solution(reply_text(reply), judge.backend).code
    result.extraction = {**result.extraction, "code": code}
    return result


def summary(result: RewardResult) -> dict[str, Any]:
    """What a rollout keeps for logging: the verdict's headline fields and the reward (None -> 0.0)."""
    verdict = result.verdict or {"verdict": "no_code", "accepted": False,
                                 "reason": f"no solution in the reply: {result.extraction.get('note')}"}
    return {"verdict": verdict.get("verdict"), "accepted": bool(verdict.get("accepted")),
            "reason": verdict.get("reason"), "speedup": verdict.get("speedup"),
            "flags": list(verdict.get("flags") or []), "reward": reward_value(result)}


def reward_value(result: RewardResult) -> float:
    """The reward as a number: an unjudgeable verdict's None counts 0.0 (nothing to learn from it)."""
    return 0.0 if result.reward is None else float(result.reward)
