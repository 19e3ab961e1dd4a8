"""A reward for RL on kernels: model completions in, one float (or None) per completion out, from the judge's verdict.

    from kerneljudge.service.reward import KernelReward
    reward = KernelReward(url="http://127.0.0.1:8000")        # a `kerneljudge serve`; or device="cpu" in-process
    scores = reward(prompts=prompts, completions=completions, problem_id=problem_ids)   # TRL's call
    results = reward.score(completions, problem_ids)            # RewardResult(reward, verdict, extraction)

The call signature is the one TRL's GRPOTrainer (and RLOOTrainer) uses for reward functions:
f(prompts=..., completions=..., completion_ids=..., **dataset_columns, trainer_state=...) -> list[float | None];
the problem of each row comes from a dataset column (`problem_column`, default "problem_id"), holding suite
ids (level1/21_relu) or, in-process, paths to problem files. A completion is the raw reply: a string, or a
conversation (a list of {"role", "content"} messages, the last assistant message is used). The code is
taken out of it as `kerneljudge bench` does (generate/extract.py).

Shaping (RewardShaping; every number configurable, see docs/service.md):
    no code in the reply, build error, crash, timeout          no_code / unusable      (0.0)
    ran but wrong output                                        compiled                (0.1)
    rejected (a cheat or a policy breach), or correct with a    rejected               (0.0, never above
      blocking flag (not accepted)                                                      `compiled`)
    accepted                                                    correct + speedup_weight * clamp(log2(speedup),
                                                                log2_min, log2_max)    (1.0 + 0.25 * [-1, 3])
    unjudgeable (the problem's reference could not judge)       None
A rejected or not-accepted solution never gets more than a wrong one: RewardShaping refuses such settings.

None is TRL's word for "this reward function does not apply to this sample": an unjudgeable verdict says
nothing about the completion (the problem decided it: a degenerate reference output, or a reference that
failed to run), so no number would be honest. TRL's GRPOTrainer turns None into NaN and sums reward
functions with nansum: with this as the only reward function such a sample adds 0.0 (and TRL warns), and
since every completion of a GRPO group shares its problem, the group's advantages are all zero. Callers
that do their own arithmetic must skip None (see scripts/reward_example.py).
"""

from __future__ import annotations

import hashlib
import math
import shutil
import tempfile
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from kerneljudge.generate.extract import extract_solution


@dataclass(frozen=True)
class RewardShaping:
    no_code: float = 0.0          # no solution in the reply
    unusable: float = 0.0         # build_error, runtime_error or timeout before the solution ran to an output
    compiled: float = 0.1         # it built and ran, but its output was wrong
    rejected: float = 0.0         # rejected, or correct but not accepted (a blocking flag): at most `compiled`
    correct: float = 1.0          # accepted (correct, no blocking flag)
    speedup_weight: float = 0.25  # times log2(speedup), for accepted solutions with a measured speedup
    log2_min: float = -1.0        # the log2 speedup is clamped to [log2_min, log2_max]
    log2_max: float = 3.0

    def __post_init__(self) -> None:
        if self.rejected > self.compiled:
            raise ValueError("rejected must not exceed compiled: a cheat must never earn more than a wrong answer")
        if self.log2_min > self.log2_max:
            raise ValueError("log2_min must not exceed log2_max")
        if self.correct + self.speedup_weight * self.log2_min < self.compiled:
            raise ValueError("an accepted solution must earn at least what a wrong one does: raise correct or "
                             "lower speedup_weight / raise log2_min")

    def reward(self, verdict: dict[str, Any] | None) -> float | None:
        """The reward for one verdict (None: no code was found in the reply); None for an unjudgeable verdict."""
        if verdict is None:
            return self.no_code
        kind = verdict.get("verdict")
        if kind == "unjudgeable":      # the problem could not judge: no reward applies (module docstring)
            return None
        if verdict.get("accepted") and kind == "correct":
            speedup = verdict.get("speedup")
            bonus = 0.0
            if isinstance(speedup, (int, float)) and speedup > 0 and math.isfinite(speedup):
                bonus = self.speedup_weight * min(self.log2_max, max(self.log2_min, math.log2(speedup)))
            return self.correct + bonus
        if kind in ("rejected", "correct"):      # correct here means correct but not accepted
            return self.rejected
        if kind == "wrong_output":
            return self.compiled
        return self.unusable


@dataclass
class RewardResult:
    reward: float | None                    # None for an unjudgeable verdict (the module docstring says why)
    verdict: dict[str, Any] | None          # None when no code was extracted
    extraction: dict[str, Any] = field(default_factory=dict)   # {"code", "outcome", "note"} (code left out)


class KernelReward:
    """A reward function judged by a `kerneljudge serve` (url=...) or in this process (device=...).

    In-process judging uses a JudgePool (judging/executors/local.py): the solutions still run in disposable child
    processes. Identical (problem, code) pairs are judged once (a bounded cache here, and the service's own).
    """

    __name__ = "kerneljudge_reward"     # trainers name reward functions by __name__ in their logs

    def __init__(self, url: str | None = None, token: str | None = None, device: str | None = None,
                 options: dict[str, Any] | None = None, shaping: RewardShaping | None = None,
                 backend: str | None = None, problem_column: str = "problem_id", workers: int | None = None,
                 timeout_s: float | None = None, cache_size: int = 4096):
        if (url is None) == (device is None):
            raise ValueError("give url= (a kerneljudge service) or device= (judge in this process), not both")
        self.shaping = shaping or RewardShaping()
        self.backend = backend
        self.problem_column = problem_column
        self.timeout_s = timeout_s
        self.options = dict(options or {})
        self.last_results: list[RewardResult] = []
        self._cache: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._client = None
        self._pool = None
        if url is not None:
            from kerneljudge.service.client import JudgeClient

            self._client = JudgeClient(url, token=token)
        else:
            import dataclasses

            from kerneljudge.judging.executors.local import JudgePool
            from kerneljudge.core.types import JudgeOptions

            self._judge_options = dataclasses.replace(JudgeOptions(), device=device, **self.options)
            self._pool = JudgePool(self._judge_options, workers=workers)

    # -- the trainer's call

    def __call__(self, prompts: Sequence[Any] | None = None, completions: Sequence[Any] | None = None,
                 **kwargs: Any) -> list[float | None]:
        if completions is None:
            raise TypeError("completions is required")
        problems = kwargs.get(self.problem_column)
        if problems is None:
            raise TypeError(f"no {self.problem_column!r} column: pass the problem id of every completion as "
                            f"{self.problem_column}=[...] (a dataset column), or set problem_column")
        results = self.score(completions, problems)
        return [r.reward for r in results]

    def score(self, completions: Sequence[Any], problem_ids: Sequence[str]) -> list[RewardResult]:
        """One RewardResult per completion, in order."""
        if len(completions) != len(problem_ids):
            raise ValueError(f"{len(completions)} completions but {len(problem_ids)} problem ids")
        extractions = [extract_solution(reply_text(c), self.backend) for c in completions]
        verdicts = self._judge([(str(p), e.code) for p, e in zip(problem_ids, extractions) if e.code is not None])
        results = []
        found = iter(verdicts)
        for e in extractions:
            verdict = next(found) if e.code is not None else None
            results.append(RewardResult(self.shaping.reward(verdict), verdict,
                                        {"outcome": e.outcome, "note": e.note}))
        self.last_results = results
        return results

    # -- judging

    def _judge(self, pairs: list[tuple[str, str]]) -> list[dict[str, Any]]:
        keys = [(p, hashlib.sha256(code.encode()).hexdigest()) for p, code in pairs]
        todo: dict[tuple[str, str], str] = {}
        with self._lock:
            for key, (_, code) in zip(keys, pairs):
                if key not in self._cache:
                    todo[key] = code
        if todo:
            fresh = self._judge_remote(todo) if self._client is not None else self._judge_local(todo)
            with self._lock:
                for key, verdict in fresh.items():
                    if "judge_error" not in (verdict.get("flags") or []):   # a judge failure is retried later
                        self._cache[key] = verdict
                        self._cache.move_to_end(key)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        else:
            fresh = {}
        with self._lock:
            return [fresh.get(key) or self._cache[key] for key in keys]

    def _judge_remote(self, todo: dict[tuple[str, str], str]) -> dict[tuple[str, str], dict[str, Any]]:
        from kerneljudge.service.client import job_object

        from kerneljudge.service.intake import suite_problem

        keys = list(todo)

        def job(key: tuple[str, str]) -> dict[str, Any]:
            problem = key[0]
            if suite_problem(problem) is None and Path(problem).is_file():   # a problem file here: sent as text
                return job_object(todo[key], problem_text=Path(problem).read_text(), options=self.options or None)
            return job_object(todo[key], problem=problem, options=self.options or None)

        ids = self._client.submit_many(job(k) for k in keys)
        with ThreadPoolExecutor(max_workers=min(16, len(ids))) as waiters:
            verdicts = list(waiters.map(lambda i: self._client.wait(i, self.timeout_s), ids))
        return dict(zip(keys, verdicts))

    def _judge_local(self, todo: dict[tuple[str, str], str]) -> dict[tuple[str, str], dict[str, Any]]:
        from kerneljudge.core.problem import read_problem
        from kerneljudge.service.intake import suite_problem

        private = Path(tempfile.mkdtemp(prefix="kj-reward-"))   # solutions never learn where they came from
        try:
            futures: dict[tuple[str, str], Future] = {}
            for n, (key, code) in enumerate(todo.items()):
                path = suite_problem(key[0]) or Path(key[0])
                if not path.is_file():
                    raise ValueError(f"no suite problem or problem file {key[0]!r}")
                solution = private / f"solution_{n}.py"
                solution.write_text(code)
                futures[key] = self._pool.submit(read_problem(path), solution, self._judge_options)
            return {key: f.result(timeout=self.timeout_s).to_dict() for key, f in futures.items()}
        finally:
            shutil.rmtree(private, ignore_errors=True)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()

    def __enter__(self) -> "KernelReward":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def reply_text(completion: Any) -> str:
    """The text of a completion: a string, or the last assistant message of a conversation."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return str(completion.get("content") or "")
    if isinstance(completion, (list, tuple)):
        messages = [m for m in completion if isinstance(m, dict)]
        assistant = [m for m in messages if m.get("role") in (None, "assistant")]
        chosen = (assistant or messages)[-1:]
        return str(chosen[0].get("content") or "") if chosen else ""
    return "" if completion is None else str(completion)


__all__ = ["KernelReward", "RewardShaping", "RewardResult", "reply_text"]
