"""The service's jobs: accepted, judged once, cached, journalled so that a restart loses nothing.

Guarantees:
- a job is answered 202 only once its texts are on disk and its record is in the journal (fsynced);
- a verdict is journalled (fsynced) before any client can see it;
- one judgement per (problem hash, solution hash, options, device): a repeated job gets the cached
  verdict, and one submitted while the same job is queued or running attaches to it;
- after a crash (even SIGKILL) a restart on the same journal answers every old id and judges every
  accepted job that has no verdict yet, once.

Journal folder (private to the service, mode 0700):
    journal.jsonl           {"event": "job", "key", "problem", "options", ...}   one per distinct job
                            {"event": "id", "id", "key"}                          one per accepted id
                            {"event": "verdict", "key", "verdict": {...}}         one per judged job
    jobs/<key>/solution.py  the texts, written before the job's record (problem.py for problem_text)

A solution is judged from a copy in a fresh private temporary folder, so it never learns where the
journal is (and what other clients sent).
"""

from __future__ import annotations

import concurrent.futures
import math
import os
import secrets
import shutil
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kerneljudge.core.jsonl import read_objects
from kerneljudge.core.problem import read_problem
from kerneljudge.core.types import JudgeOptions
from kerneljudge.judging.executors.base import Executor
from kerneljudge.core.logfile import AppendLog
from kerneljudge.judging.executors.local import PoolClosed
from kerneljudge.service.intake import SERVER_ONLY, JobSpec, options_record

STATES = ("queued", "running", "done")


class QueueFull(RuntimeError):
    """More jobs are waiting than the service accepts (HTTP 429); retry_after_s is a hint."""

    def __init__(self, message: str, retry_after_s: int):
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass
class Entry:
    key: str
    problem_id: str | None
    options: JudgeOptions
    state: str = "queued"
    verdict: dict[str, Any] | None = None
    journalled: bool = False          # the verdict is in the journal (a failed judgement is not: retried)
    started: float | None = None


@dataclass
class Counters:
    accepted: int = 0                 # ids answered 202 since this start
    cache_hits: int = 0               # ids answered from a verdict already reached
    attached: int = 0                 # ids that joined a queued or running job
    refused_full: int = 0             # requests answered 429
    judged_now: int = 0               # judgements finished since this start
    verdicts: Counter = field(default_factory=Counter)     # all journalled verdicts, by verdict
    accepted_verdicts: int = 0
    phases_s: Counter = field(default_factory=Counter)     # sums of verdicts' phases_s
    judge_s: float = 0.0              # wall time of judgements since this start


class JobStore:
    def __init__(self, journal_dir: str | os.PathLike, executor: Executor, defaults: JudgeOptions,
                 queue_limit: int = 256):
        self.root = Path(journal_dir)
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)
        (self.root / "jobs").mkdir(exist_ok=True)
        self.executor = executor
        self.device = executor.device
        self.defaults = defaults
        self.queue_limit = max(1, queue_limit)
        self.lanes = max(1, len(executor.status().get("lanes", [])))
        self.entries: dict[str, Entry] = {}
        self.ids: dict[str, str] = {}
        self.counters = Counters()
        self._lock = threading.Lock()
        self._closed = False
        pending = self._load()
        self.journal = AppendLog(self.root / "journal.jsonl", mode=0o600)
        self.resumed = len(pending)
        for entry in pending:
            self._launch(entry)

    # -- restart

    def _load(self) -> list[Entry]:
        specs: dict[str, dict[str, Any]] = {}
        for row in read_objects(self.root / "journal.jsonl"):
            kind, key = row.get("event"), row.get("key")
            if not isinstance(key, str):
                continue
            if kind == "job":
                specs[key] = row
                if key not in self.entries:
                    server = {name: getattr(self.defaults, name) for name in SERVER_ONLY}
                    options = JudgeOptions(**{**row["options"], **server})
                    self.entries[key] = Entry(key, row.get("problem"), options)
            elif kind == "id" and isinstance(row.get("id"), str):
                self.ids[row["id"]] = key
            elif kind == "verdict" and key in self.entries and isinstance(row.get("verdict"), dict):
                entry = self.entries[key]
                if entry.verdict is None:
                    entry.verdict, entry.state, entry.journalled = row["verdict"], "done", True
                    self._count(row["verdict"])
        return [e for e in self.entries.values() if e.state != "done"]

    # -- submitting

    def submit(self, specs: list[JobSpec]) -> list[str]:
        """Accept jobs (all or none): returns their ids; raises QueueFull."""
        with self._lock:
            if self._closed:
                raise QueueFull("the service is shutting down", 5)
            keyed = [(spec, spec.key(self.device)) for spec in specs]
            new = {key: spec for spec, key in keyed if self._needs_judging(key)}
            waiting = self._waiting()
            if waiting + len(new) > self.queue_limit:
                self.counters.refused_full += 1
                raise QueueFull(f"the queue is full ({waiting} job(s) waiting, limit {self.queue_limit}); "
                                f"this request adds {len(new)}", self._retry_hint(waiting))
            rows: list[dict[str, Any]] = []
            for key, spec in new.items():
                self._write_texts(key, spec)
                rows.append({"event": "job", "key": key, "problem": spec.problem_id,
                             "problem_sha256": spec.problem_sha256, "solution_sha256": spec.solution_sha256,
                             "options": options_record(spec.options), "t": round(time.time(), 3)})
            ids = [secrets.token_hex(12) for _ in keyed]
            first = set(new)
            for job_id, (spec, key) in zip(ids, keyed):
                rows.append({"event": "id", "id": job_id, "key": key})
                if key in first:
                    first.discard(key)          # the id that starts the judgement
                elif key not in new and self.entries[key].state == "done":
                    self.counters.cache_hits += 1
                else:
                    self.counters.attached += 1
            self.journal.extend(rows)         # on disk before anyone is told the ids
            for job_id, (_, key) in zip(ids, keyed):
                self.ids[job_id] = key
            self.counters.accepted += len(ids)
            launch = []
            for key, spec in new.items():
                entry = self.entries[key] = Entry(key, spec.problem_id, spec.options)
                launch.append(entry)
        for entry in launch:
            self._launch(entry)
        return ids

    def _needs_judging(self, key: str) -> bool:
        entry = self.entries.get(key)
        return entry is None or (entry.state == "done" and not entry.journalled)

    def _waiting(self) -> int:
        return sum(1 for e in self.entries.values() if e.state != "done")

    def _retry_hint(self, waiting: int) -> int:
        judged = self.counters.judged_now
        per_job = self.counters.judge_s / judged if judged else 10.0
        return int(min(60, max(1, math.ceil(per_job * max(1, waiting - self.queue_limit + 1) / self.lanes))))

    def _folder(self, key: str) -> Path:
        return self.root / "jobs" / key

    def _write_texts(self, key: str, spec: JobSpec) -> None:
        folder = self._folder(key)
        folder.mkdir(mode=0o700, exist_ok=True)
        _write_durably(folder / "solution.py", spec.solution_text)
        if spec.problem_id is None:
            _write_durably(folder / "problem.py", spec.problem_text)

    # -- judging

    def _launch(self, entry: Entry) -> None:
        folder = self._folder(entry.key)
        private = Path(tempfile.mkdtemp(prefix="kj-serve-"))
        try:
            solution = private / "solution.py"
            shutil.copyfile(folder / "solution.py", solution)
            if entry.problem_id is None:
                shutil.copyfile(folder / "problem.py", private / "problem.py")
                problem = read_problem(private / "problem.py")
            else:
                from kerneljudge.service.intake import suite_problem

                path = suite_problem(entry.problem_id)
                if path is None:
                    raise FileNotFoundError(f"suite problem {entry.problem_id} is no longer bundled")
                problem = read_problem(path)
            future = self.executor.submit(problem, solution, entry.options,
                                          on_start=lambda: self._mark_running(entry))
        except Exception as exc:   # noqa: BLE001  (a job that cannot even start is answered, not lost)
            shutil.rmtree(private, ignore_errors=True)
            self._fail(entry, exc)
            return
        future.add_done_callback(lambda f: self._finish(entry, f, private))

    def _mark_running(self, entry: Entry) -> None:
        with self._lock:
            entry.state, entry.started = "running", time.monotonic()

    def _finish(self, entry: Entry, future: concurrent.futures.Future, private: Path) -> None:
        shutil.rmtree(private, ignore_errors=True)
        if future.cancelled():
            return                               # closing: stays accepted in the journal, resumed on restart
        exc = future.exception()
        if isinstance(exc, PoolClosed):
            return
        if exc is not None:
            self._fail(entry, exc)
            return
        verdict = future.result().to_dict()
        folder = self._folder(entry.key)
        verdict["solution"] = str(folder / "solution.py")
        if entry.problem_id is None:
            verdict["problem"] = str(folder / "problem.py")
        with self._lock:
            if self._closed:
                return
            self.journal.append({"event": "verdict", "key": entry.key, "verdict": verdict})
            entry.verdict, entry.state, entry.journalled = verdict, "done", True
            self.counters.judged_now += 1
            self.counters.judge_s += float(verdict.get("wall_s") or 0.0)
            self._count(verdict)

    def _fail(self, entry: Entry, exc: BaseException) -> None:
        """The judge itself failed (not the solution): answered as a runtime_error with judge_error, never
        journalled or cached, so the same job submitted again is judged again."""
        verdict = {"verdict": "runtime_error", "accepted": False, "flags": ["judge_error"], "speedup": None,
                   "reason": f"internal judge error: {type(exc).__name__}: {exc}"[:500], "problem_id":
                   entry.problem_id or "", "device": self.device}
        with self._lock:
            entry.verdict, entry.state, entry.journalled = verdict, "done", False

    def _count(self, verdict: dict[str, Any]) -> None:
        c = self.counters
        c.verdicts[str(verdict.get("verdict"))] += 1
        c.accepted_verdicts += bool(verdict.get("accepted"))
        for phase, seconds in (verdict.get("phases_s") or {}).items():
            if isinstance(seconds, (int, float)):
                c.phases_s[phase] += seconds

    # -- answering

    def get(self, job_id: str) -> dict[str, Any] | None:
        with self._lock:
            key = self.ids.get(job_id)
            entry = self.entries.get(key) if key else None
            if entry is None:
                return None
            return {"id": job_id, "state": entry.state, "verdict": entry.verdict if entry.state == "done" else None}

    def status(self) -> dict[str, Any]:
        pool = self.executor.status()
        with self._lock:
            states = Counter(e.state for e in self.entries.values())
            c = self.counters
            return {
                "queue": {"queued": states["queued"], "running": states["running"], "limit": self.queue_limit},
                "device": self.device,
                "devices": pool.get("lanes", []),
                "counters": {
                    "judged": sum(c.verdicts.values()), "judged_since_start": c.judged_now,
                    "accepted_ids": c.accepted, "cache_hits": c.cache_hits, "attached": c.attached,
                    "refused_queue_full": c.refused_full, "resumed_at_start": self.resumed,
                    "verdicts": dict(c.verdicts), "accepted": c.accepted_verdicts,
                    "phases_s": {k: round(v, 3) for k, v in sorted(c.phases_s.items())},
                },
            }

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self.executor.close()
        self.journal.close()


def _write_durably(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
