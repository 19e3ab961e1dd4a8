"""`kerneljudge bench`: prompt a model with each problem, judge what it writes, refine, score.

    from kerneljudge.generate.bench import BenchSettings, run_bench
    result = run_bench(BenchSettings(model="openai:gpt-4o", problems="suite", level=1, out="runs/gpt4o"))

One (problem, sample) pair is a trajectory of at most `turns` items; an item is one prompt, one reply,
its extraction and (when code was found) one verdict. Turn 0 is prompted with the problem; turn t > 0
with the previous turn's solution and the judge's feedback on it (feedback_from_verdict, held-out shapes
hidden). A trajectory stops after its first accepted turn unless `all_turns`; a reply without usable
code is a `no_code` item (a failed turn, refined with feedback_no_code). A provider or judge error ends
the trajectory without a row, so a re-run retries it. Once any row of a problem is `unjudgeable` (its
reference cannot judge: nothing the model writes can change that), no trajectory of that problem is asked
for another turn; each still gets its first, so every planned trajectory has a row. The stop is recorded
as a "stopped" event with the problem outcome.

Generation and judging overlap: every trajectory is an asyncio task; requests go out through the
provider (its own concurrency limit and retries); extracted solutions are queued to `judge_workers`
daemon threads sharing one Judge session (one trusted reference process, one device: builds may overlap,
device use takes turns in the judge (judging/turns.py)). Rows are appended to verdicts.jsonl as items finish;
a re-run with the same folder skips every (problem, sample, turn) already there, continues unfinished
trajectories from their last row, and hits the provider's disk cache for replies already received.
The run folder layout is in runfolder.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from kerneljudge.core.problem import Problem, ProblemError
from kerneljudge.core.types import BACKENDS, JudgeOptions
from kerneljudge.generate.extract import extract_solution
from kerneljudge.generate.feedback import feedback_from_verdict, feedback_no_code
from kerneljudge.generate.messages import build_messages, build_refinement_messages
from kerneljudge.generate.scrub import held_out_shapes
from kerneljudge.generate.bench_parts import (
    BenchError, JudgeWorkers, describe, hardware_block, select_problems, stems_for,
)
from kerneljudge.generate.providers.types import ProviderConfigError, ProviderError, ProviderRequestError
from kerneljudge.generate.runfolder import FORMAT, RunFolder, item_key, item_name, now, safe_url

FATAL_STATUS = (401, 403, 404)      # a request error with one of these ends the whole run
IDENTITY = ("model", "backend", "shots", "temperature", "max_tokens", "seed", "precision", "policy", "device",
            "hardware")             # settings a resumed run must share with the run folder


@dataclass
class BenchSettings:
    model: str                              # PROVIDER:NAME (openai:..., anthropic:..., replay:FOLDER)
    problems: str                           # "suite" or a folder of problem files
    out: str
    level: int | None = None
    samples: int = 1
    turns: int = 1
    all_turns: bool = False                 # keep refining after an accepted turn
    backend: str | None = None              # None: cuda on a CUDA device, triton on the CPU
    shots: str = "0"                        # 0, 1 or few
    device: str = "auto"
    policy: str = "strict"
    precision: str = "fp32"
    hardware: str = "auto"                  # auto (H200 block on an H200), none, h200
    limit: int | None = None                # only the first N problems
    problem_ids: list[str] | None = None
    temperature: float | None = None        # None: 0.0 for one sample, 0.7 for several
    max_tokens: int = 8192
    seed: int | None = None                 # request seed = seed + sample (None: no seed sent)
    base_url: str | None = None
    concurrency: int = 4                    # model requests in flight
    max_attempts: int = 6
    request_timeout: float = 600.0
    judge_workers: int | None = None        # None: 1 on the CPU, 4 on a GPU (builds overlap)
    trials: int = 5
    budget: float = 2.0
    run_timeout: float = 300.0
    build_timeout: float = 600.0
    timing: bool = True
    threads: int = 1
    cache_dir: str | None = None            # the judge's build / reference-time cache


@dataclass
class BenchResult:
    folder: Path
    rows: list[dict[str, Any]]              # every verdict row in the folder (old and new)
    new_rows: int = 0
    skipped: int = 0                        # items already in the folder
    errors: list[dict[str, Any]] = field(default_factory=list)
    provider_stats: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0

    @property
    def complete(self) -> bool:
        return not self.errors


# ------------------------------------------------------------------------------------------------ run


def _row_dict(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row as read back from verdicts.jsonl (so a prompt built now equals one built on resume)."""
    return json.loads(json.dumps(row, sort_keys=True, ensure_ascii=False, default=str))


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class Bench:
    """One bench run over a run folder (see the module docstring)."""

    def __init__(self, settings: BenchSettings, say: Callable[[str], None] = _say):
        self.s = settings
        self.say = say
        self.folder = RunFolder(settings.out)
        self._validate()
        from kerneljudge.judging.environment import resolve_device

        self.device = resolve_device(settings.device)
        self.backend = settings.backend or ("cuda" if self.device == "cuda" else "triton")
        if self.backend not in BACKENDS:
            raise BenchError(f"--backend must be one of {', '.join(BACKENDS)}")
        if self.backend == "cuda" and self.device != "cuda":
            raise BenchError("--backend cuda needs a CUDA device (this run judges on the CPU); use triton or cpp")
        self.temperature = settings.temperature if settings.temperature is not None else \
            (0.0 if settings.samples == 1 else 0.7)
        self.hardware: dict[str, Any] | None = None     # set by run(), which may ask the judge for the GPU
        try:
            self.problems = select_problems(settings.problems, settings.level, settings.problem_ids, settings.limit)
        except ProblemError as exc:
            raise BenchError(str(exc), "input") from None
        self.stems = stems_for(self.problems)
        self.texts = {p.id: Path(p.path).read_text(encoding="utf-8") for p in self.problems}
        self.hidden = {pid: held_out_shapes(text) for pid, text in self.texts.items()}
        self.errors: list[dict[str, Any]] = []
        self.finished = 0
        self.planned = 0
        self.new_rows = 0
        self.written: dict[tuple[str, int, int], dict[str, Any]] = {}
        self.unjudgeable: dict[str, dict[str, Any]] = {}   # problem id -> its first unjudgeable row

    def _validate(self) -> None:
        s = self.s
        for name, value, low in (("samples", s.samples, 1), ("turns", s.turns, 1), ("concurrency", s.concurrency, 1),
                                 ("trials", s.trials, 1), ("max_tokens", s.max_tokens, 1),
                                 ("max_attempts", s.max_attempts, 1)):
            if value < low:
                raise BenchError(f"--{name.replace('_', '-')} must be at least {low}")
        if s.shots not in ("0", "1", "few"):
            raise BenchError("--shots must be 0, 1 or few")
        if s.judge_workers is not None and s.judge_workers < 1:
            raise BenchError("--judge-workers must be at least 1")

    # -- configuration

    def identity(self) -> dict[str, Any]:
        return {"model": self.s.model, "backend": self.backend, "shots": self.s.shots, "temperature": self.temperature,
                "max_tokens": self.s.max_tokens, "seed": self.s.seed, "precision": self.s.precision,
                "policy": self.s.policy, "device": self.device, "hardware": self.hardware}

    def config(self, previous: Mapping[str, Any] | None) -> dict[str, Any]:
        from kerneljudge import __version__

        known = {p["id"]: p for p in (previous or {}).get("problems") or [] if isinstance(p, Mapping) and "id" in p}
        for p in self.problems:
            known[p.id] = {"id": p.id, "level": p.level, "path": p.path, "sha256": p.sha256,
                           "item_stem": self.stems[p.id]}
        samples = max(self.s.samples, int(((previous or {}).get("generation") or {}).get("samples") or 0))
        turns = max(self.s.turns, int(((previous or {}).get("generation") or {}).get("turns") or 0))
        ident = self.identity()
        source = self.s.problems if self.s.problems == "suite" else str(Path(self.s.problems).resolve())
        return {
            "format": FORMAT,
            "kerneljudge": __version__,
            "created": (previous or {}).get("created") or now(),
            "updated": now(),
            "model": self.s.model,
            "provider": {"spec": self.s.model, "base_url": safe_url(self.s.base_url), "concurrency": self.s.concurrency,
                         "max_attempts": self.s.max_attempts, "request_timeout_s": self.s.request_timeout,
                         "cache_dir": "cache"},
            "generation": {"samples": samples, "turns": turns, "all_turns": self.s.all_turns,
                           "backend": self.backend, "shots": self.s.shots, "temperature": self.temperature,
                           "max_tokens": self.s.max_tokens, "seed": self.s.seed, "hardware": self.hardware,
                           "precision": self.s.precision},
            "judge": {"device": self.device, "policy": self.s.policy, "precision": self.s.precision,
                      "trials": self.s.trials, "time_budget_s": self.s.budget, "run_timeout_s": self.s.run_timeout,
                      "build_timeout_s": self.s.build_timeout, "timing": self.s.timing, "threads": self.s.threads,
                      "preset": "auto", "judge_workers": self.judge_workers},
            "selection": {"problems": source,
                          "level": self.s.level, "problem_ids": self.s.problem_ids, "limit": self.s.limit},
            "identity": ident,
            "problems": list(known.values()),
        }

    @property
    def judge_workers(self) -> int:
        return self.s.judge_workers or (4 if self.device == "cuda" else 1)

    def check_resume(self, previous: Mapping[str, Any] | None) -> None:
        if not previous or "identity" not in previous:
            return
        old, new = previous["identity"], self.identity()
        diff = [f"{k}: {old.get(k)!r} there, {new.get(k)!r} now" for k in IDENTITY if old.get(k) != new.get(k)]
        if diff:
            raise BenchError(f"{self.folder.root} holds a run with other settings ({'; '.join(diff)}); "
                             "use another --out, or the same settings to resume it")

    # -- provider

    def make_provider(self):
        from kerneljudge.generate.providers.registry import get_provider, load_provider_class, parse_spec

        name, _ = parse_spec(self.s.model)
        cls = load_provider_class(name)
        options: dict[str, Any] = {}
        if getattr(cls, "network", True):
            options.update(cache_dir=str(self.folder.cache), concurrency=self.s.concurrency,
                           max_attempts=self.s.max_attempts, timeout=self.s.request_timeout)
            if self.s.base_url:
                options["base_url"] = self.s.base_url
        elif self.s.base_url:
            raise BenchError(f"--base-url does not apply to the {name} provider")
        return get_provider(self.s.model, **options)

    # -- the run

    def run(self) -> BenchResult:
        from kerneljudge.api import Judge

        started = time.monotonic()
        options = JudgeOptions(device=self.device, precision=self.s.precision, policy=self.s.policy,
                               trials=self.s.trials, time_budget_s=self.s.budget, run_timeout_s=self.s.run_timeout,
                               build_timeout_s=self.s.build_timeout, timing=self.s.timing, threads=self.s.threads,
                               cache_dir=self.s.cache_dir)
        judge = Judge(options)     # its reference process starts now, beside the first model replies
        if "MAX_JOBS" not in os.environ:   # parallel builds share the cores (as judging/batch.py does)
            judge.slot.env["MAX_JOBS"] = str(max(1, (os.cpu_count() or 1) // self.judge_workers))
        workers = JudgeWorkers(judge, self.judge_workers)
        try:
            return self._run(judge, workers, started)
        finally:
            workers.stop()
            judge.close()          # ends a judgement still running (interrupt): its result is never recorded
            workers.join(5.0)
            judge.close()          # again, in case that judgement restarted the reference process

    def _run(self, judge: Any, workers: JudgeWorkers, started: float) -> BenchResult:
        self.hardware = hardware_block(self.s.hardware, self.device, self.backend,
                                       lambda: str(judge.slot.reference.hello().get("device_name", "")))
        previous = self.folder.read_config()
        self.check_resume(previous)
        try:
            provider = self.make_provider()
        except ProviderConfigError as exc:
            raise BenchError(str(exc)) from None
        self.folder.create()
        lock = self.folder.lock()
        if lock is None:
            raise BenchError(f"another kerneljudge bench is running on {self.folder.root}; wait for it or stop it")
        try:
            return self._locked(provider, workers, previous, started)
        finally:
            lock.close()

    def _locked(self, provider, workers: JudgeWorkers, previous: Mapping[str, Any] | None,
                started: float) -> BenchResult:
        self.folder.write_config(self.config(previous))
        done = {item_key(r): r for r in self.folder.rows()}
        plans, skipped = self.plan(done)
        self.planned = sum(self.s.turns - start for _, _, start, _ in plans)
        self.folder.event("start", settings={**asdict(self.s), "base_url": safe_url(self.s.base_url)},
                          identity=self.identity(), items_done=len(done), items_skipped=skipped,
                          trajectories=len(plans), unjudgeable_problems=sorted(self.unjudgeable))
        self.say(f"bench: {len(self.problems)} problem(s) x {self.s.samples} sample(s) x {self.s.turns} turn(s) "
                 f"with {self.s.model}, backend {self.backend} judged on {self.device} ({self.s.policy}); "
                 f"run folder {self.folder.root}")
        if skipped:
            self.say(f"bench: resuming: {skipped} item(s) already in {self.folder.root / 'verdicts.jsonl'}; "
                     f"{len(plans)} trajectory(ies) to go (at most {self.planned} item(s))")
        try:
            asyncio.run(self._main(provider, workers, plans))
        except KeyboardInterrupt:
            self.folder.event("interrupted", items_this_run=self.new_rows)
            raise
        except BenchError as exc:
            self.folder.event("aborted", items_this_run=self.new_rows, error=str(exc))
            raise
        stats = dict(getattr(provider, "stats", {}) or {})
        rows = self.folder.rows()
        self.check_log(done, rows)
        wall = round(time.monotonic() - started, 3)
        self.folder.event("end", items_this_run=self.new_rows, errors=len(self.errors), provider=stats, wall_s=wall,
                          unjudgeable_problems=sorted(self.unjudgeable))
        return BenchResult(self.folder.root, rows, self.new_rows, skipped, self.errors, stats, wall)

    def check_log(self, before: Mapping[tuple[str, int, int], Any], rows: list[dict[str, Any]]) -> None:
        """verdicts.jsonl must hold what was there before plus what this run wrote, nothing else: judged code
        runs as this user and could write there (see docs/generation.md, "Trust")."""
        found = {item_key(r): r for r in rows}
        extra = sorted(set(found) - set(before) - set(self.written))
        changed = sorted(k for k, r in self.written.items() if found.get(k) != r)
        if extra or changed:
            where = {"problem_id": "*", "sample": "*", "turn": "*"}
            self._error("log", where, RuntimeError(
                f"verdicts.jsonl changed behind this run's back: {len(extra)} row(s) it did not write "
                f"({', '.join(map(str, extra[:3]))}), {len(changed)} row(s) altered; do not trust this folder"))

    def plan(self, done: Mapping[tuple[str, int, int], Mapping[str, Any]]):
        """[(problem, sample, first turn to do, the row of the turn before or None)], and items skipped."""
        plans, skipped = [], 0
        for row in done.values():
            if row.get("verdict") == "unjudgeable":
                self.unjudgeable.setdefault(str(row.get("problem_id")), row)
        for p in self.problems:
            for sample in range(self.s.samples):
                prev = None
                turn = 0
                while turn < self.s.turns and (p.id, sample, turn) in done:
                    prev = done[(p.id, sample, turn)]
                    turn += 1
                skipped += turn
                if turn >= self.s.turns or (prev is not None and self._stop_reason(p.id, prev)):
                    continue
                plans.append((p, sample, turn, prev))
        return plans, skipped

    def _stop_reason(self, problem_id: str, row: Mapping[str, Any]) -> str | None:
        """Why the trajectory gets no turn after this row: "accepted" (unless all_turns), "unjudgeable" (a row
        of the problem said its reference cannot judge), or None when it goes on."""
        if row.get("accepted") and not self.s.all_turns:
            return "accepted"
        return "unjudgeable" if problem_id in self.unjudgeable else None

    def _stopped_unjudgeable(self, problem: Problem, sample: int, next_turn: int) -> None:
        """Record that the trajectory gets no turn from next_turn on, and why."""
        row = self.unjudgeable[problem.id]
        outcome = row.get("problem_outcome") or {}
        self.folder.event("stopped", problem_id=problem.id, sample=sample, turn=next_turn, why="unjudgeable",
                          problem_outcome=outcome, seen_at={"sample": row.get("sample"), "turn": row.get("turn")},
                          turns_not_asked=self.s.turns - next_turn)
        self.say(f"bench: {problem.id} s{sample}: no more turns, the problem cannot judge "
                 f"({outcome.get('kind')}: {str(row.get('reason', ''))[:100]})")

    async def _main(self, provider, workers: JudgeWorkers, plans) -> None:
        tasks = [asyncio.create_task(self._trajectory(provider, workers, *plan)) for plan in plans]
        try:
            for task in asyncio.as_completed(tasks):
                await task
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await provider.aclose()

    async def _trajectory(self, provider, workers: JudgeWorkers, problem: Problem, sample: int, turn: int,
                          prev: Mapping[str, Any] | None) -> None:
        while turn < self.s.turns:
            row = await self._item(provider, workers, problem, sample, turn, prev)
            if row is None:                     # an error: logged, the trajectory ends (a re-run retries)
                self.planned -= self.s.turns - turn
                return
            turn += 1
            why = self._stop_reason(problem.id, row)
            if why:                                       # _item took the turns left off the plan
                if why == "unjudgeable" and turn < self.s.turns:
                    self._stopped_unjudgeable(problem, sample, turn)
                return
            prev = row

    def messages(self, problem: Problem, prev: Mapping[str, Any] | None) -> list[dict[str, str]]:
        text = self.texts[problem.id]
        shots: int | str = self.s.shots if self.s.shots == "few" else int(self.s.shots)
        if prev is None:
            return build_messages(text, self.backend, shots, self.hardware, precision=self.s.precision)
        if prev.get("verdict") == "no_code":
            feedback, code = feedback_no_code(prev.get("extraction_note") or ""), ""
        else:
            # the judge's profile of the previous solution (Verdict.profile: top kernels by time, with their class)
            feedback = feedback_from_verdict(prev, prev.get("profile") or [], hidden_shapes=self.hidden[problem.id])
            code = (self.folder.root / prev["solution_file"]).read_text(encoding="utf-8")
        return build_refinement_messages(text, self.backend, code, feedback, self.hardware, shots=shots,
                                         precision=self.s.precision)

    async def _item(self, provider, workers: JudgeWorkers, problem: Problem, sample: int, turn: int,
                    prev: Mapping[str, Any] | None) -> dict[str, Any] | None:
        name = item_name(self.stems[problem.id], sample, turn)
        where = {"problem_id": problem.id, "sample": sample, "turn": turn, "item": name}
        messages = self.messages(problem, prev)
        seed = None if self.s.seed is None else self.s.seed + sample
        prompt_path = self.folder.prompts / f"{name}.json"
        self.folder.write_text(prompt_path, json.dumps(
            {"messages": messages, "temperature": self.temperature, "max_tokens": self.s.max_tokens, "seed": seed,
             "sample": sample, "model": self.s.model}, indent=1, ensure_ascii=False) + "\n")
        t0 = time.monotonic()
        try:
            completion = await provider.complete(messages, temperature=self.temperature,
                                                 max_tokens=self.s.max_tokens, seed=seed, sample=sample)
        except ProviderError as exc:
            fatal = isinstance(exc, ProviderConfigError) or (
                isinstance(exc, ProviderRequestError) and exc.status in FATAL_STATUS)
            self._error("generation", where, exc)
            if fatal:
                raise BenchError(f"the model provider refused the request: {exc}", "provider") from None
            return None
        gen_s = time.monotonic() - t0
        reply_path = self.folder.replies / f"{name}.md"
        self.folder.write_text(reply_path, completion.text)
        extraction = extract_solution(completion.text, self.backend)
        solution_path = None
        if extraction.outcome == "ok":
            solution_path = self.folder.solutions / f"{name}.py"
            code = extraction.code if extraction.code.endswith("\n") else extraction.code + "\n"
            self.folder.write_text(solution_path, code)
        gen = {"prompt_file": self.folder.rel(prompt_path), "reply_file": self.folder.rel(reply_path),
               "solution_file": self.folder.rel(solution_path), "extraction": extraction.outcome,
               "extraction_note": extraction.note, "usage": dict(completion.usage), "cost_usd": completion.cost_usd,
               "cached": completion.cached, "finish_reason": completion.finish_reason,
               "gen_latency_s": round(completion.latency_s, 3), "gen_wait_s": round(gen_s, 3),
               "attempts": completion.attempts, "reply_model": completion.model, "reply_id": completion.raw_id}
        self.folder.event("reply", **where, **gen)
        judge_wait_s = None
        if solution_path is None:
            verdict = self._no_code_verdict(problem, extraction.note)
        else:
            t1 = time.monotonic()
            private = Path(tempfile.mkdtemp(prefix="kj-bench-"))   # the solution never learns the run folder
            try:
                copy = private / solution_path.name
                shutil.copyfile(solution_path, copy)
                verdict = await workers.judge_one(problem, copy)
            except Exception as exc:   # noqa: BLE001  a judge failure is not the model's: retried on re-run
                self._error("judge", where, exc)
                return None
            finally:
                shutil.rmtree(private, ignore_errors=True)
            verdict["solution"] = str(solution_path.resolve())
            judge_wait_s = round(time.monotonic() - t1, 3)
        row = _row_dict({**verdict, "problem_id": problem.id, "level": problem.level, "sample": sample, "turn": turn,
                         "model": self.s.model, "item": name, **gen, "judge_wait_s": judge_wait_s, "recorded": now()})
        self.folder.append_row(row)
        self.written[item_key(row)] = row
        self.folder.event("verdict", **where, verdict=row["verdict"], accepted=row["accepted"],
                          speedup=row.get("speedup"))
        self.new_rows += 1
        self.finished += 1
        if row.get("verdict") == "unjudgeable":
            self.unjudgeable.setdefault(problem.id, row)
        if self._stop_reason(problem.id, row):
            self.planned -= self.s.turns - turn - 1            # the trajectory stops here
        self.say(f"[{self.finished}/{self.planned}] {problem.id} s{sample} "
                 f"t{turn}: {describe(row)} (reply {gen_s:.1f} s{', cached' if completion.cached else ''}"
                 + (f", judge {judge_wait_s:.1f} s)" if judge_wait_s is not None else ")"))
        return row

    def _no_code_verdict(self, problem: Problem, note: str) -> dict[str, Any]:
        return {"verdict": "no_code", "accepted": False, "reason": f"no solution in the reply: {note}",
                "problem": problem.path, "solution": None, "problem_id": problem.id, "backend": "",
                "policy": self.s.policy, "precision": self.s.precision, "device": self.device,
                "speedup": None, "ref_ms": None, "sol_ms": None, "flags": [], "findings": [], "max_error": None,
                "error_excerpt": "", "problem_sha256": problem.sha256, "solution_sha256": ""}

    def _error(self, stage: str, where: Mapping[str, Any], exc: BaseException) -> None:
        message = f"{type(exc).__name__}: {exc}"
        self.errors.append({**where, "stage": stage, "error": message})
        self.folder.event("error", **where, stage=stage, error=message)
        self.say(f"[error] {where['problem_id']} s{where['sample']} t{where['turn']}: {stage} failed: {message}")


def run_bench(settings: BenchSettings, say: Callable[[str], None] = _say) -> BenchResult:
    """Run (or resume) a bench run; raises BenchError for settings or inputs it cannot use."""
    return Bench(settings, say).run()


__all__ = ["BenchSettings", "BenchResult", "BenchError", "Bench", "run_bench", "select_problems", "JudgeWorkers"]
