"""Reading a reply without usable fences as raw code: lines that stop it parsing and look like prose (sentences,
Markdown bullets, stray fences, lone tags) become comments, prose at the start and end is dropped; code lines
are never changed. Text that still does not parse is passed on as it is (the judge reports the syntax error).
"""

from __future__ import annotations

import ast
import re
import warnings
from typing import Optional

from kerneljudge.core import pyast
from kerneljudge.generate.solution_source import MODELNEW_PATTERN

_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*")
_LONE_TAG = re.compile(r"^</?[A-Za-z_][\w-]*>$")
_MARKDOWN_START = re.compile(r"^(?:[-*+]\s|>\s?|#{1,6}\s|\d+[.)]\s|\*\*|__|\|)")


def _looks_like_prose(line: str) -> bool:
    stripped = line.strip()
    if not stripped:
        return False
    if "```" in stripped or "~~~" in stripped or _LONE_TAG.match(stripped):
        return True
    if line[:1] in " \t":
        return False   # indented lines are code (or inside code): never touched
    if _MARKDOWN_START.match(stripped):
        return True
    words = _WORD.findall(stripped)
    letters = sum(ch.isalpha() or ch.isspace() for ch in stripped)
    return len(words) >= 3 and letters >= 0.75 * len(stripped)


def recover_raw_code(text: str) -> tuple[Optional[str], str]:
    """(code, note) from text without usable fences; code None when no ModelNew is in it."""
    if not MODELNEW_PATTERN.search(text):
        return None, ""
    lines = text.split("\n")
    commented: set[int] = set()
    tree = None
    for _ in range(min(len(lines), 400) + 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                tree = pyast.parse("\n".join(lines))
                break
            except SyntaxError as exc:
                lineno = min(max(exc.lineno or len(lines), 1), len(lines))
            except (ValueError, RecursionError, MemoryError):
                tree = None
                break
        i = lineno - 1
        if i in commented or not _looks_like_prose(lines[i]):
            tree = None
            break
        lines[i] = "# " + lines[i]
        commented.add(i)
    if tree is None:
        code = text.strip("\n")
        return code + "\n", "no usable code fence, and the text does not parse as Python: passed on as it is"
    # drop prose at the edges: lines this function commented out, blank lines, bare names ("Solution")
    keep = [i for i, ln in enumerate(lines) if ln.strip() and i not in commented]
    first, last = keep[0], keep[-1]
    for node in (tree.body[0], tree.body[-1]) if tree.body else ():
        if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Name, ast.Attribute)):
            if node.lineno - 1 == first and len(tree.body) > 1:
                first = next(i for i in keep if i > (node.end_lineno or node.lineno) - 1)
            elif (node.end_lineno or node.lineno) - 1 == last and len(tree.body) > 1:
                last = max(i for i in keep if i < node.lineno - 1)
    code = "\n".join(lines[first:last + 1]) + "\n"
    inner = len([i for i in commented if first < i < last])
    note = "no usable code fence: the reply read as raw code"
    if commented:
        dropped = len(commented) - inner
        parts = (([f"{dropped} dropped at the edges"] if dropped else [])
                 + ([f"{inner} kept as comments"] if inner else []))
        note += f" (prose lines: {', '.join(parts)})"
    return code, note
