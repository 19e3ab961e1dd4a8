"""Identity copies of KernelBench problems: the problem's own source as a solution (`class Model` renamed
`ModelNew`), for measuring what a judge reports when nothing was changed (scripts/upstream_sweep.py)."""

from __future__ import annotations

import ast
import re


class IdentityError(ValueError):
    """A problem whose source cannot be turned into an identity copy mechanically."""



_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")  # lines as Python's tokenizer counts them (not \f)


def _other_bindings(tree: ast.Module, model: ast.ClassDef) -> list[int]:
    """Lines where `Model` is bound by anything but the module's class statement and plain assignments:
    a parameter, an import, global/nonlocal, an except clause, another def or class. Renaming every
    `Model` name there would change what the code means."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.arg == "Model":
            lines.append(node.lineno)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            lines += [node.lineno for a in node.names if (a.asname or a.name) == "Model"]
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and "Model" in node.names:
            lines.append(node.lineno)
        elif isinstance(node, ast.ExceptHandler) and node.name == "Model":
            lines.append(node.lineno)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == "Model":
            if node is not model:
                lines.append(node.lineno)
    return lines


def identity_source(text: str) -> str:
    """The problem's source with its module-level `class Model` renamed `ModelNew`, and every reference to the
    name `Model` (`super(Model, self)`, `Model(...)`) renamed with it. Attributes (`x.Model`), keyword names,
    strings, docstrings, comments and other names (`ModelBlock`) stay as they are: only ast.Name nodes and the
    class statement are touched, at the exact positions the parser gives."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise IdentityError(f"not valid Python: {exc.msg} (line {exc.lineno})") from None
    models = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"]
    if len(models) != 1:
        raise IdentityError(f"{len(models)} module-level `class Model` statements (need exactly one)")
    if any((isinstance(n, ast.Name) and n.id == "ModelNew") or getattr(n, "name", None) == "ModelNew"
           for n in ast.walk(tree)):
        raise IdentityError("already uses the name ModelNew")
    clashes = _other_bindings(tree, models[0])
    if clashes:
        raise IdentityError(f"`Model` is also bound on line(s) {clashes}: make this copy by hand")
    lines = _LINE.findall(text)
    spots = {(n.lineno, n.col_offset) for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "Model"}
    spots.add(_class_name_spot(models[0], lines))
    for lineno, col in sorted(spots, reverse=True):  # right to left, so earlier offsets stay valid
        raw = lines[lineno - 1].encode()  # ast offsets count UTF-8 bytes
        if raw[col:col + 5] != b"Model":
            raise IdentityError(f"line {lineno}: no `Model` at the parser's offset {col}")
        lines[lineno - 1] = (raw[:col] + b"ModelNew" + raw[col + 5:]).decode()
    return "".join(lines)


def _class_name_spot(model: ast.ClassDef, lines: list[str]) -> tuple[int, int]:
    raw = lines[model.lineno - 1].encode()
    found = re.compile(rb"class\s+(Model)\b").match(raw, model.col_offset)
    if not found:
        raise IdentityError(f"line {model.lineno}: `class Model` is not written on one line")
    return model.lineno, found.start(1)

