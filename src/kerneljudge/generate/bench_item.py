"""One item of a `kerneljudge bench` run: prompt, reply, extracted solution, verdict.

ItemMaker writes the item's prompt, the model's reply and the extracted solution to the run folder and
judges a private copy of the solution; it returns the row verdicts.jsonl is to hold, and leaves
recording it to the run (bench.py). Turn 0 is prompted with the problem; a later turn with the row of
the turn before: its solution and the judge's feedback on it (held-out shapes hidden), or the note on
why its reply held no code. A provider or judge error is reported and makes no row; a provider error
that no retry fixes (FATAL_STATUS, a configuration error) ends the run with BenchError.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from kerneljudge.core.problem import Problem
from kerneljudge.generate.bench_parts import BenchError, JudgeWorkers
from kerneljudge.generate.bench_settings import BenchSettings
from kerneljudge.generate.extract import extract_solution
from kerneljudge.generate.feedback import feedback_from_verdict, feedback_no_code
from kerneljudge.generate.messages import build_messages, build_refinement_messages
from kerneljudge.generate.providers.types import ProviderConfigError, ProviderError, ProviderRequestError
from kerneljudge.generate.runfolder import RunFolder, item_name, now

FATAL_STATUS = (401, 403, 404)      # a request error with one of these ends the whole run

ErrorReport = Callable[[str, Mapping[str, Any], BaseException], None]   # (stage, where, error)


def as_logged(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row as read back from verdicts.jsonl (so a prompt built now equals one built on resume)."""
    return json.loads(json.dumps(row, sort_keys=True, ensure_ascii=False, default=str))


@dataclass
class MadeItem:
    where: dict[str, Any]                   # problem_id, sample, turn, item: the fields of its events
    row: dict[str, Any]                     # as verdicts.jsonl is to hold it
    reply_s: float                          # the wait for the reply
    cached: bool                            # the reply came from the provider's disk cache
    judge_s: float | None                   # the wait for the verdict (None for no_code)


class ItemMaker:
    """Makes the items of one bench run through its provider and judge workers."""

    def __init__(self, settings: BenchSettings, folder: RunFolder, provider: Any, workers: JudgeWorkers, *,
                 backend: str, device: str, temperature: float, hardware: dict[str, Any] | None,
                 texts: Mapping[str, str], hidden: Mapping[str, Any], stems: Mapping[str, str],
                 report_error: ErrorReport):
        self.s = settings
        self.folder = folder
        self.provider = provider
        self.workers = workers
        self.backend = backend
        self.device = device
        self.temperature = temperature
        self.hardware = hardware
        self.texts = texts              # problem id -> the problem file's text
        self.hidden = hidden            # problem id -> its held-out shapes (kept out of feedback)
        self.stems = stems              # problem id -> the file-name stem of its items
        self.report_error = report_error

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

    async def make(self, problem: Problem, sample: int, turn: int,
                   prev: Mapping[str, Any] | None) -> MadeItem | None:
        """The item (problem, sample, turn) after the row prev; None after a provider or judge error."""
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
            completion = await self.provider.complete(messages, temperature=self.temperature,
                                                      max_tokens=self.s.max_tokens, seed=seed, sample=sample)
        except ProviderError as exc:
            fatal = isinstance(exc, ProviderConfigError) or (
                isinstance(exc, ProviderRequestError) and exc.status in FATAL_STATUS)
            self.report_error("generation", where, exc)
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
            verdict = self.no_code_verdict(problem, extraction.note)
        else:
            t1 = time.monotonic()
            private = Path(tempfile.mkdtemp(prefix="kj-bench-"))   # the solution never learns the run folder
            try:
                copy = private / solution_path.name
                shutil.copyfile(solution_path, copy)
                verdict = await self.workers.judge_one(problem, copy)
            except Exception as exc:   # noqa: BLE001  a judge failure is not the model's: retried on re-run
                self.report_error("judge", where, exc)
                return None
            finally:
                shutil.rmtree(private, ignore_errors=True)
            verdict["solution"] = str(solution_path.resolve())
            judge_wait_s = round(time.monotonic() - t1, 3)
        row = as_logged({**verdict, "problem_id": problem.id, "level": problem.level, "sample": sample, "turn": turn,
                         "model": self.s.model, "item": name, **gen, "judge_wait_s": judge_wait_s, "recorded": now()})
        return MadeItem(where, row, gen_s, completion.cached, judge_wait_s)

    def no_code_verdict(self, problem: Problem, note: str) -> dict[str, Any]:
        return {"verdict": "no_code", "accepted": False, "reason": f"no solution in the reply: {note}",
                "problem": problem.path, "solution": None, "problem_id": problem.id, "backend": "",
                "policy": self.s.policy, "precision": self.s.precision, "device": self.device,
                "speedup": None, "ref_ms": None, "sol_ms": None, "flags": [], "findings": [], "max_error": None,
                "error_excerpt": "", "problem_sha256": problem.sha256, "solution_sha256": ""}
