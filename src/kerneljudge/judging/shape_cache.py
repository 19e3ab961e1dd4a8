"""The cache of derived shape plans: cache_dir/shapes/<key>.json, written atomically here and nowhere else.

The key covers the problem text's sha256, the held-out mode (aligned, general or none: each gives other
shapes), the device memory budget a preset may have been fitted to (None: none given), the torch version,
DERIVE_VERSION and the derivation's budgets, so a change to any of them derives the plan again. A cache that
cannot be read or written only costs a probe.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from kerneljudge.core import atomic_file
from kerneljudge.core.problem import sha256_text
from kerneljudge.shapes import derive
from kerneljudge.shapes.plan import PlanError, ShapePlan

DERIVE_VERSION = 5                  # bump when derivation or budgets change: invalidates cached plans


def cache_key(text: str, mode: str, memory_budget: int | None = None) -> str:
    from importlib import metadata

    try:
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch_version = None
    budgets = [derive.SMALL_INPUT_BYTES, derive.SMALL_IO_BYTES, derive.SMALL_PARAM_BYTES, derive.SMALL_FLOPS,
               derive.SMALL_CPU_SECONDS, derive.MAX_VARIANTS]
    material = [DERIVE_VERSION, sha256_text(text), mode, memory_budget, torch_version, budgets]
    return hashlib.sha256(json.dumps(material).encode()).hexdigest()[:32]


def plan_path(cache_dir: str, text: str, mode: str, memory_budget: int | None = None) -> Path:
    """Where the plan of the problem with this text, for this held-out mode and memory budget, is cached."""
    return Path(cache_dir) / "shapes" / f"{cache_key(text, mode, memory_budget)}.json"


def load_plan(path: Path) -> ShapePlan | None:
    """The cached plan, or None when there is none or it cannot be read."""
    try:
        return ShapePlan.from_json(path.read_text())
    except (OSError, PlanError):
        return None


def store_plan(path: Path, plan: ShapePlan) -> None:
    try:
        atomic_file.write_text(path, plan.to_json())
    except OSError:
        pass   # a cache that cannot be written only costs a probe next time
