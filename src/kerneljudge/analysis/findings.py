"""Findings of the static checker and the table that decides which of them block under which policy.

Rule modules return `Hit`s (code, line, message) without knowing the policy; `resolve` turns them into
`Finding`s.  Keeping the policy in one table means a rule can never disagree with the documentation.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, NamedTuple

from kerneljudge.core.types import POLICIES

# code -> (blocking under strict, blocking under lenient).  Every code is reported under both policies;
# a strict-only rule is a non-blocking note under lenient, so reports can still say what a solution did.
RULES: dict[str, tuple[bool, bool]] = {
    # never acceptable: they attack the judge or make the source unreadable to it
    "syntax_error": (True, True),
    "analysis_error": (True, True),  # the checker itself failed: fail closed, a crash must not wave code through
    "missing_modelnew": (True, True),
    "timer_patch": (True, True),
    "torch_internals_patch": (True, True),
    "tensor_subclass": (True, True),
    "judge_introspection": (True, True),
    "unsynced_stream": (True, True),
    "global_flag": (True, True),
    "dynamic_code": (True, True),
    # threads/processes may be honest under lenient, but nothing can prove they finished in time
    "thread": (True, False),
    # "the work must happen in the solution's own kernels": strict only
    "torch_compute": (True, False),
    "reference_model": (True, False),
    "fallback": (True, False),
    "no_kernel": (True, False),
    "cxx_torch_compute": (True, False),
    # persisting-L2 controls keep data in L2 across the judge's flush (threat A10): the flush resets them,
    # and under strict their use is refused outright
    "persisting_l2": (True, False),
    # advice only: static analysis cannot prove a kernel is never reached (runtime profiling can)
    "kernel_not_called": (False, False),
    "cxx_unreached": (False, False),
}


class Hit(NamedTuple):
    """A rule's raw result, before the policy decides whether it blocks."""

    code: str
    line: int
    message: str


@dataclass(frozen=True)
class Finding:
    code: str
    line: int
    message: str
    blocking: bool

    def to_dict(self) -> dict:
        return asdict(self)


def check_policy(policy: str) -> str:
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; expected one of {POLICIES}")
    return policy


def resolve(hits: Iterable[Hit], policy: str) -> list[Finding]:
    """Attach blocking flags, drop exact duplicates, sort by line (then code) for stable reports."""
    column = 0 if check_policy(policy) == "strict" else 1
    seen: set[tuple[str, int, str]] = set()
    out: list[Finding] = []
    for hit in hits:
        key = (hit.code, max(int(hit.line or 1), 1), hit.message)
        if key in seen:
            continue
        seen.add(key)
        out.append(Finding(key[0], key[1], key[2], RULES[hit.code][column]))
    out.sort(key=lambda f: (f.line, f.code, f.message))
    return out
