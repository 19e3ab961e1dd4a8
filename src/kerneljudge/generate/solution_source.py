"""What a piece of Python from a model's reply defines and uses: whether it parses, whether it defines ModelNew
(with a forward), which names it uses without defining and which it binds at module level. The facts
generate/extract.py ranks code blocks by.
"""

from __future__ import annotations

import ast
import builtins
import re
import warnings
from typing import Iterator, Optional

from kerneljudge.core import pyast

# ModelNew defined at the start of a line (a class or an assignment): the test for code that does not parse
MODELNEW_PATTERN = re.compile(r"^[ \t]*(class[ \t]+ModelNew\b|ModelNew[ \t]*=)", re.MULTILINE)
_BUILTIN_NAMES = frozenset(dir(builtins)) | {"__name__", "__file__", "__doc__", "__spec__", "__builtins__"}


def parse_or_none(code: str) -> Optional[ast.Module]:
    """The module's tree, or None when the code does not parse (warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # invalid escape sequences in non-raw C++ strings and the like
        try:
            return pyast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


def _module_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, looking into if/try/with blocks (not into functions or classes)."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(node, field, None)
            if isinstance(node, (ast.If, ast.Try, ast.With)) and isinstance(inner, list):
                yield from _module_statements(inner)
        if isinstance(node, ast.Try):
            for handler in node.handlers:
                yield from _module_statements(handler.body)


def modelnew_defined(tree: ast.Module) -> tuple[bool, bool]:
    """(defines ModelNew, has forward) for a parsed module."""
    defines = complete = False
    for node in _module_statements(tree.body):
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            defines = True
            complete = complete or any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "forward"
                                       for n in node.body) or bool(node.bases and not _only_nn_module(node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "ModelNew" for t in targets):
                defines = complete = True
    return defines, complete


def _only_nn_module(cls: ast.ClassDef) -> bool:
    """Whether every base is nn.Module / torch.nn.Module / Module (so forward must come from the class)."""
    for base in cls.bases:
        name = ast.unparse(base) if hasattr(ast, "unparse") else ""
        if name not in ("nn.Module", "torch.nn.Module", "Module"):
            return False
    return True


def free_names(tree: ast.Module) -> set[str]:
    """Names the module reads but never binds anywhere (builtins aside); empty after a star import."""
    bound: set[str] = set()
    loaded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            if node.name == "*":
                return set()   # a star import: cannot tell what it defines
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return loaded - bound - _BUILTIN_NAMES


def top_level_names(tree: ast.Module) -> set[str]:
    """Names the module binds at module level: definitions, imports and assignments."""
    names: set[str] = set()
    for node in _module_statements(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return names
