"""The memory-pressure subset of the upstream sweep (`upstream_sweep.py --hard N`): the N problems whose
judgements the judge expects to need the most device memory.

The estimates come from scripts/problem_memory.py, run as a child process (torch and the problems' code never
enter the sweep's process), and are kept in CACHE_DIR/upstream_sweep/memory_estimates.json by problem hash and
precision, so a second sweep asks the child only about problems it has not seen (failures are not kept). A child
that dies on a problem costs that problem only (an error is recorded for it, and a new child goes on with the
rest). A problem whose estimate failed ranks last: it is never chosen for its size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

ESTIMATOR = Path(__file__).resolve().parent / "problem_memory.py"
CACHE_NAME = "upstream_sweep/memory_estimates.json"
CHILD_TIMEOUT_S = 900.0    # every problem of levels 1-3 takes a few seconds in all; this only stops a hang


def _key(sha256: str, precision: str) -> str:
    return f"{sha256}/{precision}"


def read_cache(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_cache(path: Path, cache: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def run_estimator(paths: list[str], precision: str, timeout_s: float = CHILD_TIMEOUT_S) -> dict[str, dict[str, Any]]:
    """path -> the child's answer for it; restarts the child after the problem it died (or hung) on."""
    answers: dict[str, dict[str, Any]] = {}
    left = list(paths)
    while left:
        command = [sys.executable, str(ESTIMATOR), "--precision", precision, *left]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
            out, why = done.stdout, f"the estimating process exited with status {done.returncode}"
            tail = done.stderr.strip().splitlines()[-1:] if done.stderr.strip() else []
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            why, tail = f"the estimating process took over {timeout_s:.0f} s", []
        for line in out.splitlines():
            try:
                answer = json.loads(line)
            except ValueError:
                continue
            if isinstance(answer, dict) and answer.get("path") in left:
                answers[answer["path"]] = answer
        left = [p for p in left if p not in answers]
        if left:   # it stopped on the first one it did not answer
            answers[left[0]] = {"path": left[0], "error": why + (f" ({tail[0][:200]})" if tail else "")}
            left = left[1:]
    return answers


def estimates(problems: list[Any], precision: str, cache_dir: str,
              run: Callable[[list[str], str], dict[str, dict[str, Any]]] = run_estimator) -> dict[str, dict[str, Any]]:
    """problem id -> its estimate (need_bytes and the figures, or error), from the cache where it has one."""
    cache_path = Path(cache_dir) / CACHE_NAME
    cache = read_cache(cache_path)
    found = {p.id: cache[_key(p.sha256, precision)] for p in problems if _key(p.sha256, precision) in cache}
    unknown = [p for p in problems if p.id not in found]
    if unknown:
        answers = run([str(p.path) for p in unknown], precision)
        for p in unknown:
            answer = {k: v for k, v in (answers.get(str(p.path)) or {"error": "no answer"}).items() if k != "path"}
            found[p.id] = answer
            if "error" not in answer:   # a failure may be this machine's (a hang, a kill): asked again next time
                cache[_key(p.sha256, precision)] = answer
        write_cache(cache_path, cache)
    return found


def hardest(problems: list[Any], n: int, found: dict[str, dict[str, Any]]) -> list[Any]:
    """The n problems with the largest need_bytes (ties by id); failed estimates rank last."""
    def need(p: Any) -> int:
        value = found.get(p.id, {}).get("need_bytes")
        return value if isinstance(value, int) else -1
    return sorted(problems, key=lambda p: (-need(p), p.id))[:n]


def describe(chosen: list[Any], found: dict[str, dict[str, Any]]) -> list[str]:
    """One line per chosen problem: id, need and the figures it came from (GiB)."""
    def gib(x: Any) -> str:
        return f"{x / 2**30:.2f}" if isinstance(x, int) else "?"
    lines = []
    for p in chosen:
        e = found.get(p.id, {})
        if "error" in e:
            lines.append(f"  {p.id}: no estimate ({e['error']})")
            continue
        lines.append(f"  {p.id}: {gib(e.get('need_bytes'))} GiB (weights {gib(e.get('model_bytes'))}, inputs "
                     f"{gib(e.get('input_bytes'))}, largest activation {gib(e.get('activation_bytes'))} GiB)")
    return lines
