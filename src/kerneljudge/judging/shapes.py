"""Shapes the judge uses for a problem: the small (CPU) preset and held-out shapes, from metadata or derived.

    plan = resolve(problem, cache_dir)          # ShapePlan: small, held_out, held_out_small, source, notes
    plans = resolve_many(problems, cache_dir)   # one probe child for all of them

Metadata wins: a problem's own SMALL / HELD_OUT / HELD_OUT_SMALL are used as they are. What is missing is
derived (kerneljudge.shapes: candidates from the problem's size constants, read from its text here) and
checked in a trusted probe child (worker/shapes.py: problem code never runs in this process). Every
held-out list also gets a variant far below its base shape (threat B13, kerneljudge.shapes.far_below),
appended unless a listed one already has FAR_BELOW_RATIO times fewer input elements; so a problem with all
three presets (every bundled one) is probed too, once: its plan is cached like any other. Derived plans are cached under
cache_dir/shapes/, keyed by the problem text's sha256, the torch version and DERIVE_VERSION, written
atomically here and nowhere else. A probe crash or timeout gives a plan with nothing derived and a note
(never an exception), and is not cached, so the next run tries again.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import math
import os
import queue
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from kerneljudge.core.paths import default_cache_dir
from kerneljudge.core.problem import Problem, sha256_text
from kerneljudge.shapes import derive
from kerneljudge.shapes import roles as R
from kerneljudge.shapes.far_below import choose, listed_variants
from kerneljudge.shapes.far_below import show as _show
from kerneljudge.shapes.far_below import total_bytes as _total
from kerneljudge.shapes.plan import PRESETS, PlanError, ShapePlan
from kerneljudge.shapes.scan import Scan, scan_text
from kerneljudge.judging import lint
from kerneljudge.judging import environment
from kerneljudge.judging.child import Child

DERIVE_VERSION = 2                  # bump when derivation or budgets change: invalidates cached plans
WORKER_MODULE = "kerneljudge.worker.shapes"
CPU_PROBE_MAX_BYTES = 256 << 20     # the probe builds real tensors only when inputs + parameters fit here
MAX_SMALL_ROUNDS = 40               # probes spent searching for the small preset
SLOW_PROBE_S = 2.0                  # a probe slower than this makes the small search take bigger steps
METADATA_KEYS = {"small": "SMALL", "held_out": "HELD_OUT", "held_out_small": "HELD_OUT_SMALL"}
VALUES_MAX_BYTES = 64 << 20         # a far-below candidate's output is checked for real up to this size


class ShapeWorker(lint.LintWorker):
    """The shape probe child, with the lint worker's client: one process for many problems, restarted
    after a crash or a timeout (`starts` counts the processes started)."""

    def _ensure(self) -> Child:
        if self._child is None or self._child.proc.poll() is not None:
            self._discard()
            self._child = Child(WORKER_MODULE, environment.child_env("cpu", self.threads, self.cache_dir))
            self.starts += 1
            self._exchange({"cmd": "ping"}, lint.START_TIMEOUT_S, "starting")
        return self._child


class _ProbeFailed(Exception):
    """The probe child crashed or timed out: nothing derived for this problem is trusted."""


def resolve(problem: Problem, cache_dir: str | None = None, timeout_s: float = 120.0,
            worker: ShapeWorker | None = None, use_cache: bool = True) -> ShapePlan:
    """The plan for one problem. Never raises for what the problem does; starts a probe child only when the
    problem has size constants and no cached plan exists (in `worker` when given, else a fresh one): even
    a problem with all its metadata is probed once, for its far-below held-out shape."""
    cache_dir = cache_dir or default_cache_dir()
    try:
        text = Path(problem.path).read_text()
        scan = scan_text(text)
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        return _plan_from(_metadata(problem, Scan()), {}, [f"cannot read the problem file: {exc}"])
    known = _metadata(problem, scan)
    try:
        roles = R.classify(scan)
    except Exception as exc:  # a rule bug must not stop judging
        return _plan_from(known, {}, [f"deriving shapes failed, nothing derived: {type(exc).__name__}: {exc}"])
    if not R.sizes(roles):
        why = "no module-level integer size constants" if not scan.constants else \
            f"no constant is a size ({R.describe(roles, scan)})"
        return _plan_from(known, {}, [f"nothing to derive: {why}"])
    cache = _cache_path(cache_dir, text)
    if use_cache:
        try:
            return ShapePlan.from_json(cache.read_text())
        except (OSError, PlanError):
            pass
    own = worker is None
    worker = worker or ShapeWorker(cache_dir)
    try:
        plan = _derive(problem, scan, roles, known, _Prober(worker, problem.path, timeout_s))
    except _ProbeFailed as exc:
        return _plan_from(known, {}, [f"the shape probe failed, nothing derived: {exc}"])
    except Exception as exc:  # a derivation bug must not stop judging; the note says what happened
        return _plan_from(known, {}, [f"deriving shapes failed, nothing derived: {type(exc).__name__}: {exc}"])
    finally:
        if own:
            worker.close()
    _store(cache, plan)
    return plan


def resolve_many(problems: Iterable[Problem], cache_dir: str | None = None, timeout_s: float = 120.0,
                 use_cache: bool = True, progress: Callable[[str], None] | None = None) -> list[ShapePlan]:
    """Plans for many problems, probed in ONE child process (started only if some plan must be derived)."""
    cache_dir = cache_dir or default_cache_dir()
    plans = []
    with ShapeWorker(cache_dir) as worker:
        for problem in problems:
            plans.append(resolve(problem, cache_dir, timeout_s, worker, use_cache))
            if progress is not None:
                progress(f"shapes {problem.id}: " + ", ".join(f"{k} {v}" for k, v in plans[-1].source.items()))
    return plans


def resolve_concurrently(problems: Iterable[Problem], cache_dir: str | None = None, probes: int = 1,
                         timeout_s: float = 120.0) -> Iterator[tuple[Problem, ShapePlan]]:
    """(problem, plan) for many problems, as each is ready: `probes` probe children work side by side (a cold
    plan for an upstream problem takes a few seconds of real forwards on the CPU; 250 of them one after another
    kept a batch from judging anything for ten minutes). Yields in the order the plans finish, which for equal
    probes is about the order given."""
    cache_dir = cache_dir or default_cache_dir()
    idle: queue.Queue[ShapeWorker] = queue.Queue()
    workers = [ShapeWorker(cache_dir) for _ in range(max(1, probes))]
    for worker in workers:
        idle.put(worker)

    def one(problem: Problem) -> tuple[Problem, ShapePlan]:
        worker = idle.get()
        try:
            return problem, resolve(problem, cache_dir, timeout_s, worker)
        finally:
            idle.put(worker)

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(workers), thread_name_prefix="kj-shapes") as pool:
            for done in concurrent.futures.as_completed([pool.submit(one, p) for p in problems]):
                yield done.result()
    finally:
        for worker in workers:
            worker.close()


# ------------------------------------------------------------------------------------------ derivation


class _Prober:
    def __init__(self, worker: ShapeWorker, path: str, timeout_s: float):
        self.worker, self.path, self.timeout_s = worker, path, timeout_s
        self.last_seconds = 0.0

    def __call__(self, overrides: dict[str, Any], cpu: bool = False, unknown_ok: bool = False,
                 flops: bool = True, values: bool = False) -> dict[str, Any]:
        """One probe; `cpu`: also a timed real forward; `unknown_ok`: run on the CPU even when get_inputs()
        cannot be sized without data (asked only at CPU-preset sizes); `flops`: count them; `values`: check
        on the CPU that the output is finite and depends on the inputs."""
        try:
            reply = self.worker.request({"cmd": "probe", "problem_path": self.path, "overrides": overrides,
                                         "cpu": cpu, "cpu_max_bytes": CPU_PROBE_MAX_BYTES, "flops": flops,
                                         "cpu_unknown_ok": unknown_ok, "values": values,
                                         "values_max_bytes": VALUES_MAX_BYTES}, self.timeout_s)
        except lint.WorkerFailure as exc:
            raise _ProbeFailed(str(exc).replace("lint worker", "shape probe")) from None
        if reply.get("status") != "ok":
            raise _ProbeFailed(f"the probe answered {str(reply.get('message', reply))[:300]}")
        self.last_seconds = float(reply.get("seconds") or 0.0)
        return reply


def _derive(problem: Problem, scan: Scan, roles: dict[str, R.Role], known: dict[str, Any],
            probe: _Prober) -> ShapePlan:
    notes = [f"constants: {R.describe(roles, scan)}"]
    measured: dict[str, Any] = {}
    derived: dict[str, Any] = {}
    far: dict[str, dict[str, Any]] = {}
    base = probe({})
    measured["default"] = _summary(base)
    nearby: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if "held_out" not in known:
        if base["ok"]:
            nearby = _held_out(derive.Derivation(scan, roles), base, probe, notes, "held-out", False)
            derived["held_out"] = [o for o, _ in nearby]
        else:
            notes.append(f"held-out: the reference could not be checked at its default shape ({base.get('error')}), "
                         f"so no other shape can be compared with it")
    if base["ok"]:
        listed = listed_variants(known.get("held_out"), nearby, probe, False)
        _far_below(far, "held_out", derive.Derivation(scan, roles), base, listed, probe, notes, False)
    elif "held_out" in known:
        notes.append(f"held-out far below: the reference could not be checked at its default shape "
                     f"({base.get('error')}), none chosen")
    small = known.get("small")
    small_result = None
    if small is None:
        small, small_result = _search_small(derive.Derivation(scan, roles), base, probe, notes)
        if small is not None:
            derived["small"] = small
    if small is not None:
        small_result = small_result or probe(small, cpu=True, unknown_ok=True)
        if not small_result["ok"]:
            notes.append(f"held-out small: the reference did not run at the small preset ({small_result.get('error')})")
        else:
            d = derive.Derivation(scan, roles, small)
            nearby = []
            if "held_out_small" not in known:
                nearby = _held_out(d, small_result, probe, notes, "held-out small", True)
                derived["held_out_small"] = [o for o, _ in nearby]
            listed = listed_variants(known.get("held_out_small"), nearby, probe, True)
            _far_below(far, "held_out_small", d, small_result, listed, probe, notes, True)
    if small_result is not None:
        measured["small"] = _summary(small_result)
    return _plan_from(known, derived, notes, measured, far)


def _held_out(d: derive.Derivation, base: dict[str, Any], probe: _Prober, notes: list[str], what: str,
              cpu: bool) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Candidates the reference accepts with the base's output structure and at most its bytes, each with
    its probe result."""
    kept: list[tuple[dict[str, Any], dict[str, Any]]] = []
    limit = _total(base)
    for variant in d.held_out():
        if len(kept) >= derive.MAX_VARIANTS:
            break
        shown = f"{what} '{variant.label}' {_show(variant.overrides)}"
        result = probe(variant.overrides, cpu=cpu, unknown_ok=cpu, flops=cpu)
        if not result["ok"]:
            notes.append(f"{shown}: dropped, the reference rejects it ({result.get('error')})")
        elif result.get("structure") != base.get("structure"):
            notes.append(f"{shown}: dropped, output structure {result.get('structure')} differs from "
                         f"{base.get('structure')}")
        elif _total(result) > limit:
            notes.append(f"{shown}: dropped, {_mib(_total(result))} is {_total(result) / limit - 1:.2%} more than "
                         f"the {_mib(limit)} of its base shape")
        else:
            kept.append((variant.overrides, result))
            notes.append(f"{shown}: kept ({_mib(_total(result))}, base {_mib(limit)})")
    if not kept:
        notes.append(f"{what}: no candidate kept")
    return kept


def _far_below(far: dict[str, dict[str, Any]], preset: str, d: derive.Derivation, base: dict[str, Any],
               listed: list[Any], probe: _Prober, notes: list[str], small: bool) -> None:
    """far[preset]: the far-below record of a held-out list (kerneljudge.shapes.far_below), when there is one."""
    what = preset.replace("_", "-").replace("-small", " small")
    record = choose(d, base, listed, probe, notes, what, small, slow=probe.last_seconds > SLOW_PROBE_S)
    if record is not None:
        far[preset] = record


def _search_small(d: derive.Derivation, base: dict[str, Any], probe: _Prober,
                  notes: list[str]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Shrink from the default until the probe's counts and a real CPU forward fit the budgets.

    A shape the reference rejects is undone and the size that moved is frozen; a shape that could not be
    checked (no meta forward and too large for the CPU) counts as over budget and shrinking goes on."""
    if not base["ok"] and not base.get("unchecked"):
        notes.append(f"small: the reference fails at its default shape ({base.get('error')})")
        return None, None
    current: dict[derive.Group, int] = {}
    frozen: set[derive.Group] = set()
    result = base
    single = False   # after a rejected multi-step move, move one size at a time to find the culprit
    start = d.small_start()
    moves = [(start, list(start))] if start else []
    for _ in range(MAX_SMALL_ROUNDS):
        if moves:
            new, moved = moves.pop()
            trial = d.overrides(new)
            attempt = probe(trial) if trial is not None else {"ok": False, "error": "a dependent constant failed"}
            if attempt["ok"] or attempt.get("unchecked"):
                current, result = new, attempt
            elif new is start:
                frozen |= set(moved)
                notes.append(f"small: batch sizes at most {derive.SMALL_BATCH} rejected ({attempt.get('error')})")
            elif len(moved) == 1:
                frozen |= set(moved)
            else:
                single = True
            continue
        overrides = d.overrides(current) or {}
        if result["ok"] and "cpu_seconds" not in result and derive.over_budget(result)[0] <= 1:
            result = probe(overrides, cpu=True)
            if not result["ok"] and not result.get("unchecked"):
                notes.append(f"small {_show(overrides)}: the reference fails on the CPU ({result.get('error')})")
                return None, None
        factor, why = _over(result)
        if factor <= 1:
            notes.append(f"small {_show(overrides) or '(the default shape)'}: {_budget_text(result)}")
            return overrides, result
        # a size can enter the over-budget amount cubed (N x N x N matmul FLOPs): log2 / 3 halvings at once
        # never overshoot that, and a round that undershoots costs one more probe; when probes are slow
        # (an RNN's forward on meta runs op by op), fewer rounds matter more than overshooting
        depth = 1 if probe.last_seconds > SLOW_PROBE_S else 3
        times = 1 if single else max(1, math.ceil(math.log2(factor) / depth)) if math.isfinite(factor) else 4
        new, moved = d.halve(current, frozen, times)
        if not moved:
            return _best_effort(overrides, result, why, probe, notes)
        moves.append((new, moved))
    return _best_effort(d.overrides(current) or {}, result, ["the search ran out of rounds"], probe, notes)


def _over(result: dict[str, Any]) -> tuple[float, list[str]]:
    """over_budget() of a probe result; an unchecked shape counts as over, a rejected one as unusable."""
    if result["ok"]:
        return derive.over_budget(result)
    if result.get("unchecked"):
        estimate = result.get("estimate") or result
        if "input_bytes" not in estimate:
            return math.inf, [str(result.get("error"))]
        factor, why = derive.over_budget(estimate)
        return max(factor, 2.0), why or [str(result.get("error"))]
    return math.inf, [str(result.get("error"))]


def _best_effort(overrides: dict[str, Any], result: dict[str, Any], why: list[str], probe: _Prober,
                 notes: list[str]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Nothing smaller is accepted: keep the smallest shape that runs on the CPU, saying what is over."""
    if not overrides:
        notes.append(f"small: no smaller shape found and the default is over budget ({'; '.join(why)})")
        return None, None
    if not result["ok"] or "cpu_seconds" not in result:
        result = probe(overrides, cpu=True, unknown_ok=True)
    if not result["ok"]:
        notes.append(f"small {_show(overrides)}: the reference fails on the CPU ({result.get('error')})")
        return None, None
    over = derive.over_budget(result)[1]
    head = f"over budget, the smallest the sizes allow ({'; '.join(over)}); " if over else ""
    notes.append(f"small {_show(overrides)}: {head}{_budget_text(result)}")
    return overrides, result


# ----------------------------------------------------------------------------------- metadata, cache


def _metadata(problem: Problem, scan: Scan) -> dict[str, Any]:
    """The problem's own presets; where Problem.metadata lacks one that the text assigns with arithmetic
    (`HELD_OUT = [{"vocab": 128256 + 1}]`), the evaluated value."""
    found: dict[str, Any] = {}
    for preset, key in METADATA_KEYS.items():
        value = problem.metadata.get(key, scan.others.get(key))
        if preset == "small" and isinstance(value, dict):
            found[preset] = dict(value)
        elif preset != "small" and isinstance(value, list) and all(isinstance(v, dict) for v in value):
            found[preset] = [dict(v) for v in value]
    return found


def _plan_from(known: dict[str, Any], derived: dict[str, Any], notes: list[str],
               measured: dict[str, Any] | None = None, far: dict[str, dict[str, Any]] | None = None) -> ShapePlan:
    """Metadata where the problem has it, else what was derived ("small" may be {}: the default fits); a
    derived far-below variant (far[preset]["overrides"]) is appended to its held-out list."""
    values = {p: known[p] if p in known else derived.get(p) for p in PRESETS}
    far_below: dict[str, dict[str, Any]] = {}
    for preset, record in (far or {}).items():
        record = dict(record)
        appended = record.pop("overrides", None)
        if appended is not None:
            values[preset] = list(values[preset] or []) + [appended]
        far_below[preset] = record

    def source(preset: str) -> str:
        if preset in known:
            return "metadata"
        return "derived" if values[preset] or (preset == "small" and preset in derived) else "none"

    return ShapePlan(small=dict(values["small"] or {}), held_out=list(values["held_out"] or []),
                     held_out_small=list(values["held_out_small"] or []), source={p: source(p) for p in PRESETS},
                     notes=list(notes), measured=dict(measured or {}), far_below=far_below)


def cache_key(text: str) -> str:
    from importlib import metadata

    try:
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch_version = None
    budgets = [derive.SMALL_INPUT_BYTES, derive.SMALL_IO_BYTES, derive.SMALL_PARAM_BYTES, derive.SMALL_FLOPS,
               derive.SMALL_CPU_SECONDS, derive.MAX_VARIANTS]
    material = [DERIVE_VERSION, sha256_text(text), torch_version, budgets]
    return hashlib.sha256(json.dumps(material).encode()).hexdigest()[:32]


def _cache_path(cache_dir: str, text: str) -> Path:
    return Path(cache_dir) / "shapes" / f"{cache_key(text)}.json"


def _store(path: Path, plan: ShapePlan) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(plan.to_json())
        os.replace(tmp, path)
    except OSError:
        pass   # a cache that cannot be written only costs a probe next time


# -------------------------------------------------------------------------------------------- display


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    keys = ("ok", "mode", "error", "input_bytes", "param_bytes", "output_bytes", "output_shapes", "flops",
            "cpu_seconds", "cpu_first_seconds")
    return {k: result[k] for k in keys if k in result}


def _budget_text(result: dict[str, Any]) -> str:
    inputs = result.get("input_bytes") or [0]
    text = (f"largest input {_mib(max(inputs))}, inputs + outputs "
            f"{_mib(sum(inputs) + sum(result.get('output_bytes') or []))}, parameters "
            f"{_mib(result.get('param_bytes') or 0)}, {(result.get('flops') or 0) / 1e6:.3g} MFLOP")
    if result.get("cpu_seconds") is not None:
        text += (f", CPU forward {result['cpu_seconds'] * 1e3:.3g} ms "
                 f"(first call {result['cpu_first_seconds'] * 1e3:.3g} ms)")
    return text


def _mib(n: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20)):
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{n / 1024:.4g} KiB"
