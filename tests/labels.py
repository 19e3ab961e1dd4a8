"""Reads the label comments at the top of fixture and example solutions (see tests/fixtures/README.md)."""

from __future__ import annotations

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
