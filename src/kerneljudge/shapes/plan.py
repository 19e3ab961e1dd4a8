"""ShapePlan: the shapes the judge uses for one problem at each preset, and where each came from."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

PRESETS = ("small", "held_out", "held_out_small")
SOURCES = ("metadata", "derived", "none")


class PlanError(ValueError):
    """A stored plan that does not have the expected form."""


@dataclass(frozen=True)
class ShapePlan:
    """Overrides of module constants, as Problem.preset()/held_out() give them for metadata.

    small: the CPU preset ({} = the default shape); held_out / held_out_small: extra shapes the judge checks
    correctness at (at the default and at the small preset); source: for each of the three, "metadata"
    (the problem's own SMALL / HELD_OUT / HELD_OUT_SMALL), "derived" (kerneljudge.shapes) or "none";
    notes: why sizes were chosen or candidates dropped; measured: probe results (bytes, FLOPs, CPU seconds)
    per preset, for reports. far_below: for held_out and held_out_small, which variant is far below its
    base shape (threat B13): {"index": its place in the list, "source": "metadata" (one the problem listed)
    or "derived" (appended), "input_elements": n, "base_input_elements": the base shape's}; a preset is
    missing when no such variant was found (the notes say why). fitted: {} when the problem's default shape fits
    the device memory budget the plan was made for (or none was given); else {"overrides": the preset judged
    instead of the default, "need_bytes", "budget_bytes", "base_need_bytes"} (shapes/fit.py), and held_out then
    holds shapes derived from that preset.
    """

    small: dict[str, Any] = field(default_factory=dict)
    held_out: list[dict[str, Any]] = field(default_factory=list)
    held_out_small: list[dict[str, Any]] = field(default_factory=list)
    source: dict[str, str] = field(default_factory=lambda: {p: "none" for p in PRESETS})
    notes: list[str] = field(default_factory=list)
    measured: dict[str, Any] = field(default_factory=dict)
    far_below: dict[str, dict[str, Any]] = field(default_factory=dict)
    fitted: dict[str, Any] = field(default_factory=dict)

    def held_out_for(self, small: bool) -> list[dict[str, Any]]:
        return [dict(v) for v in (self.held_out_small if small else self.held_out)]

    def far_below_for(self, small: bool) -> dict[str, Any] | None:
        found = self.far_below.get("held_out_small" if small else "held_out")
        return dict(found) if found else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: Any) -> "ShapePlan":
        """Validate and rebuild a plan (raises PlanError), e.g. one read back from the cache."""
        if not isinstance(data, dict):
            raise PlanError("a plan is a JSON object")
        small = data.get("small", {})
        held_out, held_out_small = data.get("held_out", []), data.get("held_out_small", [])
        source, notes, measured = data.get("source", {}), data.get("notes", []), data.get("measured", {})
        if not _overrides(small) or not all(isinstance(v, list) and all(_overrides(o) for o in v)
                                            for v in (held_out, held_out_small)):
            raise PlanError("small must be overrides, held_out and held_out_small lists of overrides")
        if not isinstance(source, dict) or set(source) != set(PRESETS) or not set(source.values()) <= set(SOURCES):
            raise PlanError(f"source must map {', '.join(PRESETS)} to one of {', '.join(SOURCES)}")
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes) or not isinstance(measured, dict):
            raise PlanError("notes must be a list of strings, measured an object")
        far_below = data.get("far_below", {})
        lists = {"held_out": held_out, "held_out_small": held_out_small}
        if not isinstance(far_below, dict) or not all(k in lists and _far_below_ok(v, len(lists[k]))
                                                      for k, v in far_below.items()):
            raise PlanError("far_below must map held_out / held_out_small to {index, source, ...} of a listed variant")
        fitted = data.get("fitted", {})
        if not isinstance(fitted, dict) or (fitted and not _fitted_ok(fitted)):
            raise PlanError("fitted must be {} or {overrides, need_bytes, budget_bytes, ...}")
        return cls(dict(small), [dict(o) for o in held_out], [dict(o) for o in held_out_small], dict(source),
                   list(notes), dict(measured), {k: dict(v) for k, v in far_below.items()}, dict(fitted))

    @classmethod
    def from_json(cls, text: str) -> "ShapePlan":
        try:
            return cls.from_dict(json.loads(text))
        except ValueError as exc:
            raise PlanError(str(exc)) from None


def _far_below_ok(value: Any, listed: int) -> bool:
    if not isinstance(value, dict) or value.get("source") not in ("metadata", "derived"):
        return False
    index = value.get("index")
    return isinstance(index, int) and not isinstance(index, bool) and 0 <= index < listed


def _fitted_ok(value: dict[str, Any]) -> bool:
    sizes = [value.get(k) for k in ("need_bytes", "budget_bytes")]
    return _overrides(value.get("overrides")) and all(isinstance(n, int) and not isinstance(n, bool) for n in sizes)


def _overrides(value: Any) -> bool:
    """Constant name -> int, or list of ints (JSON has no tuples; the judge sends overrides as JSON)."""
    if not isinstance(value, dict):
        return False
    for key, v in value.items():
        items = v if isinstance(v, (list, tuple)) else [v]
        if not isinstance(key, str) or not key.isidentifier() or not items:
            return False
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in items):
            return False
    return True
