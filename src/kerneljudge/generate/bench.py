"""`kerneljudge bench`: prompt a model with each problem, judge what it writes, refine, score.

    from kerneljudge.generate.bench import run_bench
    from kerneljudge.generate.bench_settings import BenchSettings
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
device use takes turns in the judge (judging/device/turns.py)). Rows are appended to verdicts.jsonl as items finish;
a re-run with the same folder skips every (problem, sample, turn) already there, continues unfinished
trajectories from their last row, and hits the provider's disk cache for replies already received.
The run folder layout is in runfolder.py; the settings and config.json in bench_settings.py; one item
(prompt, reply, extraction, verdict) in bench_item.py. This module plans the trajectories, runs them, and
records their rows.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from kerneljudge.core.problem import Problem, ProblemError
from kerneljudge.generate.bench_item import ItemMaker
from kerneljudge.generate.bench_parts import (
    BenchError, JudgeWorkers, describe, hardware_block, select_problems, stems_for,
)
from kerneljudge.generate.bench_settings import (
    BenchSettings, check_resume, check_settings, choose_backend, judge_options, judge_worker_count, make_provider,
    run_config, run_identity, sampling_temperature,
)
from kerneljudge.generate.providers.types import ProviderConfigError
from kerneljudge.generate.runfolder import RunFolder, item_key, safe_url
from kerneljudge.generate.scrub import held_out_shapes


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


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class Bench:
    """One bench run over a run folder (see the module docstring)."""

    def __init__(self, settings: BenchSettings, say: Callable[[str], None] = _say):
        self.s = settings
        self.say = say
        self.folder = RunFolder(settings.out)
        check_settings(settings)
        from kerneljudge.judging.environment import resolve_device

        self.device = resolve_device(settings.device)
        self.backend = choose_backend(settings, self.device)
        self.temperature = sampling_temperature(settings)
        self.judge_workers = judge_worker_count(settings, self.device)
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

    def identity(self) -> dict[str, Any]:
        return run_identity(self.s, self.backend, self.device, self.temperature, self.hardware)

    # -- the run

    def run(self) -> BenchResult:
        from kerneljudge.api import Judge

        started = time.monotonic()
        # the judge's reference process starts now, beside the first model replies
        judge = Judge(judge_options(self.s, self.device))
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
        check_resume(self.folder.root, previous, self.identity())
        try:
            provider = make_provider(self.s, self.folder.cache)
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
        self.folder.write_config(run_config(self.s, self.identity(), self.judge_workers, self.problems, self.stems,
                                            previous))
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
        items = ItemMaker(self.s, self.folder, provider, workers, backend=self.backend, device=self.device,
                          temperature=self.temperature, hardware=self.hardware, texts=self.texts, hidden=self.hidden,
                          stems=self.stems, report_error=self._error)
        tasks = [asyncio.create_task(self._trajectory(items, *plan)) for plan in plans]
        try:
            for task in asyncio.as_completed(tasks):
                await task
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await provider.aclose()

    async def _trajectory(self, items: ItemMaker, problem: Problem, sample: int, turn: int,
                          prev: Mapping[str, Any] | None) -> None:
        while turn < self.s.turns:
            row = await self._item(items, problem, sample, turn, prev)
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

    async def _item(self, items: ItemMaker, problem: Problem, sample: int, turn: int,
                    prev: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """Make the item and record its row; None after an error (reported, no row)."""
        made = await items.make(problem, sample, turn, prev)
        if made is None:
            return None
        row = made.row
        self.folder.append_row(row)
        self.written[item_key(row)] = row
        self.folder.event("verdict", **made.where, verdict=row["verdict"], accepted=row["accepted"],
                          speedup=row.get("speedup"))
        self.new_rows += 1
        self.finished += 1
        if row.get("verdict") == "unjudgeable":
            self.unjudgeable.setdefault(problem.id, row)
        if self._stop_reason(problem.id, row):
            self.planned -= self.s.turns - turn - 1            # the trajectory stops here
        self.say(f"[{self.finished}/{self.planned}] {problem.id} s{sample} "
                 f"t{turn}: {describe(row)} (reply {made.reply_s:.1f} s{', cached' if made.cached else ''}"
                 + (f", judge {made.judge_s:.1f} s)" if made.judge_s is not None else ")"))
        return row

    def _error(self, stage: str, where: Mapping[str, Any], exc: BaseException) -> None:
        message = f"{type(exc).__name__}: {exc}"
        self.errors.append({**where, "stage": stage, "error": message})
        self.folder.event("error", **where, stage=stage, error=message)
        self.say(f"[error] {where['problem_id']} s{where['sample']} t{where['turn']}: {stage} failed: {message}")


def run_bench(settings: BenchSettings, say: Callable[[str], None] = _say) -> BenchResult:
    """Run (or resume) a bench run; raises BenchError for settings or inputs it cannot use."""
    return Bench(settings, say).run()


__all__ = ["BenchResult", "BenchError", "Bench", "run_bench", "select_problems", "JudgeWorkers"]
