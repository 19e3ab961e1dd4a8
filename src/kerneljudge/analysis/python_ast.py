"""Shared view of a solution's AST: which dotted name an expression denotes, and which text a string
expression holds.  Everything here is flow-insensitive on purpose: a name that is *ever* bound to
`torch.mm` is treated as `torch.mm` everywhere, which errs on the side of flagging.

Nothing in this package executes or imports the solution; it only reads `ast` nodes.
"""

from __future__ import annotations

import ast
import builtins
from typing import Iterator, Optional

BUILTIN_NAMES = frozenset(dir(builtins))
MAX_DEPTH = 40  # guards the recursive resolvers against pathological (or hostile) nesting

Segments = list  # list[tuple[str, int]]: pieces of text, each with the source line it starts on


def const_str(node: Optional[ast.AST]) -> Optional[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def short(node: ast.AST, limit: int = 60) -> str:
    """Source-like text of a node for messages, kept short."""
    try:
        text = ast.unparse(node)
    except Exception:  # unparse can fail on odd trees; a message must never crash the judge
        text = type(node).__name__
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def tail_name(node: ast.AST) -> Optional[str]:
    """Last identifier of a Name/Attribute chain (`a.b.load_inline` -> `load_inline`)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def in_order(nodes: Iterator[ast.AST]) -> list:
    return sorted(nodes, key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))


class Index:
    """Import aliases, bound names, parents and string bindings of one parsed solution."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.nodes = list(ast.walk(tree))  # walked once; rules iterate this list
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in self.nodes:
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
        self.bound = self._bound_names()
        self.aliases: dict[str, str] = {}
        self.star_modules: list[str] = []
        self._string_bindings = self._collect_string_bindings()
        self._collect_imports()
        self._collect_assigned_aliases()
        self.functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.classes = {n.name: n for n in self.nodes if isinstance(n, ast.ClassDef)}

    # ----------------------------------------------------------------------------------------- names
    def _bound_names(self) -> set[str]:
        bound: set[str] = set()
        for node in self.nodes:
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                bound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, ast.alias):
                bound.add((node.asname or node.name).split(".")[0])
        return bound

    def _collect_imports(self) -> None:
        for node in self.nodes:
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.aliases[a.asname] = a.name
                    else:  # `import a.b.c` binds `a`
                        root = a.name.split(".")[0]
                        self.aliases[root] = root
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for a in node.names:
                    if a.name == "*":
                        self.star_modules.append(module)
                    else:
                        self.aliases[a.asname or a.name] = f"{module}.{a.name}"

    def _collect_assigned_aliases(self) -> None:
        # `mm = torch.mm`, `F = getattr(torch.nn, "functional")`; iterate for aliases of aliases
        pairs: list[tuple[str, ast.AST]] = []
        for node in self.nodes:
            targets: list = []
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                targets, value = [node.target], node.value
            for t in targets:
                if isinstance(t, ast.Name):
                    pairs.append((t.id, value))
                elif isinstance(t, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
                    pairs.extend((e.id, v) for e, v in zip(t.elts, value.elts) if isinstance(e, ast.Name))
        for _ in range(4):
            changed = False
            for name, value in pairs:
                if isinstance(value, ast.Call) and not self._is_name_producing_call(value):
                    continue  # a call's *result* is not the callee: `out = torch.empty(...)` is no alias
                q = self.qualname(value)
                if q and self.aliases.get(name) != q:
                    self.aliases[name] = q
                    changed = True
            if not changed:
                break

    def _is_name_producing_call(self, call: ast.Call) -> bool:
        q = self.qualname(call.func)
        return q in ("builtins.getattr", "builtins.__import__", "importlib.import_module")

    def qualname(self, node: ast.AST, depth: int = 0) -> Optional[str]:
        """Dotted name an expression denotes (`F.relu` -> `torch.nn.functional.relu`), else None."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(node, ast.Name):
            if node.id in self.aliases:
                return self.aliases[node.id]
            if node.id == "__builtins__":
                return "builtins"
            if node.id in BUILTIN_NAMES and node.id not in self.bound:
                return "builtins." + node.id
            if self.star_modules and node.id not in self.bound:
                return f"{self.star_modules[0]}.{node.id}"
            return None
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value, depth + 1)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            return self._call_qualname(node, depth)
        if isinstance(node, ast.Subscript):
            return self._subscript_qualname(node, depth)
        return None

    def _call_qualname(self, node: ast.Call, depth: int) -> Optional[str]:
        fq = self.qualname(node.func, depth + 1)
        if fq == "builtins.getattr" and len(node.args) >= 2:
            base, attr = self.qualname(node.args[0], depth + 1), self.known_str(node.args[1], depth + 1)
            return f"{base}.{attr}" if base and attr is not None else None
        if fq in ("builtins.__import__", "importlib.import_module") and node.args:
            mod = self.known_str(node.args[0], depth + 1)
            if mod is None:
                return None
            fromlist = len(node.args) >= 4 or any(k.arg == "fromlist" for k in node.keywords)
            return mod if (fq == "importlib.import_module" or fromlist) else mod.split(".")[0]
        return None

    def _subscript_qualname(self, node: ast.Subscript, depth: int) -> Optional[str]:
        key = const_str(node.slice)
        if key is None:
            return None
        v = node.value
        if self.qualname(v, depth + 1) == "sys.modules":
            return key
        if isinstance(v, ast.Attribute) and v.attr == "__dict__":  # torch.__dict__["mm"]
            base = self.qualname(v.value, depth + 1)
            return f"{base}.{key}" if base else None
        if isinstance(v, ast.Call):
            fq = self.qualname(v.func, depth + 1)
            if fq == "builtins.vars" and v.args:
                base = self.qualname(v.args[0], depth + 1)
                return f"{base}.{key}" if base else None
            if fq in ("builtins.globals", "builtins.locals"):
                return self.qualname(ast.Name(id=key, ctx=ast.Load()), depth + 1)
        if self.qualname(v, depth + 1) == "builtins":  # __builtins__["exec"]
            return "builtins." + key
        return None

    def bindings(self, node: ast.AST) -> list:
        """Expressions ever assigned to a name (empty for anything else)."""
        return [v for _, v in self._string_bindings.get(node.id, [])] if isinstance(node, ast.Name) else []

    def known_str(self, node: ast.AST, depth: int = 0) -> Optional[str]:
        """A string expression's value when it is a single identifier-like string (`"m" + "m"` -> "mm")."""
        value = const_str(node)
        if value is None:
            segments = self.strings(node, depth)
            value = "".join(t for t, _ in segments) if segments else None
        return value if value is not None and value.strip() and not any(c.isspace() for c in value) else None

    # --------------------------------------------------------------------------------------- strings
    def _collect_string_bindings(self) -> dict[str, list[tuple[bool, ast.AST]]]:
        # name -> [(is_append, value), ...] in source order; `+=` appends to the latest version
        out: dict[str, list[tuple[bool, ast.AST]]] = {}
        for node in in_order(n for n in self.nodes if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        out.setdefault(t.id, []).append((False, node.value))
                    elif isinstance(t, (ast.Tuple, ast.List)) and isinstance(node.value, (ast.Tuple, ast.List)):
                        for e, v in zip(t.elts, node.value.elts):
                            if isinstance(e, ast.Name):
                                out.setdefault(e.id, []).append((False, v))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                out.setdefault(node.target.id, []).append((False, node.value))
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add):
                out.setdefault(node.target.id, []).append((True, node.value))
        return out

    def strings(self, node: ast.AST, depth: int = 0, visiting: frozenset = frozenset()) -> Optional[Segments]:
        """Text of a string-valued expression as segments, `[]` when known empty, None when unknown.

        Follows names, `+`, f-strings, lists/tuples of sources, `.format`/`.strip`/`dedent`/`join` and
        constant `.replace` (which also undoes the simplest obfuscation)."""
        if depth > MAX_DEPTH:
            return None
        rec = lambda n: self.strings(n, depth + 1, visiting)  # noqa: E731
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return [(node.value, node.lineno)] if node.value else []
            return [] if node.value is None else None
        if isinstance(node, ast.JoinedStr):
            out: Segments = []
            for part in node.values:
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    out.append((part.value, node.lineno))
                elif isinstance(part, ast.FormattedValue):
                    out.extend(rec(part.value) or [(" ", node.lineno)])
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = rec(node.left), rec(node.right)
            return None if left is None and right is None else (left or []) + (right or [])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            return rec(node.left)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            out = []
            for e in node.elts:
                part = rec(e.value if isinstance(e, ast.Starred) else e)
                if part:
                    out.extend(part + [("\n", part[-1][1])])
            return out
        if isinstance(node, ast.IfExp):
            a, b = rec(node.body), rec(node.orelse)
            return None if a is None and b is None else (a or []) + [("\n", node.lineno)] + (b or [])
        if isinstance(node, ast.Name):
            if node.id in visiting or node.id not in self._string_bindings:
                return None
            inner = visiting | {node.id}
            out, known = [], False
            for append, value in self._string_bindings[node.id]:
                part = self.strings(value, depth + 1, inner)
                if part is not None:
                    known = True
                    if out and part and not append:  # a rebinding: keep every version, one per line
                        out.append(("\n", part[0][1]))
                    out.extend(part)
            return out if known else None
        if isinstance(node, ast.Call):
            return self._call_strings(node, rec)
        return None

    def _call_strings(self, node: ast.Call, rec) -> Optional[Segments]:
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in ("format", "strip", "lstrip", "rstrip", "encode", "decode"):
                return rec(func.value)
            if func.attr == "replace" and len(node.args) >= 2:
                old, new, base = const_str(node.args[0]), const_str(node.args[1]), rec(func.value)
                if base is None or old is None or new is None or not old:
                    return base
                return [(text.replace(old, new), line) for text, line in base]
            if func.attr == "join" and node.args:
                return rec(node.args[0])
        q = self.qualname(func)
        if q in ("textwrap.dedent", "textwrap.indent", "builtins.str", "inspect.cleandoc") and node.args:
            return rec(node.args[0])
        return None


def segments_text(segments: Segments) -> tuple[str, list[tuple[int, int]]]:
    """Join segments into one text plus (start offset, start line) marks to map offsets back to lines."""
    parts, marks, offset = [], [], 0
    for text, line in segments:
        marks.append((offset, line))
        parts.append(text)
        offset += len(text)
    return "".join(parts), marks


def line_at(text: str, marks: list[tuple[int, int]], offset: int) -> int:
    start, line = 0, 1
    for mark_start, mark_line in marks:
        if mark_start > offset:
            break
        start, line = mark_start, mark_line
    return line + text.count("\n", start, offset)
