"""A whole profile, classified and summed (`classify`), and the strict rule that judges it (`decide`).
The row-level classes are profile_classes.py's; the rules are described in kernels.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from kerneljudge.analysis.kernel_names import HEADER_LIBRARIES
from kerneljudge.analysis.profile_classes import cpu_op_class, kernel_class, op_class

CLASSES = ("custom", "library_compute", "allowed", "other")

# Strict rejects when library compute carries more than this share of the solution's device time
# (allocation and copies included in the total)...
LIBRARY_SHARE_LIMIT = 0.10
# ...or when library compute alone took at least this fraction of the time, or made at least this fraction
# of the calls, that the reference's own library compute took and made under the same profiler (or, when that
# is unknown, reached this fraction of the reference's median time): a slow decoy, or Python and interpreter
# overhead, cannot dilute it, and counting calls keeps the rule steady where tiny ops make times noisy...
LIBRARY_VS_REFERENCE = 0.50
# ...or when its own kernels carry less than this share of the device time spent on anything but
# allocation and copies (GPU only, and only when the solution's kernel names are known).
CUSTOM_SHARE_MIN = 0.50
# library time below this many microseconds is noise, never a reason to reject
LIBRARY_MIN_US = 2.0
TOP_ROWS = 20          # rows kept in Verdict.profile
NAME_CHARS = 120       # characters of a kernel name kept in Verdict.profile
REMAINDER_NAME = "(solution code outside torch ops)"
LEFT_OUT_NAME = "(small rows the profile left out)"


@dataclass
class Row:
    name: str
    cls: str
    us: float
    calls: int


@dataclass
class Summary:
    device: str                      # "cuda": device time of kernels; "cpu": CPU time of the call
    rows: list[Row] = field(default_factory=list)
    by_class: dict[str, float] = field(default_factory=lambda: {c: 0.0 for c in CLASSES})
    total_us: float = 0.0
    custom_known: bool = False       # the solution's kernel names could be read from its source
    dropped: int = 0                 # rows the child left out (beyond its bound)
    library_calls: int = 0           # library compute ops called by the solution (outermost) / kernels launched
    reference_library_us: Optional[float] = None   # the reference's library compute, same profiler
    reference_library_calls: Optional[int] = None

    def share(self, cls: str) -> float:
        return self.by_class.get(cls, 0.0) / self.total_us if self.total_us > 0 else 0.0

    def custom_share_of_work(self) -> float:
        """The solution's own share of device time spent on anything but allocation and copies."""
        work = self.by_class["custom"] + self.by_class["library_compute"] + self.by_class["other"]
        return self.by_class["custom"] / work if work > 0 else 1.0

    def top(self, cls: str | None = None, n: int = 3) -> list[Row]:
        return [r for r in self.rows if cls is None or r.cls == cls][:n]

    def to_rows(self, limit: int = TOP_ROWS) -> list[dict[str, Any]]:
        """Bounded plain data for Verdict.profile: the top rows by time, then one totals row."""
        out = [{"name": _display(r.name), "class": r.cls, "device_us": round(r.us, 3), "calls": r.calls,
                "share": round(r.us / self.total_us, 4) if self.total_us > 0 else None} for r in self.rows[:limit]]
        out.append({"name": "(total)", "class": "total", "device_us": round(self.total_us, 3),
                    "calls": sum(r.calls for r in self.rows), "share": 1.0, "clock": self.device,
                    **{f"{c}_share": round(self.share(c), 4) for c in CLASSES},
                    "custom_names_known": self.custom_known,
                    "rows_left_out": max(0, len(self.rows) - limit) + self.dropped,
                    "library_calls": self.library_calls, "reference_library_calls": self.reference_library_calls,
                    "reference_library_us": (None if self.reference_library_us is None
                                             else round(self.reference_library_us, 3))})
        return out


class ProfileError(ValueError):
    """The child's profile reply is not usable."""


def _number(x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x < 0:
        raise ProfileError(f"not a time: {x!r}")
    return float(x)


def _display(name: str) -> str:
    s = " ".join(name.split())
    if s.startswith("void "):
        s = s[5:]
    return s if len(s) <= NAME_CHARS else s[: NAME_CHARS - 3] + "..."


def classify(profile: Mapping[str, Any], custom: Iterable[str] = (), libraries: Iterable[str] = ()) -> Summary:
    """Classify the rows of a child's profile (see worker/profiling.py for the format). Raises ProfileError
    when the data is malformed (it came from the solution's process)."""
    if not isinstance(profile, Mapping):
        raise ProfileError("the profile is not an object")
    device = profile.get("device")
    if device not in ("cuda", "cpu"):
        raise ProfileError(f"unknown profile device {device!r}")
    rows = profile.get("rows")
    if not isinstance(rows, list):
        raise ProfileError("the profile has no rows")
    custom_set, libs = frozenset(custom), frozenset(libraries) & frozenset(HEADER_LIBRARIES)
    summary = Summary(device, custom_known=bool(custom_set))
    merged: dict[tuple[str, str], Row] = {}
    op_us = 0.0
    for raw in rows:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str):
            raise ProfileError("a profile row is malformed")
        name = raw["name"][:2000]
        chain = raw.get("chain") or []
        if not isinstance(chain, list) or not all(isinstance(c, str) for c in chain):
            raise ProfileError("a profile row has a malformed op chain")
        us = _number(raw.get("us", 0.0))
        calls = raw.get("calls", 1)
        calls = calls if isinstance(calls, int) and not isinstance(calls, bool) and calls >= 0 else 1
        kind = str(raw.get("kind", "kernel"))
        if device == "cuda":
            cls = kernel_class(name, chain, custom_set, libs, kind)
            summary.library_calls += calls if cls == "library_compute" else 0
        else:
            cls = cpu_op_class(name, chain)
            op_us += us
            outermost = not any(op_class(c) == "library_compute" for c in chain)
            summary.library_calls += calls if cls == "library_compute" and outermost else 0
        row = merged.setdefault((name, cls), Row(name, cls, 0.0, 0))
        row.us += us
        row.calls += calls
    left_out_us = _number(profile.get("left_out_us", 0.0))
    if left_out_us > 0:  # rows the child did not send: unknown, so never counted against the solution
        merged[(LEFT_OUT_NAME, "other")] = Row(LEFT_OUT_NAME, "other", left_out_us, 0)
    if device == "cpu":
        # the call's wall time not spent inside any torch op is the solution's own code
        wall = _number(profile.get("wall_us", 0.0))
        all_ops_us = max(op_us + left_out_us, _number(profile.get("op_us", 0.0)))
        remainder = max(0.0, wall - all_ops_us)
        if remainder > 0:
            merged[(REMAINDER_NAME, "custom")] = Row(REMAINDER_NAME, "custom", remainder, 1)
    summary.rows = sorted(merged.values(), key=lambda r: -r.us)
    for r in summary.rows:
        summary.by_class[r.cls] += r.us
    summary.total_us = sum(summary.by_class.values())
    dropped = profile.get("rows_left_out", 0)
    summary.dropped = dropped if isinstance(dropped, int) and not isinstance(dropped, bool) and dropped > 0 else 0
    return summary


def median_run(summaries: list[Summary]) -> Summary:
    """Of several profiled calls, the one with the median library compute time (noise in both directions)."""
    ordered = sorted(summaries, key=lambda s: s.by_class["library_compute"])
    return ordered[len(ordered) // 2]


def decide(summary: Summary, ref_ms: float | None = None) -> Optional[str]:
    """Why strict must reject this profile, or None. Conservative: only positively recognised library
    compute counts against the solution. `ref_ms`: the reference's median time at the same shape, used when
    `summary.reference_library_us` (the reference profiled the same way) is unknown."""
    if summary.total_us <= 0:
        return None
    library_us = summary.by_class["library_compute"]
    where = "device time" if summary.device == "cuda" else "time of the call"
    top = ", ".join(f"{_display(r.name)[:70]} ({_time(r.us)})" for r in summary.top("library_compute"))
    rule = "Under strict the work must happen in the solution's own kernels"
    if library_us >= LIBRARY_MIN_US and summary.share("library_compute") > LIBRARY_SHARE_LIMIT:
        return (f"library compute carries {100 * summary.share('library_compute'):.0f}% of the solution's {where} "
                f"(more than {100 * LIBRARY_SHARE_LIMIT:.0f}% is not allowed under strict): {top}; "
                f"the solution's own kernels carry {100 * summary.share('custom'):.0f}%. {rule}")
    reference_us, reference_calls = summary.reference_library_us, summary.reference_library_calls
    if library_us >= LIBRARY_MIN_US and reference_us is not None and reference_us >= LIBRARY_MIN_US:
        if library_us >= LIBRARY_VS_REFERENCE * reference_us:
            return (f"library compute took {_time(library_us)} of one call, {100 * library_us / reference_us:.0f}% "
                    f"of what the PyTorch reference's own library compute takes ({_time(reference_us)}): {top}. {rule}")
        if reference_calls and summary.library_calls >= LIBRARY_VS_REFERENCE * reference_calls:
            what = "kernels" if summary.device == "cuda" else "ops"
            return (f"the solution ran {summary.library_calls} library compute {what} in one call, where the PyTorch "
                    f"reference runs {reference_calls}: {top}. {rule}")
    elif library_us >= LIBRARY_MIN_US and isinstance(ref_ms, (int, float)) and ref_ms > 0 \
            and library_us >= LIBRARY_VS_REFERENCE * ref_ms * 1000:
        return (f"library compute took {_time(library_us)} of one call, {library_us / (ref_ms * 10):.0f}% of the "
                f"PyTorch reference's whole time ({ref_ms:.3g} ms): {top}. {rule}")
    if summary.custom_known and summary.device == "cuda" and library_us + summary.by_class["other"] >= LIBRARY_MIN_US \
            and summary.custom_share_of_work() < CUSTOM_SHARE_MIN:
        others = ", ".join(f"{_display(r.name)[:70]} ({_time(r.us)})"
                           for r in (summary.top("library_compute") + summary.top("other"))[:3])
        return (f"the solution's own kernels carry only {100 * summary.custom_share_of_work():.0f}% of the device "
                f"time spent on computation (at least {100 * CUSTOM_SHARE_MIN:.0f}% is required under strict); "
                f"the rest went to kernels that are not the solution's: {others}")
    return None


def _time(us: float) -> str:
    return f"{us / 1000:.3g} ms" if us >= 1000 else f"{us:.3g} us"


__all__ = ["CLASSES", "CUSTOM_SHARE_MIN", "LIBRARY_SHARE_LIMIT", "LIBRARY_VS_REFERENCE", "NAME_CHARS", "TOP_ROWS",
           "ProfileError", "Row", "Summary", "classify", "decide", "median_run"]
