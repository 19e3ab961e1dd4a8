"""Derive what a problem's metadata lacks: its small (CPU) preset, held-out shapes and far-below variants.

Candidates come from the problem's size constants (kerneljudge.shapes.derive); each is checked through a
probe of the reference (judging/shapes.py runs it in a trusted child). Every held-out list also gets a variant
far below its base shape (threat B13, kerneljudge.shapes.far_below), appended unless a listed one already has
FAR_BELOW_RATIO times fewer input elements. The result is a ShapePlan whose notes say what was kept and why.
The held-out mode decides the rule (aligned or general, kerneljudge.shapes.derive); with `none` only the small
preset is derived and the plan lists no held-out shapes, the problem's own included. Given a device memory budget
(bytes one judgement may need), a problem whose default shape needs more is given a fitted preset that fits
(kerneljudge.shapes.fit), and its held-out shapes are derived from that preset.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from kerneljudge.core.problem import Problem
from kerneljudge.shapes import derive
from kerneljudge.shapes import roles as R
from kerneljudge.shapes.far_below import choose, listed_variants
from kerneljudge.shapes.far_below import show as _show
from kerneljudge.shapes.far_below import total_bytes as _total
from kerneljudge.shapes.fit import fit_overrides
from kerneljudge.shapes.plan import ShapePlan
from kerneljudge.shapes.scan import Scan
from kerneljudge.judging.reference import estimated_need
from kerneljudge.judging.shape_presets import assemble_plan
from kerneljudge.judging.shape_report import budget_text, measured_summary, mib

NO_HELD_OUT = "none"                # the held-out mode that checks only the benchmark shape
MAX_SMALL_ROUNDS = 40               # probes spent searching for the small preset
SLOW_PROBE_S = 2.0                  # a probe slower than this makes the small search take bigger steps


class Probe(Protocol):
    """One probe of the reference at some overrides (judging/shapes.py's Prober), and how long the last took."""

    last_seconds: float

    def __call__(self, overrides: dict[str, Any], cpu: bool = False, unknown_ok: bool = False,
                 flops: bool = True, values: bool = False, activations: bool = False) -> dict[str, Any]: ...


def derive_plan(problem: Problem, scan: Scan, roles: dict[str, R.Role], known: dict[str, Any],
                probe: Probe, mode: str = derive.ALIGNED, budget: int | None = None) -> ShapePlan:
    """The plan: `known` (the problem's own presets) where it has them, the rest derived with `probe`, the
    held-out shapes by the rule of `mode` (aligned | general | none); with `budget` (bytes one judgement may
    need on the device), a fitted preset where the default shape needs more."""
    notes = [f"constants: {R.describe(roles, scan)}", held_out_note(mode)]
    if mode == NO_HELD_OUT:
        known = {k: v for k, v in known.items() if k == "small"}
    held = mode != NO_HELD_OUT
    rule = derive.GENERAL if mode == derive.GENERAL else derive.ALIGNED
    measured: dict[str, Any] = {}
    derived: dict[str, Any] = {}
    far: dict[str, dict[str, Any]] = {}
    base = probe({}, activations=budget is not None)
    measured["default"] = measured_summary(base)
    # the shape judged at full scale: the default, or the preset fitted to the budget, with its probe result
    fitted, top, top_result = _fitted(derive.Derivation(scan, roles, mode=rule), base, budget, probe, notes)
    if fitted:
        measured["fitted"] = measured_summary(top_result)
        if "held_out" in known:
            notes.append("held-out: the problem's own HELD_OUT is at its default scale, which does not fit; "
                         "derived from the fitted preset instead")
            known = {k: v for k, v in known.items() if k != "held_out"}
    nearby: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if held and "held_out" not in known:
        if top_result["ok"]:
            d = derive.Derivation(scan, roles, top, mode=rule)
            nearby = _held_out(d, top_result, probe, notes, "held-out", False)
            derived["held_out"] = [o for o, _ in nearby]
        else:
            notes.append(f"held-out: the reference could not be checked at its default shape ({base.get('error')}), "
                         f"so no other shape can be compared with it")
    if held and top_result["ok"]:
        listed = listed_variants(known.get("held_out"), nearby, probe, False)
        _far_below(far, "held_out", derive.Derivation(scan, roles, top, mode=rule), top_result, listed, probe,
                   notes, False)
    elif "held_out" in known:
        notes.append(f"held-out far below: the reference could not be checked at its default shape "
                     f"({base.get('error')}), none chosen")
    small = known.get("small")
    small_result = None
    if small is None:
        small, small_result = _search_small(derive.Derivation(scan, roles), base, probe, notes)
        if small is not None:
            derived["small"] = small
    if small is not None and held:
        small_result = small_result or probe(small, cpu=True, unknown_ok=True)
        if not small_result["ok"]:
            notes.append(f"held-out small: the reference did not run at the small preset ({small_result.get('error')})")
        else:
            d = derive.Derivation(scan, roles, small, mode=rule)
            nearby = []
            if "held_out_small" not in known:
                nearby = _held_out(d, small_result, probe, notes, "held-out small", True)
                derived["held_out_small"] = [o for o, _ in nearby]
            listed = listed_variants(known.get("held_out_small"), nearby, probe, True)
            _far_below(far, "held_out_small", d, small_result, listed, probe, notes, True)
    if small_result is not None:
        measured["small"] = measured_summary(small_result)
    return assemble_plan(known, derived, notes, measured, far, fitted)


def judgement_need(result: dict[str, Any]) -> int | None:
    """A judgement's device memory at a probed shape, as the judge estimates it before the reference has run
    there (judging/reference.estimated_need: each side's weights, and a number of inputs' worth, an input's worth
    being the larger of the inputs and the largest tensor the forward makes); None when nothing is known."""
    return estimated_need({"model_bytes": int(result.get("param_bytes") or 0),
                           "input_bytes": sum(result.get("input_bytes") or []),
                           "activation_bytes": int(result.get("activation_bytes") or 0)})


def _fitted(d: derive.Derivation, base: dict[str, Any], budget: int | None, probe: Probe,
            notes: list[str]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(the fitted preset's record, its overrides, its probe result) where the default shape's judgement needs
    more than `budget`; else ({}, {}, the default's probe result)."""
    if budget is None or not base["ok"]:
        return {}, {}, base
    found = fit_overrides(d, base, budget, judgement_need, probe, notes)
    if found is None:
        return {}, {}, base
    record, result = found
    return record, dict(record["overrides"]), result


def held_out_note(mode: str) -> str:
    """The plan's note on which rule made its held-out shapes."""
    if mode == NO_HELD_OUT:
        return "held-out shapes: none (--held-out none: only the benchmark shape is checked)"
    if mode == derive.ALIGNED:
        return ("held-out shapes: aligned (a power of two stays a power of two, other sizes keep their "
                "power-of-two factor up to 128)")
    return "held-out shapes: general (odd sizes)"


def _held_out(d: derive.Derivation, base: dict[str, Any], probe: Probe, notes: list[str], what: str,
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
            notes.append(f"{shown}: dropped, {mib(_total(result))} is {_total(result) / limit - 1:.2%} more than "
                         f"the {mib(limit)} of its base shape")
        else:
            kept.append((variant.overrides, result))
            notes.append(f"{shown}: kept ({mib(_total(result))}, base {mib(limit)})")
    if not kept:
        notes.append(f"{what}: no candidate kept")
    return kept


def _far_below(far: dict[str, dict[str, Any]], preset: str, d: derive.Derivation, base: dict[str, Any],
               listed: list[Any], probe: Probe, notes: list[str], small: bool) -> None:
    """far[preset]: the far-below record of a held-out list (kerneljudge.shapes.far_below), when there is one."""
    what = preset.replace("_", "-").replace("-small", " small")
    record = choose(d, base, listed, probe, notes, what, small, slow=probe.last_seconds > SLOW_PROBE_S)
    if record is not None:
        far[preset] = record


def _search_small(d: derive.Derivation, base: dict[str, Any], probe: Probe,
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
            notes.append(f"small {_show(overrides) or '(the default shape)'}: {budget_text(result)}")
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


def _best_effort(overrides: dict[str, Any], result: dict[str, Any], why: list[str], probe: Probe,
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
    notes.append(f"small {_show(overrides)}: {head}{budget_text(result)}")
    return overrides, result
