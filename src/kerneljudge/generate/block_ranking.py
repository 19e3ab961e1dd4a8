"""Which fenced blocks of a reply are solutions, and how they rank: a block is a candidate when it defines
ModelNew (a block tagged with another language only when it parses as Python); a candidate that uses names
defined by earlier Python blocks is joined with them. Candidates rank by: parses > has a forward method > uses
no names it does not define > fence closed > matches the requested backend > tagged python > later in the reply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from kerneljudge.generate.reply_sections import PYTHON_TAGS, FencedBlock
from kerneljudge.generate.solution_source import (
    MODELNEW_PATTERN, free_names, modelnew_defined, parse_or_none, top_level_names,
)


@dataclass
class Candidate:
    code: str
    parses: bool
    complete: bool       # ModelNew has a forward
    self_contained: bool
    closed: bool
    backend_match: bool
    python_tag: bool
    position: int
    notes: list[str]

    def key(self) -> tuple:
        return (self.parses, self.complete, self.self_contained, self.closed, self.backend_match,
                self.python_tag, self.position)


def solution_candidates(blocks: list[FencedBlock], backend: Optional[str]) -> list[Candidate]:
    """The blocks that define ModelNew, each joined with the earlier blocks it needs, with notes on what was seen."""
    parsed = [parse_or_none(b.code) for b in blocks]
    found: list[Candidate] = []
    for b, tree in zip(blocks, parsed):
        other_tag = bool(b.lang) and b.lang not in PYTHON_TAGS
        if tree is not None:
            defines, complete = modelnew_defined(tree)
        else:
            defines, complete = bool(MODELNEW_PATTERN.search(b.code)), "def forward" in b.code
        if not defines or (other_tag and tree is None):
            continue
        kind = b.lang or "untagged"
        notes = [f"fenced block {b.number} of {len(blocks)} ({kind})"]
        if other_tag:
            notes.append(f"tagged {b.lang} but it is Python")
        code = b.code
        free = free_names(tree) if tree is not None else set()
        if free:
            helpers = []
            for prev, prev_tree in zip(blocks[:b.number - 1], parsed[:b.number - 1]):
                if prev_tree is None or (prev.lang and prev.lang not in PYTHON_TAGS) or modelnew_defined(prev_tree)[0]:
                    continue
                if top_level_names(prev_tree) & free:
                    helpers.append(prev)
            if helpers:
                joined = "\n\n".join([h.code.rstrip() for h in helpers] + [code])
                joined_tree = parse_or_none(joined)
                if joined_tree is not None and len(free_names(joined_tree)) < len(free):
                    code, tree = joined, joined_tree
                    free = free_names(joined_tree)
                    many = len(helpers) > 1
                    notes.append(f"joined with earlier block{'s' if many else ''} "
                                 + ", ".join(str(h.number) for h in helpers)
                                 + f", which define{'' if many else 's'} names it uses")
        if free:
            notes.append("uses names it does not define: " + ", ".join(sorted(free)[:8]))
        if tree is None:
            notes.append("the code does not parse as Python")
        if not b.closed:
            notes.append("its fence is never closed: the reply looks truncated")
        detected = _detect_backend(code) if backend and tree is not None else None
        if backend and detected and detected != backend:
            notes.append(f"asked for {backend}, the code looks like {detected}")
        found.append(Candidate(code, tree is not None, complete, not free, b.closed,
                               backend is None or detected in (None, backend), not other_tag and bool(b.lang),
                               b.number, notes))
    return found


def _detect_backend(code: str) -> Optional[str]:
    try:
        from kerneljudge.analysis import detect_backend
    except Exception:  # pragma: no cover - the analysis package is part of kerneljudge
        return None
    try:
        return detect_backend(code)
    except Exception:
        return None
