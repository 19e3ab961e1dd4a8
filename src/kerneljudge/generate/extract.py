"""Take the solution file out of a model's reply.

    extract_solution(reply, backend=None) -> Extraction(code, outcome, note)

outcome is "ok" (code holds the solution source) or "no_code" (code is None); note always says what was
found and what was done, so a reply is never dropped silently: a reply without usable code is a
"no_code" record with its reason.

How the code is chosen:
1. <think>/<thinking>/<reasoning> sections are set aside (also an opening tag never closed: a reply cut
   off while reasoning, and a closing tag with no opening one: APIs that strip the opening tag). Code
   inside them is used only when nothing outside them defines ModelNew (said in the note).
2. Fenced blocks (``` or ~~~, any length, indented fences too; a last fence never closed runs to the end
   of the reply and is noted as truncated). A block is a candidate when it defines `ModelNew` (a class or
   an assignment at module level; a regular-expression test when the block does not parse). A block
   tagged with another language (cuda, cpp, ...) is a candidate only when it parses as Python: a CUDA
   block alone is not a solution; a block tagged with a Python-embedded kernel language (triton, cupy, numba,
   helion, cuda_core, cutedsl, tilelang: reply_sections.PYTHON_DSL_TAGS) counts as tagged python. Candidates are
   ranked by: parses > has a forward method > uses no names it does not define > fence closed > matches the
   requested backend (analysis.detect_backend) > tagged python > later in the reply. A candidate that uses
   names defined by earlier Python blocks is joined with those blocks.
3. Without a fenced candidate: the text outside the fences is read as raw code. Lines that stop it
   parsing and look like prose (sentences, Markdown bullets, stray fences, lone tags) are turned into
   comments, prose at the start and end is dropped; code lines are never changed. If the text still does
   not parse it is returned as it is (the judge then reports the syntax error).
4. Nothing defines ModelNew: "no_code", with what was seen (empty reply, only prose, a CUDA-only block,
   Python without ModelNew).

The steps live beside this module: generate/reply_sections.py (1 and the fences of 2), generate/block_ranking.py
(the candidates of 2), generate/raw_code.py (3), generate/solution_source.py (what a piece of Python defines);
this module puts them in order and says why a reply gave no code (4).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Optional

from kerneljudge.analysis import BACKENDS as DETECTED_BACKENDS
from kerneljudge.generate.block_ranking import Candidate, solution_candidates
from kerneljudge.generate.raw_code import recover_raw_code
from kerneljudge.generate.reply_sections import PYTHON_TAGS, fenced_blocks, split_reasoning
from kerneljudge.generate.solution_source import parse_or_none

OUTCOMES = ("ok", "no_code")


@dataclass(frozen=True)
class Extraction:
    code: Optional[str]
    outcome: str          # "ok" | "no_code"
    note: str

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}; got {self.outcome!r}")
        if (self.code is None) != (self.outcome == "no_code"):
            raise ValueError("code must be None exactly when the outcome is no_code")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _from_text(text: str, backend: Optional[str]) -> tuple[Optional[str], str]:
    blocks, outside = fenced_blocks(text)
    cands = solution_candidates(blocks, backend)
    if cands:
        best = max(cands, key=Candidate.key)
        notes = list(best.notes)
        others = len(cands) - 1
        if others:
            notes.append(f"{others} other block{'s' if others > 1 else ''} also define{'s' if others == 1 else ''} "
                         "ModelNew; took the best-ranked (the last when equal)")
        code = best.code if best.code.endswith("\n") else best.code + "\n"
        return code, "; ".join(notes)
    code, note = recover_raw_code(outside if blocks else text)
    if code is not None:
        if blocks:
            note += f"; outside {len(blocks)} fenced block{'s' if len(blocks) > 1 else ''} that define no ModelNew"
        return code, note
    if blocks:
        langs = ", ".join(b.lang or "untagged" for b in blocks)
        python = [b for b in blocks if (not b.lang or b.lang in PYTHON_TAGS)]
        if not python:
            return None, f"only non-Python code blocks ({langs}): no Python solution defining ModelNew"
        return None, f"{len(blocks)} code block{'s' if len(blocks) > 1 else ''} ({langs}), none defines class ModelNew"
    if parse_or_none(text) is not None and text.strip():
        return None, "the reply parses as Python but defines no class ModelNew"
    return None, "no code in the reply (prose only)"


def extract_solution(reply: Optional[str], backend: Optional[str] = None) -> Extraction:
    """The solution source in a model's reply (see the module docstring for how it is chosen).

    backend: the backend that was asked for (one of analysis.BACKENDS: every core.types.BACKENDS name, and
    torch); it breaks ties between several solutions and a mismatch is mentioned in the note. It never turns a
    solution away.
    """
    if backend is not None and backend not in DETECTED_BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(DETECTED_BACKENDS)} or None; got {backend!r}")
    if reply is None or not str(reply).strip():
        return Extraction(None, "no_code", "empty reply")
    text = str(reply).replace("\r\n", "\n").replace("\r", "\n")
    visible, thinking = split_reasoning(text)
    prefix = []
    if thinking:
        prefix.append(f"{len(thinking)} reasoning section{'s' if len(thinking) > 1 else ''} set aside")
    if not visible.strip() and thinking:
        prefix.append("nothing outside the reasoning")
    code, note = _from_text(visible, backend) if visible.strip() else (None, "empty reply")
    if code is None and thinking:
        inner_code, inner_note = _from_text("\n".join(thinking), backend)
        if inner_code is not None:
            return Extraction(inner_code, "ok", "; ".join(prefix + [
                "no solution outside the reasoning, so the code was taken from inside it", inner_note]))
    if code is None:
        return Extraction(None, "no_code", "; ".join(prefix + [note]))
    return Extraction(code, "ok", "; ".join(prefix + [note]))
