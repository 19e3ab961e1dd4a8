"""The run folder of `kerneljudge bench`: its layout, its append-only logs, and reading it back.

    RUN_DIR/
      config.json        the settings of the run (provider spec and options, never keys), the problems
      prompts/           <item>.json  the request as sent: {"messages": [...], "temperature", ...}
      replies/           <item>.md    the model's reply, verbatim
      solutions/         <item>.py    the solution extracted from the reply (absent for no_code)
      events.jsonl       the timeline: start, reply, verdict, stopped, error, interrupted, end
      verdicts.jsonl     one row per finished (problem, sample, turn): the verdict dict plus run fields
      summary.json       score.summary() of verdicts.jsonl, rewritten at the end of every bench run
      cache/             the provider's disk cache (generate/providers/cache.py): re-runs never re-query

<item> is ``<problem stem>__s<S>_t<T>`` with 0-based sample S and turn T (turn 0 is the first attempt,
turn t the attempt after t rounds of feedback), as results/trajectory_scores.py numbers them. A problem
stem shared by two problems (two levels) is replaced by the problem id with "/" turned into "_".

Both logs are appended one whole line at a time, flushed and fsynced; a torn last line (a crash
mid-write) is ignored when read and never glued to the next line.
"""

from __future__ import annotations

import json
import os
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

from kerneljudge.core import atomic_file
from kerneljudge.generate.providers.cache import write_json_atomic
from kerneljudge.core.jsonl import read_objects as read_jsonl

CONFIG = "config.json"
VERDICTS = "verdicts.jsonl"
EVENTS = "events.jsonl"
SUMMARY = "summary.json"
FORMAT = "kerneljudge.bench.v1"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def item_name(stem: str, sample: int, turn: int) -> str:
    return f"{stem}__s{sample}_t{turn}"


def item_key(row: Mapping[str, Any]) -> tuple[str, int, int]:
    """(problem_id, sample, turn) of a verdict row."""
    return str(row.get("problem_id") or row.get("problem") or "?"), int(row.get("sample") or 0), \
        int(row.get("turn") or 0)


def safe_url(url: str | None) -> str | None:
    """A base URL without user:password (a key can hide there) and without its query string."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def read_verdicts(path: str | os.PathLike) -> tuple[list[dict[str, Any]], int]:
    """(verdict rows, duplicates dropped) of a run folder or of a JSONL log given directly.

    A row repeated for the same (problem, sample, turn) is kept once (the first): a bench run never
    writes one twice, but logs concatenated by hand may. Rows of a plain `kerneljudge run` log (no
    sample/turn fields) are all kept.
    """
    p = Path(path)
    log = p / VERDICTS if p.is_dir() else p
    rows, seen, dropped = [], set(), 0
    for row in read_jsonl(log):
        if "verdict" not in row:
            continue
        if "sample" in row or "turn" in row:
            key = item_key(row)
            if key in seen:
                dropped += 1
                continue
            seen.add(key)
        rows.append(row)
    return rows, dropped


class RunFolder:
    """Paths and writers of one run folder (thread-safe appends)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self.prompts = self.root / "prompts"
        self.replies = self.root / "replies"
        self.solutions = self.root / "solutions"
        self.cache = self.root / "cache"
        self._lock = threading.Lock()

    def create(self) -> None:
        for d in (self.root, self.prompts, self.replies, self.solutions):
            d.mkdir(parents=True, exist_ok=True)
        for name in (VERDICTS, EVENTS):
            (self.root / name).touch()
            _end_with_newline(self.root / name)

    def lock(self):
        """Hold RUN_DIR/.lock (released by the kernel when this process ends), or None when another
        process holds it: two runs appending to one folder would judge the same items twice."""
        import fcntl

        handle = (self.root / ".lock").open("a")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return None
        return handle

    def rel(self, path: Path | None) -> str | None:
        return None if path is None else path.relative_to(self.root).as_posix()

    # -- config

    def read_config(self) -> dict[str, Any] | None:
        path = self.root / CONFIG
        if not path.exists():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def write_config(self, config: Mapping[str, Any]) -> None:
        write_json_atomic(self.root / CONFIG, dict(config))

    # -- logs

    def rows(self) -> list[dict[str, Any]]:
        return read_verdicts(self.root)[0]

    def append_row(self, row: Mapping[str, Any]) -> None:
        self._append(self.root / VERDICTS, row)

    def event(self, kind: str, **fields: Any) -> None:
        self._append(self.root / EVENTS, {"event": kind, "time": now(), **fields})

    def _append(self, path: Path, obj: Mapping[str, Any]) -> None:
        line = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            with path.open("a", encoding="utf-8") as f:
                f.write(line)
                f.flush()
                os.fsync(f.fileno())

    # -- item files

    def write_text(self, path: Path, text: str) -> None:
        """Whole-file write through a temporary name, so a reader never sees half a file."""
        atomic_file.write_text(path, text)

    def write_summary(self, summary: Mapping[str, Any]) -> None:
        write_json_atomic(self.root / SUMMARY, dict(summary))


def _end_with_newline(path: Path) -> None:
    """Terminate a torn last line so the next append starts a line of its own."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) != b"\n":
            f.write(b"\n")


def missing_trajectories(config: Mapping[str, Any] | None, rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, int]]:
    """(problem_id, sample) pairs the run's config asks for that have no verdict row at all."""
    if not config:
        return []
    problems = [p.get("id") for p in config.get("problems") or [] if isinstance(p, Mapping)]
    samples = int((config.get("generation") or {}).get("samples") or 1)
    have = {(str(r.get("problem_id")), int(r.get("sample") or 0)) for r in rows}
    return [(pid, s) for pid in problems for s in range(samples) if (pid, s) not in have]


def generation_totals(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Replies, tokens, cost and extraction outcomes over verdict rows (cost None when no row has a price)."""
    out: dict[str, Any] = {"replies": 0, "no_code": 0, "prompt_tokens": 0, "completion_tokens": 0,
                           "cost_usd": None, "replies_without_price": 0, "truncated": 0}
    for r in rows:
        if "extraction" not in r:
            continue
        out["replies"] += 1
        out["no_code"] += r.get("extraction") == "no_code"
        out["truncated"] += r.get("finish_reason") == "length"
        usage = r.get("usage") or {}
        out["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
        out["completion_tokens"] += int(usage.get("completion_tokens") or 0)
        cost = r.get("cost_usd")
        if isinstance(cost, (int, float)):
            out["cost_usd"] = (out["cost_usd"] or 0.0) + float(cost)
        else:
            out["replies_without_price"] += 1
    return out


__all__ = ["RunFolder", "read_verdicts", "read_jsonl", "item_name", "item_key", "safe_url", "missing_trajectories",
           "generation_totals", "FORMAT", "CONFIG", "VERDICTS", "EVENTS", "SUMMARY", "now"]
