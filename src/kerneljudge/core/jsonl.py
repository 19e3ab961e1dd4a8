"""Reading the append-only JSONL logs the judge, bench and baselines write (one JSON object a line)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def read_objects(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The JSON objects of a log; a line torn by a crash, or anything but an object, is skipped."""
    p = Path(path)
    if not p.exists():
        return []
    rows = []
    with p.open("r", encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                rows.append(row)
    return rows
