"""Cutting a model's reply into its parts: the reasoning sections (<think>, <thinking>, <reasoning>) set apart
from the rest, and the fenced code blocks (``` or ~~~, any length, indented or never closed) taken out of the
text around them, each with its language tag. PYTHON_TAGS are the tags a Python block may carry, the names of
Python-embedded kernel languages (Triton, CuPy, Numba, Helion, cuda.core, the CuTe DSL, TileLang) included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Tags naming a Python-embedded kernel language: a block tagged with one is Python (a model tags its solution
# ```numba or ```helion now and then). "cute" alone is left out: it also names CuTe's C++.
PYTHON_DSL_TAGS = frozenset({"triton", "cupy", "numba", "helion", "cuda_core", "cuda-core", "cuda.core", "cutedsl",
                             "cute_dsl", "cute-dsl", "tilelang", "tile-lang", "tile_lang"})
PYTHON_TAGS = frozenset({"python", "py", "python3", "py3", "ipython", "python2", "pycon"}) | PYTHON_DSL_TAGS

_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_FENCE_CLOSE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*$")


@dataclass
class FencedBlock:
    number: int          # 1-based among the fenced blocks of the text
    lang: str            # "" when untagged
    code: str
    closed: bool


def split_reasoning(text: str) -> tuple[str, list[str]]:
    """(text outside reasoning sections, the reasoning sections)."""
    thinking: list[str] = []
    first_close = _THINK_CLOSE.search(text)
    first_open = _THINK_OPEN.search(text)
    if first_close and (not first_open or first_close.start() < first_open.start()):
        thinking.append(text[:first_close.start()])
        text = text[first_close.end():]
    out: list[str] = []
    while True:
        m = _THINK_OPEN.search(text)
        if not m:
            out.append(text)
            break
        out.append(text[:m.start()])
        close = _THINK_CLOSE.search(text, m.end())
        if not close:
            thinking.append(text[m.end():])
            break
        thinking.append(text[m.end():close.start()])
        text = text[close.end():]
    return "".join(out), thinking


def fenced_blocks(text: str) -> tuple[list[FencedBlock], str]:
    """The fenced blocks of a text, and the text with the blocks (fences included) taken out."""
    lines = text.split("\n")
    blocks: list[FencedBlock] = []
    outside: list[str] = []
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not m or (m.group("fence")[0] == "`" and "`" in m.group("info")):
            outside.append(lines[i])
            i += 1
            continue
        fence, indent = m.group("fence"), len(m.group("indent").expandtabs(4))
        body: list[str] = []
        j, closed = i + 1, False
        while j < len(lines):
            c = _FENCE_CLOSE.match(lines[j])
            if c and c.group("fence")[0] == fence[0] and len(c.group("fence")) >= len(fence):
                closed = True
                break
            body.append(_dedent(lines[j], indent))
            j += 1
        blocks.append(FencedBlock(len(blocks) + 1, _lang(m.group("info")), "\n".join(body), closed))
        i = j + 1
    return blocks, "\n".join(outside)


def _lang(info: str) -> str:
    m = re.match(r"\s*\{?\s*\.?([\w+#.-]+)", info)
    if not m:
        return ""
    return m.group(1).split(":")[0].lower()


def _dedent(line: str, indent: int) -> str:
    i = 0
    while i < indent and i < len(line) and line[i] in " \t":
        i += 1
    return line[i:]
