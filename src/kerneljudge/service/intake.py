"""What a client may ask the service to judge: one request item checked and turned into a JobSpec.

    {"problem": "level1/21_relu"} or {"problem_text": "..."},  "solution_text": "...",  "options": {...}

Everything here is untrusted input: unknown keys and options are refused (BadRequest, HTTP 400) with a
message that says what is wrong; options may tighten the service's limits, never widen them; texts are
only ever written to files by the job store, never passed to a shell.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kerneljudge.core.problem import ProblemError, read_problem, sha256_text
from kerneljudge.core.types import JudgeOptions

ITEM_KEYS = ("problem", "problem_text", "solution_text", "options")
# the service machine's paths, cores and device sharing: never a client's choice
SERVER_ONLY = ("cache_dir", "reserved_cores", "checks_at_once", "device_memory")   # the service's devices, not a job's
MAX_TRIALS = 100
MAX_TIME_BUDGET_S = 60.0
MAX_TEXT_CHARS = 1 << 20              # per text, on top of the request size limit


class BadRequest(ValueError):
    """A request the service refuses (HTTP 400); the message is shown to the client."""


@dataclass(frozen=True)
class JobSpec:
    problem_id: str | None        # a suite id, or None for problem_text
    problem_path: str | None      # the suite file (problem_id set)
    problem_text: str
    solution_text: str
    options: JudgeOptions

    @property
    def problem_sha256(self) -> str:
        return sha256_text(self.problem_text)

    @property
    def solution_sha256(self) -> str:
        return sha256_text(self.solution_text)

    def key(self, device: str) -> str:
        """The verdict cache key: (problem hash, solution hash, options, device)."""
        material = [self.problem_sha256, self.solution_sha256, options_record(self.options), device]
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def options_record(options: JudgeOptions) -> dict[str, Any]:
    """The options that decide a verdict, as plain JSON (server-side paths left out)."""
    record = dataclasses.asdict(options)
    for name in SERVER_ONLY:
        record.pop(name, None)
    return record


def parse_item(item: Any, defaults: JudgeOptions, device: str, where: str = "the request") -> JobSpec:
    """One job object -> JobSpec, or BadRequest naming what is wrong with it."""
    if not isinstance(item, dict):
        raise BadRequest(f"{where} must be a JSON object with problem or problem_text, and solution_text")
    unknown = sorted(set(item) - set(ITEM_KEYS))
    if unknown:
        raise BadRequest(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; "
                         f"known: {', '.join(ITEM_KEYS)}")
    if ("problem" in item) == ("problem_text" in item):
        raise BadRequest(f"{where}: give exactly one of problem (a suite id) and problem_text")
    solution = _text(item.get("solution_text"), "solution_text", where)
    options = parse_options(item.get("options"), defaults, device, where)
    if "problem" in item:
        pid = item["problem"]
        if not isinstance(pid, str) or not pid.strip():
            raise BadRequest(f"{where}: problem must be a suite id such as level1/21_relu")
        path = suite_problem(pid.strip())
        if path is None:
            raise BadRequest(f"{where}: no problem {pid!r} in the bundled suite "
                             "(ids as `kerneljudge suite` lists them, e.g. level1/21_relu, or the file stem)")
        return JobSpec(read_problem(path).id, str(path), path.read_text(), solution, options)
    text = _text(item.get("problem_text"), "problem_text", where)
    check_problem_text(text, where)
    return JobSpec(None, None, text, solution, options)


def _text(value: Any, name: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"{where}: {name} must be a non-empty string")
    if len(value) > MAX_TEXT_CHARS:
        raise BadRequest(f"{where}: {name} is longer than {MAX_TEXT_CHARS} characters")
    if "\x00" in value:
        raise BadRequest(f"{where}: {name} contains a NUL character")
    return value


def check_problem_text(text: str, where: str) -> None:
    """The text must be a usable problem file (read as text, never executed here)."""
    with tempfile.TemporaryDirectory(prefix="kj-intake-") as tmp:
        path = Path(tmp) / "problem.py"
        path.write_text(text)
        try:
            read_problem(path)
        except ProblemError as exc:
            raise BadRequest(f"{where}: problem_text is not a usable problem: "
                             f"{str(exc).replace(str(path), 'problem_text')}") from None


def parse_options(raw: Any, defaults: JudgeOptions, device: str, where: str = "the request") -> JudgeOptions:
    """The service's defaults with the client's overrides, checked field by field."""
    if raw is None:
        return dataclasses.replace(defaults, device=device)
    if not isinstance(raw, dict):
        raise BadRequest(f"{where}: options must be a JSON object of JudgeOptions fields")
    fields = {f.name: f for f in dataclasses.fields(JudgeOptions)}
    changes: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in fields:
            known = ", ".join(n for n in fields if n not in SERVER_ONLY)
            raise BadRequest(f"{where}: unknown option {name!r}; known: {known}")
        if name in SERVER_ONLY:
            raise BadRequest(f"{where}: option {name!r} is set by the service, not per job")
        if name == "device":
            if value not in ("auto", device):
                raise BadRequest(f"{where}: this service judges on {device}; option device={value!r} is refused")
            continue
        changes[name] = _typed(name, value, getattr(defaults, name), where)
    try:
        options = dataclasses.replace(defaults, device=device, **changes)
    except ValueError as exc:
        raise BadRequest(f"{where}: bad option: {exc}") from None
    _within_limits(options, defaults, where)
    return options


def _typed(name: str, value: Any, default: Any, where: str) -> Any:
    if name == "held_out" and isinstance(value, bool):
        return value   # a mode now; a client from before the modes sends true / false (JudgeOptions maps them)
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        value = float(value) if ok else value
    else:
        ok = isinstance(value, str)
    if not ok:
        raise BadRequest(f"{where}: option {name!r} must be {type(default).__name__}; got {json.dumps(value)}")
    return value


def _within_limits(options: JudgeOptions, service: JudgeOptions, where: str) -> None:
    """A job may ask for less than the service allows, never more (it shares the devices with others)."""
    cores = os.cpu_count() or 1
    checks = [
        (options.trials <= MAX_TRIALS, f"trials is at most {MAX_TRIALS}"),
        (0 < options.time_budget_s <= MAX_TIME_BUDGET_S, f"time_budget_s is in (0, {MAX_TIME_BUDGET_S:g}]"),
        (0 < options.build_timeout_s <= service.build_timeout_s,
         f"build_timeout_s is in (0, {service.build_timeout_s:g}] on this service"),
        (0 < options.run_timeout_s <= service.run_timeout_s,
         f"run_timeout_s is in (0, {service.run_timeout_s:g}] on this service"),
        (1 <= options.threads <= cores, f"threads is in [1, {cores}] on this service"),
        (1 < options.speedup_review_threshold <= service.speedup_review_threshold,
         f"speedup_review_threshold is in (1, {service.speedup_review_threshold:g}] on this service"),
        (options.require_sandbox or not service.require_sandbox, "require_sandbox is on for every job here"),
    ]
    for ok, rule in checks:
        if not ok:
            raise BadRequest(f"{where}: bad option: {rule}")


# ------------------------------------------------------------------------------------------- suite ids


_SUITE_INDEX: dict[str, Path] | None = None


def suite_problem(name: str) -> Path | None:
    """The bundled suite's file for an id (level1/21_relu), a file stem (21_relu) when only one level has
    it, or None. Level 4 is known only with transformers installed (as `kerneljudge suite` lists it)."""
    global _SUITE_INDEX
    if _SUITE_INDEX is None:
        from kerneljudge.suite.catalog import HF_LEVEL, problem_files, transformers_available

        index: dict[str, Path] = {}
        stems: dict[str, list[Path]] = {}
        for path in problem_files():
            level = int(path.parent.name[5:])
            if level == HF_LEVEL and not transformers_available():
                continue
            index[f"level{level}/{path.stem}"] = path
            stems.setdefault(path.stem, []).append(path)
        for stem, paths in stems.items():
            if len(paths) == 1:
                index.setdefault(stem, paths[0])
        _SUITE_INDEX = index
    return _SUITE_INDEX.get(name)
