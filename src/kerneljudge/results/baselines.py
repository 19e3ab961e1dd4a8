"""Baselines other than eager for report and compare: the same `--baseline` specs `kerneljudge score` takes
(cli/generate.py reads them; this only loops over the specs)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from kerneljudge.results import score

BASELINE_HELP = ("[NAME=]FILE (JSON object problem_id -> ms), or 'compile' / 'eager' for the packaged H200 "
                 "torch.compile / eager reference times (as `kerneljudge score --baseline`). Repeatable")


def load_baselines(specs: Sequence[str], rows: Iterable[Mapping[str, Any]] = ()) -> dict[str, dict[str, float]]:
    """name -> {problem_id: ms} for each spec; ValueError for one that cannot be read. Warns on stderr, as
    score does, when packaged H200 times meet a run judged elsewhere."""
    from kerneljudge.cli.generate import _packaged_baseline, _read_baseline, _warn_other_machine

    rows = list(rows)
    out: dict[str, dict[str, float]] = {}
    for spec in specs:
        if spec in ("compile", "eager") and not Path(spec).exists():
            name, table, data = _packaged_baseline(spec)
            _warn_other_machine(rows, data)
        else:
            name, table = _read_baseline(spec)
        out[name] = table
        lacking = sorted({score.problem_of(r) for r in rows} - set(table))
        if lacking:
            print(f"kerneljudge: baseline {name} has no time for {len(lacking)} problem(s) ({', '.join(lacking[:3])}"
                  f"{' ...' if len(lacking) > 3 else ''}): they count as not faster against it", file=sys.stderr)
    return out
