"""Baselines other than eager for report and compare: the same `--baseline` specs `kerneljudge score` takes
(a FILE of problem_id -> ms, or the packaged H200 eager / torch.compile times)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from kerneljudge.results import verdict_rows
from kerneljudge.suite import baselines as B

BASELINE_HELP = ("[NAME=]FILE (JSON object problem_id -> ms), or 'compile' / 'eager' for the packaged H200 "
                 "torch.compile / eager reference times (as `kerneljudge score --baseline`). Repeatable")


def load_baselines(specs: Sequence[str], rows: Iterable[Mapping[str, Any]] = ()) -> dict[str, dict[str, float]]:
    """name -> {problem_id: ms} for each spec; ValueError for one that cannot be read. Warns on stderr, as
    score does, when packaged H200 times meet a run judged elsewhere."""
    rows = list(rows)
    out: dict[str, dict[str, float]] = {}
    for spec in specs:
        if spec in ("compile", "eager") and not Path(spec).exists():
            name, table, data = packaged_baseline(spec)
            warn_other_machine(rows, data)
        else:
            name, table = read_baseline(spec)
        out[name] = table
        lacking = sorted({verdict_rows.problem_of(r) for r in rows} - set(table))
        if lacking:
            print(f"kerneljudge: baseline {name} has no time for {len(lacking)} problem(s) ({', '.join(lacking[:3])}"
                  f"{' ...' if len(lacking) > 3 else ''}): they count as not faster against it", file=sys.stderr)
    return out


def packaged_baseline(kind: str) -> tuple[str, dict[str, float], dict[str, Any]]:
    """The packaged H200 baselines (data/suite/baselines_h200.json) as a baseline table."""
    try:
        data = B.load(B.PACKAGED)
    except B.BaselineError as exc:
        raise ValueError(str(exc)) from None
    name, _ = B.PACKAGED_NAMES[kind]
    table = B.baseline_table(data, kind, eager_fallback=True)
    if not table:
        raise ValueError(f"the packaged baselines ({B.PACKAGED}) hold no {kind} times")
    stand_ins = len(table) - len(B.baseline_table(data, kind))
    print(f"kerneljudge: baseline {name}: packaged {kind} reference times of {len(table)} problems, "
          f"{B.describe(data)}" + (f"; {stand_ins} of them eager times where torch.compile failed or timed out"
                                   if stand_ins else ""), file=sys.stderr)
    return name, table, data


def read_baseline(spec: str) -> tuple[str, dict[str, float]]:
    name, sep, file = spec.partition("=")
    if not sep:
        name, file = Path(spec).stem, spec
    try:
        data = json.loads(Path(file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read baseline {file}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"baseline {file} must be a JSON object problem_id -> ms")
    out: dict[str, float] = {}
    for pid, ms in data.items():
        if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not ms > 0:
            raise ValueError(f"baseline {file}: {pid!r} -> {ms!r} is not a positive number of milliseconds")
        out[str(pid)] = float(ms)
    return name or Path(file).stem, out


def warn_other_machine(rows: list[dict[str, Any]], data: dict[str, Any]) -> None:
    """Speedups against packaged baselines only mean something when the run was judged on that GPU."""
    gpu = str(data.get("machine", {}).get("gpu") or "")
    judged = sorted({str(r["device_name"]) for r in rows if r.get("device_name")})
    other = [d for d in judged if not gpu or gpu.lower() not in d.lower()]
    if other:
        print(f"kerneljudge: warning: the packaged baselines were measured on {gpu or 'an unknown GPU'} but this run "
              f"was judged on {', '.join(other)}; speedups against them compare different machines", file=sys.stderr)
