"""A problem's own shape presets, and the ShapePlan made of them and of what was derived.

Metadata wins: a problem's SMALL / HELD_OUT / HELD_OUT_SMALL are used as they are; a derived preset fills
only what the problem lacks, and a far-below variant is appended to its held-out list.
"""

from __future__ import annotations

from typing import Any

from kerneljudge.core.problem import Problem
from kerneljudge.shapes.plan import PRESETS, ShapePlan
from kerneljudge.shapes.scan import Scan

METADATA_KEYS = {"small": "SMALL", "held_out": "HELD_OUT", "held_out_small": "HELD_OUT_SMALL"}


def metadata_presets(problem: Problem, scan: Scan) -> dict[str, Any]:
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


def assemble_plan(known: dict[str, Any], derived: dict[str, Any], notes: list[str],
                  measured: dict[str, Any] | None = None, far: dict[str, dict[str, Any]] | None = None,
                  fitted: dict[str, Any] | None = None) -> ShapePlan:
    """Metadata where the problem has it, else what was derived ("small" may be {}: the default fits); a
    derived far-below variant (far[preset]["overrides"]) is appended to its held-out list; `fitted`: the
    preset fitted to a device's memory, if any (shapes/fit.py)."""
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
                     notes=list(notes), measured=dict(measured or {}), far_below=far_below,
                     fitted=dict(fitted or {}))
