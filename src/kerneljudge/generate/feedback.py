"""Refinement feedback: what a model is told about its previous solution, from the judge's verdict.

    feedback_from_verdict(verdict, profile=None, hidden_shapes=None) -> dict    the report's data, secrets removed
    feedback_no_code(note) -> dict               the same shape, for a reply without usable code
    render_feedback(feedback) -> str             the report as text, for the refinement prompt
    bound_excerpt(text, max_chars=2400) -> str   an error log cut down to its telling lines

What is hidden from the judge's text (seeds, held-out shapes) is decided in redaction.py; which backend's error
a log shows (a CuPy/NVRTC compile error, a Numba TypingError, a Helion InvalidConfig, ...) in backend_errors.py.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Iterable, Mapping, Sequence

from kerneljudge.generate.backend_errors import ERROR_MARKERS, classify_error
from kerneljudge.generate.redaction import redact_held_out_reason, redact_seeds, redactor
from kerneljudge.generate.templates import fenced

_DIFFERS_AT = re.compile(r"output differs at (\[[^\]]*\]|\S+): got (\S+), expected (\S+) "
                         r"\(\|err\| (\S+) > allowed ([^)\s]+)\)")
_REL_L2 = re.compile(r"relative L2 error (\S+) exceeds (\S+)")
_TRIAL = re.compile(r"^(trial \d+):\s*")


def finite(x: Any) -> bool:
    """Whether x is a finite int or float (not a bool)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def bound_excerpt(text: str, max_chars: int = 2400, max_line_chars: int = 300) -> str:
    """At most about max_chars of an error log: lines that report errors (with a little context) and the
    last lines first, then the first lines; gaps are marked with the number of lines left out."""
    text = (text or "").replace("\r\n", "\n").strip("\n")
    if not text:
        return ""
    lines = [ln if len(ln) <= max_line_chars else ln[:max_line_chars - 40] + " [...] " + ln[-33:]
             for ln in text.split("\n")]
    if sum(len(ln) + 1 for ln in lines) <= max_chars:
        return "\n".join(lines)
    order: list[int] = list(range(len(lines) - 1, max(len(lines) - 6, -1), -1))   # the last 5 lines
    for i, ln in enumerate(lines):
        if ERROR_MARKERS.search(ln):
            order += [j for j in (i - 1, i, i + 1, i + 2) if 0 <= j < len(lines)]
    order += list(range(len(lines)))
    keep: set[int] = set()
    used = 60   # room for the gap markers
    for i in order:
        if i in keep:
            continue
        cost = len(lines[i]) + 1
        if used + cost > max_chars:
            continue
        keep.add(i)
        used += cost
    out: list[str] = []
    skipped = 0
    for i, ln in enumerate(lines):
        if i in keep:
            if skipped:
                out.append(f"[... {skipped} lines left out ...]")
                skipped = 0
            out.append(ln)
        else:
            skipped += 1
    if skipped:
        out.append(f"[... {skipped} lines left out ...]")
    return "\n".join(out)


def _number(text: str) -> float | None:
    try:
        return float(text.rstrip(",;"))
    except ValueError:
        return None


def _mismatch(verdict: Mapping[str, Any], reason: str, hidden: bool) -> dict[str, Any] | None:
    if verdict.get("verdict") != "wrong_output":
        return None
    info: dict[str, Any] = {"kind": "other", "at_hidden_shape": hidden}
    trial = _TRIAL.match(reason)
    if trial:
        info["where"] = trial.group(1)
    elif hidden:
        info["where"] = "a shape not shown to you"
    m = _DIFFERS_AT.search(reason)
    if m:
        info["kind"] = "values"
        if not hidden and m.group(1).startswith("["):
            info["index"] = [int(x) for x in re.findall(r"-?\d+", m.group(1))]
        info.update(got=_number(m.group(2)), expected=_number(m.group(3)), abs_err=_number(m.group(4)),
                    allowed=_number(m.group(5)))
    elif (m := _REL_L2.search(reason)):
        info.update(kind="rel_l2", rel_l2=_number(m.group(1)), rel_l2_allowed=_number(m.group(2)))
    elif "output shape" in reason:
        info["kind"] = "shape"
    elif "dtype" in reason:
        info["kind"] = "dtype"
    elif "NaN/Inf" in reason:
        info["kind"] = "nonfinite"
    elif "structure" in reason:
        info["kind"] = "structure"
    elif "elements differ" in reason:
        info["kind"] = "integer_values"
    info["detail"] = reason
    return info


_PROFILE_SUMMARY_CLASSES = ("total", "error")   # Verdict.profile rows that are no kernel


def _profile_rows(profile: Iterable[Any] | None, limit: int,
                  clean: Callable[[str], str] = lambda s: s) -> list[dict[str, Any]]:
    """Top kernels by time from (name, ms) pairs, dicts with kernel/name and ms/time_ms, or Verdict.profile
    rows ({name, class, device_us, calls, share}); the judge's share and class are kept when given."""
    rows: list[tuple[str, float, Any, Any]] = []
    for item in profile or []:
        share = kind = None
        if isinstance(item, Mapping):
            if item.get("class") in _PROFILE_SUMMARY_CLASSES:
                continue
            name = item.get("kernel", item.get("name"))
            ms = next((item[k] for k in ("ms", "time_ms", "time", "self_ms", "cuda_time_ms") if k in item), None)
            if ms is None and "device_us" in item:
                try:
                    ms = float(item["device_us"]) / 1000.0
                except (TypeError, ValueError):
                    continue
            share = item.get("share") if finite(item.get("share")) else None
            kind = str(item["class"]) if isinstance(item.get("class"), str) else None
        else:
            try:
                name, ms = item[0], item[1]
            except (TypeError, IndexError, KeyError):
                continue
        try:
            ms = float(ms)
        except (TypeError, ValueError):
            continue
        if name is None or not math.isfinite(ms):
            continue
        name = clean(str(name))
        rows.append((name if len(name) <= 160 else name[:157] + "...", ms, share, kind))
    total = sum(ms for _, ms, _, _ in rows)
    rows.sort(key=lambda r: -r[1])
    out = []
    for n, ms, share, kind in rows[:limit]:
        row: dict[str, Any] = {"kernel": n, "ms": ms,
                               "share": share if share is not None else (ms / total) if total > 0 else None}
        if kind:
            row["class"] = kind
        out.append(row)
    return out


def _finding_dict(f: Any) -> dict[str, Any]:
    d = f.to_dict() if hasattr(f, "to_dict") else dict(f)
    return {"line": d.get("line"), "code": d.get("code", ""), "message": str(d.get("message", ""))[:400],
            "blocking": bool(d.get("blocking", False))}


def feedback_from_verdict(verdict: Mapping[str, Any], profile: Sequence[Any] | None = None, *,
                          hidden_shapes: Iterable[Mapping[str, Any]] | None = None,
                          max_excerpt_chars: int = 2400, max_findings: int = 20,
                          max_profile: int = 10) -> dict[str, Any]:
    """What the model is told about its previous solution, from a Verdict dict (Verdict.to_dict()).

    Returns a JSON-able dict:
      verdict, accepted        as judged
      reason                   the judge's one-line reason, secrets removed
      error_excerpt            build/runtime error output, bounded (bound_excerpt), secrets removed; "" if none
      error                    the kind of error the output shows, named for its backend (backend_errors.py):
                               {kind, backend, headline, diagnostic, hint}; None when not recognised or correct
      mismatch                 for wrong_output: {kind: values|rel_l2|shape|dtype|nonfinite|structure|
                               integer_values|other, where, index, got, expected, abs_err, allowed, rel_l2,
                               at_hidden_shape, detail}; None otherwise (index only at a shown shape)
      rel_l2                   the worst relative L2 error of a correct solution, when known
      speedup, ref_ms, sol_ms  timing at the benchmark shape (None when not timed)
      flags                    the judge's flags
      findings                 static-analysis findings [{line, code, message, blocking}], at most max_findings
      findings_left_out        how many more there were
      profile                  [{kernel, ms, share, class?}] top max_profile by time, from `profile` (or, when
                               None, the verdict's own `profile`, Verdict.profile rows): (name, ms) pairs or
                               dicts with kernel/name and ms/time_ms/device_us; class is the judge's
                               (custom, library_compute, allowed, other) where it gave one
    Never included: seeds, the solution/problem paths, held-out shapes (see redaction.py).
    """
    raw_reason = str(verdict.get("reason") or "")
    reason, hidden = redact_held_out_reason(raw_reason)
    clean = redactor(hidden_shapes)
    reason = clean(reason)
    raw_excerpt = clean(str(verdict.get("error_excerpt") or ""))
    excerpt = clean(bound_excerpt(str(verdict.get("error_excerpt") or ""), max_excerpt_chars))
    error = None
    if verdict.get("verdict") not in ("correct", "unjudgeable"):
        error = classify_error(raw_excerpt) or classify_error(reason)
    findings = [_finding_dict(f) for f in verdict.get("findings") or []]
    for f in findings:
        f["message"] = clean(f["message"])
    max_error = verdict.get("max_error") or {}
    rel_l2 = max_error.get("rel_l2") if isinstance(max_error, Mapping) else None
    return {
        "verdict": str(verdict.get("verdict", "")),
        "accepted": bool(verdict.get("accepted", False)),
        "reason": reason,
        "error_excerpt": excerpt,
        "error": error,
        "mismatch": _mismatch(verdict, reason, hidden),
        "rel_l2": rel_l2 if finite(rel_l2) and verdict.get("verdict") == "correct" else None,
        "speedup": verdict.get("speedup") if finite(verdict.get("speedup")) else None,
        "ref_ms": verdict.get("ref_ms") if finite(verdict.get("ref_ms")) else None,
        "sol_ms": verdict.get("sol_ms") if finite(verdict.get("sol_ms")) else None,
        "flags": [str(f) for f in verdict.get("flags") or []],
        "findings": findings[:max_findings],
        "findings_left_out": max(0, len(findings) - max_findings),
        "profile": _profile_rows(profile if profile is not None else verdict.get("profile"), max_profile, clean),
    }


def feedback_no_code(note: str) -> dict[str, Any]:
    """Feedback for a reply from which no solution could be extracted (extract.Extraction.note)."""
    return {
        "verdict": "no_code", "accepted": False,
        "reason": f"no solution could be taken from the reply ({redact_seeds(str(note))}); answer with the "
                  "complete file in one ```python block that defines class ModelNew",
        "error_excerpt": "", "error": None, "mismatch": None, "rel_l2": None, "speedup": None, "ref_ms": None,
        "sol_ms": None, "flags": [], "findings": [], "findings_left_out": 0, "profile": [],
    }


_PROFILE_CLASS_WORDS = {
    "custom": "your code",
    "library_compute": "library compute, not your kernel",
    "allowed": "allocation or copy",
    "other": "not recognised",
}

_VERDICT_WORDS = {
    "no_code": "no usable code in the reply",
    "correct": "correct",
    "wrong_output": "wrong output",
    "build_error": "failed to build",
    "runtime_error": "failed while running",
    "timeout": "ran out of time",
    "rejected": "rejected",
    "unjudgeable": "not judged (the problem's reference cannot tell right from wrong)",
}


def render_feedback(feedback: Mapping[str, Any]) -> str:
    """The judge's report as text, for the refinement prompt."""
    verdict = str(feedback.get("verdict", ""))
    accepted = "accepted" if feedback.get("accepted") else "not accepted"
    parts = [f"Verdict: {_VERDICT_WORDS.get(verdict, verdict)} ({accepted})."]
    if feedback.get("reason"):
        parts.append(f"Reason: {feedback['reason']}")
    mismatch = feedback.get("mismatch")
    if mismatch and mismatch.get("kind") == "values":
        where = f" at index {mismatch['index']}" if mismatch.get("index") is not None else ""
        shape = " (at a shape not shown to you)" if mismatch.get("at_hidden_shape") else ""
        parts.append(f"Mismatch{shape}: the worst element{where} is {mismatch.get('got')} where "
                     f"{mismatch.get('expected')} was expected (|error| {mismatch.get('abs_err')}, allowed "
                     f"{mismatch.get('allowed')}).")
    elif mismatch and mismatch.get("kind") == "rel_l2":
        parts.append(f"Mismatch: relative L2 error {mismatch.get('rel_l2')} where {mismatch.get('rel_l2_allowed')} "
                     "is allowed (too much precision lost, or an output that is constant or zero).")
    error = feedback.get("error")
    if error:
        lines = [f"Error: {error.get('kind')}: {error.get('headline')}"]
        if error.get("diagnostic") and error.get("diagnostic") != error.get("headline"):
            lines.append(f"First compiler error: {error['diagnostic']}")
        if error.get("hint"):
            lines.append(f"Where to look: {error['hint']}.")
        parts.append("\n".join(lines))
    if feedback.get("error_excerpt"):
        parts.append("Error output (excerpt):\n" + fenced(feedback["error_excerpt"], "text"))
    findings = feedback.get("findings") or []
    if findings:
        lines = [f"- line {f.get('line')} [{f.get('code')}{', blocks acceptance' if f.get('blocking') else ''}]: "
                 f"{f.get('message')}" for f in findings]
        if feedback.get("findings_left_out"):
            lines.append(f"- ... and {feedback['findings_left_out']} more")
        parts.append("Static analysis of your source:\n" + "\n".join(lines))
    flags = feedback.get("flags") or []
    if flags:
        parts.append("Flags: " + ", ".join(flags))
    speedup = feedback.get("speedup")
    if finite(speedup):
        times = ""
        if finite(feedback.get("ref_ms")) and finite(feedback.get("sol_ms")):
            times = f" (reference {feedback['ref_ms']:.4g} ms, yours {feedback['sol_ms']:.4g} ms)"
        relation = "faster than" if speedup > 1 else "slower than" if speedup < 1 else "as fast as"
        parts.append(f"Speed: {speedup:.3g}x, {relation} the PyTorch reference{times}.")
    if finite(feedback.get("rel_l2")):
        parts.append(f"Accuracy: worst relative L2 error {feedback['rel_l2']:.3g}.")
    profile = feedback.get("profile") or []
    if profile:
        lines = [f"- {p['kernel']}: {p['ms']:.4g} ms"
                 + (f" ({100 * p['share']:.0f}%)" if finite(p.get("share")) else "")
                 + (f" [{_PROFILE_CLASS_WORDS.get(p['class'], p['class'])}]" if p.get("class") else "")
                 for p in profile]
        parts.append("Profile of your solution (kernels by time):\n" + "\n".join(lines))
    return "\n\n".join(parts)
