"""Where judging runs: this machine's devices ("local", judging/executors/local.py) or a Ray cluster ("ray",
judging/executors/ray.py). Both take jobs as submit(problem, solution_path, options) -> Future[Verdict]."""

from __future__ import annotations

import argparse
from typing import Any, Callable, Protocol, Sequence

from kerneljudge.core.problem import Problem
from kerneljudge.core.types import JudgeOptions

EXECUTORS = ("local", "ray")


class Executor(Protocol):
    device: str

    def submit(self, problem: Problem, solution_path: Any, options: JudgeOptions | None = None,
               on_start: Callable[[], None] | None = None, plan: Any = None) -> Any: ...

    def warm(self, options: JudgeOptions | None = None) -> None: ...

    def status(self) -> dict[str, Any]: ...

    def device_name(self, options: JudgeOptions | None = None) -> str: ...

    def close(self, wait_s: float = 5.0) -> None: ...


def open_executor(kind: str, options: JudgeOptions, workers: int | None = None, address: str | None = None,
                  gpus: Sequence[str] | None = None, build_env: dict[str, str] | None = None) -> Executor:
    """A started executor of this kind; the caller closes it."""
    if kind == "local":
        if address:
            raise ValueError("--address is for --executor ray")
        from kerneljudge.judging.executors.local import JudgePool

        return JudgePool(options, workers=workers, gpus=gpus, build_env=build_env)
    if kind == "ray":
        from kerneljudge.judging.executors.ray import RayPool

        return RayPool(options, address=address, workers=workers, build_env=build_env)
    raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}; got {kind!r}")


def add_executor_arguments(p: argparse.ArgumentParser) -> None:
    """--executor and --address, for commands that judge many solutions (run, examples, bench, serve)."""
    p.add_argument("--executor", choices=EXECUTORS, default="local",
                   help="local: this machine's GPUs (or CPU), one solution per device at a time; ray: one judging "
                        "actor per GPU of a Ray cluster (pip install 'kerneljudge[ray]')")
    p.add_argument("--address", default=None,
                   help="with --executor ray: the cluster to join (e.g. ray://head:10001 or auto); "
                        "default: start a local Ray instance")


class ExecutorSession:
    """An Executor behind the blocking judge(problem, path) -> Verdict of api.Judge, for code written
    against a Judge session (bench's judge worker threads): their calls then overlap on every device."""

    def __init__(self, executor: Executor, options: JudgeOptions):
        self.executor = executor
        self.options = options
        self.device = executor.device

    def judge(self, problem: Problem, solution: Any) -> Any:
        return self.executor.submit(problem, solution, self.options).result()

    def device_name(self) -> str:
        """The judged device's name as a trusted reference process reports it ("NVIDIA H200"), without a CUDA
        context in this process."""
        return str(self.executor.device_name(self.options))

    def close(self) -> None:
        self.executor.close()
