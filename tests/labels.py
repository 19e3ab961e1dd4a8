"""Reads the label comments at the top of fixture and example solutions (see tests/fixtures/README.md)."""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

_LABEL = re.compile(r"^#\s*(expect|expect-lenient|problem|needs|flags|why|threat)\s*:\s*(.+?)\s*$")


@dataclass(frozen=True)
class Labelled:
    path: Path
    expect: str
    expect_lenient: str | None
    problem: str | None
    needs: frozenset[str]
    threat: str | None
    flags: frozenset[str] = frozenset()   # flags the verdict must carry (a blocking one: not accepted)


# `# needs:` words that name a library (a solution backend's) and the module that must be importable for it
# (top-level names where a submodule would make find_spec import a heavy parent: cutlass loads MLIR)
LIBRARIES = {"cupy": "cupy", "cuda_core": "cuda.core", "numba": "numba", "helion": "helion", "cute": "cutlass",
             "tilelang": "tilelang"}


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):   # a parent package missing or broken
        return False


def missing_libraries(case: Labelled) -> list[str]:
    """The libraries `case` needs (`# needs: cuda,cupy`) that this Python cannot import, sorted."""
    return sorted(n for n in case.needs if n in LIBRARIES and not _importable(LIBRARIES[n]))


def skip_reason(case: Labelled) -> str | None:
    """"needs cupy" (and so on) when a library the case needs is missing here, else None."""
    missing = missing_libraries(case)
    return f"needs {', '.join(missing)}" if missing else None


def read_labels(path: Path) -> Labelled | None:
    found: dict[str, str] = {}
    for line in path.read_text().splitlines()[:20]:
        m = _LABEL.match(line.strip())
        if m:
            found[m.group(1)] = m.group(2)
    if "expect" not in found:
        return None
    needs = frozenset(n.strip() for n in found.get("needs", "").split(",") if n.strip())
    flags = frozenset(f.strip() for f in found.get("flags", "").split(",") if f.strip())
    lenient = found.get("expect-lenient")
    return Labelled(path, found["expect"].split()[0], lenient.split()[0] if lenient else None,
                    found.get("problem"), needs, found.get("threat"), flags)


def collect(folder: Path) -> list[Labelled]:
    return [lab for f in sorted(folder.glob("*.py")) if (lab := read_labels(f)) is not None]
