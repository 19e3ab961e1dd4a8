"""The Python API: judge one solution, or keep a Judge open to judge many on one device."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from kerneljudge.judging import environment
from kerneljudge.judging.evaluate import evaluate
from kerneljudge.judging.device.slots import make_slots
from kerneljudge.core.problem import Problem, read_problem
from kerneljudge.core.types import JudgeOptions, Verdict


class Judge:
    """A judging session on one device: keeps the trusted reference process alive between solutions.

        with Judge(device="cpu") as j:
            verdict = j.judge("problem.py", "solution.py")
    """

    def __init__(self, options: JudgeOptions | None = None, *, warm_start: bool = True, **overrides: Any):
        """`warm_start=False` starts each solution's process cold instead of forking it from a warm template
        (docs/judging.md, "Warm start"): the right choice for a single judgement, which judge() makes."""
        self.options = dataclasses.replace(options or JudgeOptions(), **overrides)
        self.device = environment.resolve_device(self.options.device)
        self.slot = make_slots(self.device, self.options, 1, warm=warm_start)[0]
        self.slot.reference.start()  # its start (torch, the device) overlaps reading and checking the first solution

    def judge(self, problem: str | Path | Problem, solution: str | Path) -> Verdict:
        prob = problem if isinstance(problem, Problem) else read_problem(problem)
        return evaluate(prob, str(solution), self.options, self.slot, self.device)

    def close(self) -> None:
        self.slot.reference.close()

    def __enter__(self) -> "Judge":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def judge(problem: str | Path | Problem, solution: str | Path, options: JudgeOptions | None = None,
          **overrides: Any) -> Verdict:
    """Judge one solution against one problem and return its Verdict.

    Keyword overrides are JudgeOptions fields, e.g. judge(p, s, device="cpu", policy="lenient").
    Raises ProblemError for an unusable problem file and OSError for an unreadable solution file;
    anything the solution does (crash, hang, wrong answer, cheating) becomes the verdict.
    """
    with Judge(options, warm_start=False, **overrides) as session:
        return session.judge(problem, solution)
