"""Problem files: identity and metadata read from the text, without executing anything.

The parent only ever reads problem files as text (ast.literal_eval of module-level constants); the code in
them runs in the reference and solution child processes (see judge/loading.py).
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kerneljudge.core import pyast

METADATA_NAMES = ("CATEGORY", "TAGS", "SMALL", "HELD_OUT", "HELD_OUT_SMALL", "TOLERANCE")
_LEVEL_DIR = re.compile(r"^level_?(\d+)$", re.IGNORECASE)
_NUMBERED = re.compile(r"^(\d+)_(.+)$")


class ProblemError(ValueError):
    """A problem file that cannot be used (unreadable, not in the expected format)."""


@dataclass(frozen=True)
class Problem:
    path: str
    id: str
    level: int
    number: int | None
    name: str
    sha256: str
    constants: dict[str, Any] = field(default_factory=dict)   # module-level literal size constants
    metadata: dict[str, Any] = field(default_factory=dict)    # CATEGORY, SMALL, HELD_OUT, ...

    def preset(self, which: str) -> dict[str, Any]:
        """Overrides of module constants for a preset: 'default' (none) or 'small'."""
        if which == "small":
            return dict(self.metadata.get("SMALL") or {})
        return {}

    def held_out(self, small: bool) -> list[dict[str, Any]]:
        key = "HELD_OUT_SMALL" if small else "HELD_OUT"
        return [dict(p) for p in self.metadata.get(key) or [] if isinstance(p, dict)]

    @property
    def category(self) -> str:
        return str(self.metadata.get("CATEGORY", ""))


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def problem_text(problem: Problem) -> str:
    """The problem file's text, as it was when the problem was read: ProblemError if it cannot be read now or
    has changed since (every solution of a batch is judged against the same text)."""
    try:
        text = Path(problem.path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ProblemError(f"cannot read problem file {problem.path}: {exc}") from None
    if sha256_text(text) != problem.sha256:
        raise ProblemError(f"problem file {problem.path} changed while it was being judged")
    return text


def read_problem(path: str | Path) -> Problem:
    p = Path(path)
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ProblemError(f"cannot read problem file {p}: {exc}") from None
    try:
        tree = pyast.parse(text, filename=str(p))
    except SyntaxError as exc:
        raise ProblemError(f"problem file {p} is not valid Python: {exc.msg} (line {exc.lineno})") from None
    defined = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if n not in defined]
    if missing:
        raise ProblemError(f"problem file {p} does not define {', '.join(missing)}")
    constants, metadata = _module_literals(tree)
    level, number, name = _identity(p)
    pid = f"level{level}/{p.stem}" if level else p.stem
    return Problem(str(p.resolve()), pid, level, number, name, sha256_text(text), constants, metadata)


def _module_literals(tree: ast.Module) -> tuple[dict[str, Any], dict[str, Any]]:
    constants: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        try:
            value = ast.literal_eval(node.value)
        except (ValueError, SyntaxError, TypeError):
            continue
        target = node.targets[0].id
        (metadata if target in METADATA_NAMES else constants)[target] = value
    return constants, metadata


def _identity(p: Path) -> tuple[int, int | None, str]:
    level_match = _LEVEL_DIR.match(p.parent.name)
    level = int(level_match.group(1)) if level_match else 0
    numbered = _NUMBERED.match(p.stem)
    if numbered:
        return level, int(numbered.group(1)), numbered.group(2)
    return level, None, p.stem
