"""KernelReward for TRL's GRPOTrainer (trl 1.16; `pip install 'kerneljudge[trl]'`), and a dataset to train on.

    from kerneljudge.integrations.trl_reward import AsyncKernelReward, prompt_dataset
    reward = KernelReward(device="cuda", shaping=RL_SHAPING, backend="cuda")     # or url=... (a serve)
    trainer = GRPOTrainer(model=NAME, reward_funcs=[reward], train_dataset=prompt_dataset("level1", "cuda"))

KernelReward already has TRL's reward-function signature: TRL calls it with prompts=, completions=,
completion_ids=, every other dataset column as a keyword list (problem_id among them), trainer_state=,
log_extra= and log_metric=, and names it by __name__ (kerneljudge_reward). It blocks while it judges; TRL runs
an async reward function on its own event loop beside the others, so AsyncKernelReward(reward) is the same
reward as a coroutine (judged in a worker thread) for trainers with several reward functions.
"""

from __future__ import annotations

import asyncio
from typing import Any, Sequence

from kerneljudge.integrations.episode import JudgeSettings, first_messages
from kerneljudge.integrations.problems import resolve_problems
from kerneljudge.service.reward import KernelReward


class AsyncKernelReward:
    """A KernelReward whose call is a coroutine (trl's is_async_callable sees the async __call__)."""

    def __init__(self, reward: KernelReward):
        self.reward = reward
        self.__name__ = reward.__name__

    async def __call__(self, prompts: Sequence[Any] | None = None, completions: Sequence[Any] | None = None,
                       **kwargs: Any) -> list[float | None]:
        return await asyncio.to_thread(self.reward, prompts=prompts, completions=completions, **kwargs)


def prompt_dataset(problems: str | Sequence[str], backend: str, precision: str = "fp32", repeat: int = 1) -> Any:
    """A datasets.Dataset with TRL's conversational "prompt" column (bench's prompt) and the "problem_id"
    column KernelReward reads, one row per problem (times `repeat`)."""
    from datasets import Dataset

    settings = JudgeSettings(backend=backend, precision=precision)
    rows = [{"prompt": first_messages(p, settings), "problem_id": p.id} for p in resolve_problems(problems)]
    return Dataset.from_list(rows * repeat)
