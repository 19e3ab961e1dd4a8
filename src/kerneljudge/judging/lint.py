"""Suite lint, parent side: is each problem a usable judging target?

Problem code never runs here: a `kerneljudge.worker.lint` child process runs it on the CPU (one
thread) and answers on a private channel. `lint_many` keeps one worker for many problems and starts a
fresh one after a crash or a timeout; a crash or a timeout is itself a finding (degenerate, with a reason).

A result is a dict:
    {"problem": id, "path": ..., "preset": "small", "degenerate": bool, "reasons": [...],
     "checks": {name: bool}, "skipped": [...], "seconds": float}
plus "info" (input/output shapes, fp16/bf16 distance from fp32, a traceback) and "notes" when there is
something to say. The checks (see worker/lint.py): runs, output_acceptable, init_deterministic,
deterministic, finite_fp32, inputs_unchanged, depends_on_inputs, depends_on_each_input, depends_on_init,
not_passthrough, zero_output_fails, constant_output_fails, finite_fp16, finite_bf16. A check that does not
apply (no parameters, a single input) is left out of "checks" and named in "skipped".
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO

from kerneljudge.core.paths import default_cache_dir
from kerneljudge.judging import environment
from kerneljudge.judging.child import Child
from kerneljudge.core.problem import Problem, ProblemError, read_problem

WORKER_MODULE = "kerneljudge.worker.lint"
START_TIMEOUT_S = 120.0   # importing torch in a cold child can take a while on a loaded machine


class WorkerFailure(RuntimeError):
    """The worker crashed, hung or broke the protocol; the message says how."""


class LintWorker:
    """One long-lived lint worker process, restarted on demand after a failure."""

    def __init__(self, cache_dir: str | None = None, threads: int = 1):
        self.cache_dir = cache_dir or default_cache_dir()
        self.threads = threads
        self._child: Child | None = None
        self.starts = 0

    def _ensure(self) -> Child:
        if self._child is not None and self._child.proc.poll() is None:
            return self._child
        self._discard()
        self._child = Child(WORKER_MODULE, environment.child_env("cpu", self.threads, self.cache_dir))
        self.starts += 1
        self._exchange({"cmd": "ping"}, START_TIMEOUT_S, "starting")
        return self._child

    def request(self, header: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        self._ensure()
        return self._exchange({**header, "threads": self.threads}, timeout_s, "working")

    def _exchange(self, header: dict[str, Any], timeout_s: float, doing: str) -> dict[str, Any]:
        from kerneljudge.core import channel

        child = self._child
        assert child is not None
        try:
            child.send(header)
            reply, _ = child.recv(timeout_s, max_payload=0)
            return reply
        except channel.ChannelTimeout:
            self._discard()
            raise WorkerFailure(f"timed out after {timeout_s:g} s while {doing}") from None
        except (channel.ChannelClosed, channel.ProtocolError, OSError) as exc:
            how = child.exit_description()
            excerpt = child.output.text(1500).strip()
            self._discard()
            detail = f": {excerpt[-600:]}" if excerpt else ""
            raise WorkerFailure(f"lint worker died while {doing} ({how}; {type(exc).__name__}){detail}") from None

    def _discard(self) -> None:
        if self._child is not None:
            self._child.kill()
            self._child = None

    def close(self) -> None:
        if self._child is not None:
            self._child.close()
            self._child = None

    def __enter__(self) -> "LintWorker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _as_problem(item: str | Path | Problem) -> Problem:
    return item if isinstance(item, Problem) else read_problem(item)


def _preset_overrides(problem: Problem, preset: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(preset, dict):
        return dict(preset)
    if preset not in ("small", "default"):
        raise ValueError(f"unknown preset {preset!r} (small or default)")
    return problem.preset(preset)


def _preset_name(preset: str | dict[str, Any]) -> str:
    return preset if isinstance(preset, str) else "custom"


def lint_with(worker: LintWorker, problem: Problem, preset: str | dict[str, Any] = "small",
              timeout_s: float = 60.0) -> dict[str, Any]:
    """Lint one problem on a given worker; a crash or a timeout becomes a degenerate result."""
    base = {"problem": problem.id, "path": problem.path, "preset": _preset_name(preset)}
    started = time.monotonic()
    try:
        reply = worker.request({"cmd": "lint", "problem_path": problem.path,
                                "preset": _preset_overrides(problem, preset)}, timeout_s)
    except WorkerFailure as exc:
        return {**base, "degenerate": True, "reasons": [f"worker: {exc}"], "checks": {}, "skipped": [],
                "seconds": round(time.monotonic() - started, 3)}
    if reply.get("status") != "ok":
        return {**base, "degenerate": True, "reasons": [f"worker: {reply.get('message', 'error')}"],
                "checks": {}, "skipped": [], "seconds": round(time.monotonic() - started, 3)}
    result = {**base, "degenerate": bool(reply.get("degenerate")), "reasons": list(reply.get("reasons", [])),
              "checks": dict(reply.get("checks", {})), "skipped": list(reply.get("skipped", [])),
              "seconds": float(reply.get("seconds", time.monotonic() - started))}
    if reply.get("info"):
        result["info"] = reply["info"]
    if preset == "small" and not problem.metadata.get("SMALL"):
        result["notes"] = ["the problem has no SMALL preset: linted at its default sizes"]
    return result


def lint_problem(path: str | Path | Problem, preset: str | dict[str, Any] = "small", timeout_s: float = 60.0,
                 cache_dir: str | None = None) -> dict[str, Any]:
    """Lint one problem file in a fresh worker. Raises ProblemError when the file is unreadable."""
    problem = _as_problem(path)
    with LintWorker(cache_dir) as worker:
        return lint_with(worker, problem, preset, timeout_s)


def lint_many(paths: Iterable[str | Path | Problem], preset: str | dict[str, Any] = "small",
              timeout_s: float = 60.0, cache_dir: str | None = None, progress: bool | TextIO = True,
              on_result: Callable[[dict[str, Any]], None] | None = None,
              worker: LintWorker | None = None) -> list[dict[str, Any]]:
    """Lint many problems with ONE worker process (a fresh one only after a crash or a timeout).

    Progress lines go to stderr (or the given stream; progress=False for none). An unreadable problem file
    is a degenerate result, so one bad file does not stop a suite run. Pass `worker` to use (and keep) a
    worker of your own; otherwise one is started and closed here.
    """
    items = list(paths)
    stream = sys.stderr if progress is True else (progress or None)
    results = []
    own = worker is None
    worker = worker if worker is not None else LintWorker(cache_dir)
    restarts_before = worker.starts
    try:
        for n, item in enumerate(items, 1):
            try:
                problem = _as_problem(item)
            except ProblemError as exc:
                result = {"problem": str(item), "path": str(item), "preset": _preset_name(preset),
                          "degenerate": True, "reasons": [f"unreadable: {exc}"], "checks": {}, "skipped": [],
                          "seconds": 0.0}
            else:
                result = lint_with(worker, problem, preset, timeout_s)
            results.append(result)
            if on_result is not None:
                on_result(result)
            if stream is not None:
                status = "ok" if not result["degenerate"] else "DEGENERATE: " + "; ".join(result["reasons"])[:300]
                print(f"[{n}/{len(items)}] {result['problem']} {result['seconds']:.2f}s {status}", file=stream,
                      flush=True)
        restarts = worker.starts - max(restarts_before, 1)
        if stream is not None and restarts > 0:
            print(f"(the lint worker was restarted {restarts} time(s))", file=stream, flush=True)
    finally:
        if own:
            worker.close()
    return results


def slowest(results: list[dict[str, Any]], n: int = 10) -> list[tuple[str, float]]:
    return [(r["problem"], r["seconds"]) for r in sorted(results, key=lambda r: -r["seconds"])[:n]]
