"""Metadata scrubbing: a problem file as a model may see it, and the held-out presets it must never see.

    problem_source_for_prompt(text) -> str     the problem file without its kerneljudge metadata
    held_out_shapes(text) -> [dict]            its HELD_OUT and HELD_OUT_SMALL presets (for feedback redaction)

A model never sees the kerneljudge metadata of a problem: CATEGORY, TAGS, SMALL, HELD_OUT, HELD_OUT_SMALL
and TOLERANCE are removed from the source; everything else is kept byte for byte.
"""

from __future__ import annotations

import ast
from typing import Any

from kerneljudge.core import pyast
from kerneljudge.core.problem import METADATA_NAMES, ProblemError


def _metadata_target(node: ast.stmt) -> bool:
    if isinstance(node, ast.Assign):
        targets: list[ast.expr] = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    else:
        return False
    names: list[str] = []
    for t in targets:
        for sub in ast.walk(t):
            if isinstance(sub, ast.Name):
                names.append(sub.id)
    return any(n in METADATA_NAMES for n in names)


def _byte_prefix(line: str, col: int) -> str:
    return line.encode("utf-8")[:col].decode("utf-8", errors="ignore")


def _byte_suffix(line: str, col: int) -> str:
    return line.encode("utf-8")[col:].decode("utf-8", errors="ignore")


def problem_source_for_prompt(text: str) -> str:
    """The problem file without its kerneljudge metadata; everything else is kept byte for byte.

    Removed: every module-level assignment (also annotated or augmented) to CATEGORY, TAGS, SMALL,
    HELD_OUT, HELD_OUT_SMALL or TOLERANCE, found by its AST line/column range, together with a comment
    on its own last line and the block of full-line comments directly above it (no blank line between:
    such comments describe the metadata). Blank lines that the removal leaves at the end of the file are
    dropped. Raises ProblemError when the text is not valid Python.
    """
    try:
        tree = pyast.parse(text)
    except SyntaxError as exc:
        raise ProblemError(f"the problem is not valid Python: {exc.msg} (line {exc.lineno})") from None
    nodes = [n for n in tree.body if _metadata_target(n)]
    if not nodes:
        return text
    lines = text.splitlines(keepends=True)
    trailing_blank = _trailing_blank(lines)
    for node in reversed(nodes):   # bottom-up, so earlier line numbers stay valid
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        before = _byte_prefix(lines[first], node.col_offset)
        after = _byte_suffix(lines[last], node.end_col_offset or 0)
        ending = after[len(after.rstrip("\r\n")):]
        b = before.rstrip()
        if b.endswith(";"):
            b = b[:-1].rstrip()
        a = after.rstrip("\r\n")
        if a.lstrip().startswith(";"):
            a = a.lstrip()[1:].lstrip()
        a_is_code = bool(a.strip()) and not a.lstrip().startswith("#")
        if b and a_is_code:
            replacement = [f"{b}; {a}{ending}"]
        elif b:
            replacement = [f"{b}{ending}"]
        elif a_is_code:
            replacement = [f"{_leading_ws(before)}{a}{ending}"]
        else:
            replacement = []
            while first > 0 and lines[first - 1].lstrip().startswith("#") and not _inside_string(tree, first):
                first -= 1
        lines[first:last + 1] = replacement
    while _trailing_blank(lines) > trailing_blank:   # blank lines that sat between code and the metadata
        lines.pop()
    return "".join(lines)


def _trailing_blank(lines: list[str]) -> int:
    n = 0
    while n < len(lines) and not lines[len(lines) - 1 - n].strip():
        n += 1
    return n


def _leading_ws(s: str) -> str:
    return s[:len(s) - len(s.lstrip())]


def _inside_string(tree: ast.Module, line_no: int) -> bool:
    """Whether 1-based line `line_no` lies inside a multi-line string constant (so is not a comment)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            end = node.end_lineno or node.lineno
            if node.lineno < line_no <= end:
                return True
    return False


def held_out_shapes(text: str) -> list[dict[str, Any]]:
    """The HELD_OUT and HELD_OUT_SMALL presets of a problem (for feedback_from_verdict's hidden_shapes)."""
    try:
        tree = pyast.parse(text)
    except SyntaxError:
        return []
    found: list[dict[str, Any]] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in ("HELD_OUT", "HELD_OUT_SMALL"):
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, SyntaxError, TypeError):
                continue
            found.extend(dict(p) for p in value or [] if isinstance(p, dict))
    return found
