"""Readable tables for people; JSON stays the machine format."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from kerneljudge.results import verdict_rows


def _fmt_ms(x: Any) -> str:
    return "-" if x is None else (f"{x:.3f}" if x < 100 else f"{x:.0f}")


def verdict_note(v: dict[str, Any]) -> str:
    """The flags of a correct verdict; the problem outcome's kind and reason of an unjudgeable one; else the reason."""
    if v.get("verdict") == "correct":
        return ", ".join(v.get("flags") or [])
    if verdict_rows.is_unjudgeable(v):
        return f"{verdict_rows.outcome_kind(v)}: {v.get('reason', '')}"
    return v.get("reason", "")


def verdict_table(verdicts: Iterable[dict[str, Any]]) -> str:
    rows = [("problem", "solution", "backend", "verdict", "speedup", "ref ms", "sol ms", "note")]
    for v in verdicts:
        speedup = v.get("speedup")
        note = verdict_note(v)
        rows.append((
            v.get("problem_id", ""), Path(v.get("solution", "")).name, v.get("backend", ""),
            v.get("verdict", "") + ("" if v.get("accepted") or v.get("verdict") != "correct" else " (held)"),
            "-" if speedup is None else f"{speedup:.2f}x", _fmt_ms(v.get("ref_ms")), _fmt_ms(v.get("sol_ms")),
            note if len(note) <= 70 else note[:67] + "...",
        ))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def problem_outcome_text(outcome: dict[str, Any]) -> str:
    """An unjudgeable verdict's problem outcome, and the figures it was decided from, for `eval`."""
    figures = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in sorted((outcome.get("figures") or {}).items()))
    return (f"problem outcome: {outcome.get('kind')}" + (f" ({figures})" if figures else "")
            + "; the problem's reference could not judge, so scores leave this verdict out")


def fast_p_line(verdicts: Iterable[dict[str, Any]]) -> str:
    rows = list(verdicts)
    table = verdict_rows.fast_p_table(rows)
    counts = verdict_rows.verdict_counts(rows)
    parts = "  ".join(f"{k}={v:.2f}" for k, v in table.items())
    tally = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    left = verdict_rows.left_out_line(verdict_rows.left_out(rows))
    return f"{len(rows)} solutions ({tally})\n{parts}" + (f"\n{left}" if left else "")
