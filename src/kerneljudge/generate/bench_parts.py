"""Pieces of `kerneljudge bench` (bench.py): its error, problem selection, the judge's worker threads,
the prompt's hardware block, and the progress line of an item."""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping

from kerneljudge.core.problem import Problem


class BenchError(RuntimeError):
    """The run cannot start or cannot go on. kind: "usage" (bad settings, settings that differ from the
    run folder's, a provider that cannot be built), "input" (no usable problems), "provider" (the model's
    server refused a request in a way that no retry fixes: bad key, unknown model)."""

    def __init__(self, message: str, kind: str = "usage"):
        super().__init__(message)
        self.kind = kind


# ------------------------------------------------------------------------------------------- problems


def select_problems(source: str, level: int | None = None, ids: list[str] | None = None,
                    limit: int | None = None) -> list[Problem]:
    """The problems of a run: the bundled suite ("suite") or a folder, filtered by level, ids and limit."""
    if source == "suite":
        from kerneljudge.suite.catalog import list_problems

        problems = list_problems(level)
    else:
        from kerneljudge.core.mapping import find_problems

        problems = find_problems(source)
        if level is not None:
            problems = [p for p in problems if p.level == level]
    if ids:
        wanted = [i.strip() for i in ids if i.strip()]
        chosen = [p for p in problems if p.id in wanted or Path(p.path).stem in wanted or p.name in wanted]
        known = {p.id for p in chosen} | {Path(p.path).stem for p in chosen} | {p.name for p in chosen}
        unknown = [i for i in wanted if i not in known]
        if unknown:
            raise BenchError(f"no problem with id {', '.join(unknown)} in {source}"
                             + (f" (level {level})" if level is not None else ""), "input")
        problems = chosen
    if limit is not None:
        problems = problems[:max(0, limit)]
    if not problems:
        raise BenchError(f"no problems selected from {source}", "input")
    return problems


def stems_for(problems: list[Problem]) -> dict[str, str]:
    """problem id -> the file-name stem of its items (the problem file's stem unless two problems share it)."""
    stems = [Path(p.path).stem for p in problems]
    return {p.id: s if stems.count(s) == 1 else p.id.replace("/", "_") for p, s in zip(problems, stems)}


# ---------------------------------------------------------------------------------------------- judge


class JudgeWorkers:
    """Daemon threads running blocking Judge.judge calls for an asyncio loop (so Ctrl-C is never stuck
    behind a solution that is still running: the process may exit while a thread is busy)."""

    def __init__(self, judge: Any, count: int):
        self.judge = judge
        self.jobs: queue.Queue = queue.Queue()
        self.threads = [threading.Thread(target=self._work, name=f"bench-judge-{i}", daemon=True)
                        for i in range(max(1, count))]
        for t in self.threads:
            t.start()

    def _work(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            loop, future, problem, path = job
            if future.cancelled():
                continue
            try:
                outcome: tuple[bool, Any] = (True, self.judge.judge(problem, path).to_dict())
            except BaseException as exc:  # reported to the waiting trajectory, never fatal here
                outcome = (False, exc)
            try:
                loop.call_soon_threadsafe(_resolve, future, outcome)
            except RuntimeError:   # the loop is closed: the run was interrupted, the result is dropped
                pass

    async def judge_one(self, problem: Problem, path: Path) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.jobs.put((loop, future, problem, str(path)))
        return await future

    def stop(self) -> None:
        """Let every thread end once it is idle (jobs of cancelled trajectories are skipped)."""
        for _ in self.threads:
            self.jobs.put(None)

    def join(self, wait_s: float) -> None:
        deadline = time.monotonic() + wait_s
        for t in self.threads:
            t.join(max(0.0, deadline - time.monotonic()))


def _resolve(future: asyncio.Future, outcome: tuple[bool, Any]) -> None:
    if future.done():
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


def hardware_block(choice: str, device: str, backend: str, device_name: Callable[[], str]) -> dict[str, Any] | None:
    """The prompt's hardware block: none for C++ or --hardware none; H200 facts for --hardware h200, or for
    auto when the judge's device is an H200 (its name as the judge's reference process reports it, so
    this process never opens a CUDA context of its own)."""
    if choice == "none" or backend == "cpp" or (choice == "auto" and device != "cuda"):
        return None
    from kerneljudge.judging.roofline import H200
    from kerneljudge.generate.hardware import H200_EXTRA, hardware_from_spec

    if choice == "h200" or "H200" in device_name().upper():
        return hardware_from_spec(H200, **H200_EXTRA)
    return None


def describe(row: Mapping[str, Any]) -> str:
    text = str(row.get("verdict"))
    if row.get("verdict") == "correct":
        speed = row.get("speedup")
        text += f" {speed:.2f}x" if isinstance(speed, (int, float)) else ""
        text += " accepted" if row.get("accepted") else f" not accepted ({', '.join(row.get('flags') or [])})"
    elif row.get("verdict") == "no_code":
        text += f" - {row.get('extraction_note', '')[:100]}"
    elif row.get("verdict") == "unjudgeable":
        text += f" ({(row.get('problem_outcome') or {}).get('kind')}) - {str(row.get('reason', ''))[:100]}"
    else:
        text += f" - {str(row.get('reason', ''))[:100]}"
    return text


__all__ = ["BenchError", "select_problems", "stems_for", "JudgeWorkers", "hardware_block", "describe"]
