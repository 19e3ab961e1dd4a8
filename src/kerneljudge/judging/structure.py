"""Is the output description a solution's process sent well formed? Checked before anything uses it.

The description (worker/loading.flatten_output) is nested {"tensor": i} / {"seq": [...]} / {"value": v}
nodes over a list of tensor metas. Plain data, no torch: the orchestrator checks it too.
"""

from __future__ import annotations

from typing import Any


def structure_ok(structure: Any, metas: Any, max_depth: int = 32) -> bool:
    """True when an output description sent by a solution's process is well formed (checked before use)."""
    if not isinstance(metas, list) or not all(_meta_ok(m) for m in metas):
        return False
    seen: list[int] = []

    def walk(node: Any, depth: int) -> bool:
        if depth > max_depth or not isinstance(node, dict) or len(node) != 1:
            return False
        if "tensor" in node:
            index = node["tensor"]
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(metas):
                return False
            seen.append(index)
            return True
        if "seq" in node:
            return isinstance(node["seq"], list) and all(walk(n, depth + 1) for n in node["seq"])
        if "value" in node:
            return node["value"] is None or isinstance(node["value"], (bool, int, float))
        return False

    return walk(structure, 0) and sorted(seen) == list(range(len(metas)))


def _meta_ok(meta: Any) -> bool:
    return (isinstance(meta, dict) and isinstance(meta.get("dtype"), str) and isinstance(meta.get("shape"), list)
            and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in meta["shape"])
            and isinstance(meta.get("nbytes"), int) and meta["nbytes"] >= 0)
