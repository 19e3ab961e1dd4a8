"""Strict rules for library compute outside torch: calls into CuPy, nvmath-python and CUTLASS's prebuilt ops
(library_names.py decides which calls compute), and CuPy array arithmetic, in the code forward reaches.

CuPy arrays are tracked per function the way tensor_scope.py tracks tensors, but only from what CuPy
returns (`cp.asarray(x)`, `cp.from_dlpack(x)`, `cp.empty(...)`, and what is computed from those): an
operator or a compute method on a CuPy array runs a CuPy kernel. Calls that compile or launch the
solution's own kernels are never compute.
"""

from __future__ import annotations

import ast
from typing import Optional

from kerneljudge.analysis.library_names import (
    ARRAY_ALLOWED_METHODS, ARRAY_NON_ARRAY, is_codegen_or_plan, label, library_call_is_compute, returns_array,
)
from kerneljudge.analysis.python_ast import Index, short

_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
        ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
_BINDINGS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)


class ArrayScope:
    """Which local names of one function hold CuPy arrays (flow-insensitive, as TensorScope is)."""

    def __init__(self, index: Index, func: ast.AST):
        self.ix = index
        self.names: set[str] = set()
        bindings = [n for n in ast.walk(func) if isinstance(n, _BINDINGS) and n.value is not None]
        for _ in range(3):  # derived names: y = x_cp.reshape(...); z = y * 2
            for n in bindings:
                if self.is_array(n.value):
                    targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                    self.names.update(x.id for t in targets for x in ast.walk(t) if isinstance(x, ast.Name))

    def is_array(self, e: ast.AST, depth: int = 0) -> bool:
        if depth > 30:
            return False
        rec = lambda x: self.is_array(x, depth + 1)  # noqa: E731
        if isinstance(e, ast.Name):
            return e.id in self.names
        if isinstance(e, ast.Call):
            q = self.ix.qualname(e.func)
            if q:
                return returns_array(q)
            f = e.func
            return isinstance(f, ast.Attribute) and f.attr not in ARRAY_NON_ARRAY and rec(f.value)
        if isinstance(e, ast.Attribute):
            return e.attr == "T" and rec(e.value)
        if isinstance(e, (ast.Subscript, ast.Starred)):
            return rec(e.value)
        if isinstance(e, ast.BinOp):
            return rec(e.left) or rec(e.right)
        if isinstance(e, ast.UnaryOp):
            return rec(e.operand)
        if isinstance(e, ast.IfExp):
            return rec(e.body) or rec(e.orelse)
        return False


def library_site(index: Index, node: ast.AST, arrays: ArrayScope) -> Optional[str]:
    """What `node` does that is library compute (a phrase for the finding), or None."""
    if isinstance(node, ast.Call):
        q = index.qualname(node.func)
        if q:
            if library_call_is_compute(q):
                shown = short(node.func)
                return f"calls {shown} ({label(q)} library compute)" if shown == q else \
                    f"calls {shown} ({q}, {label(q)} library compute)"
            return None
        f = node.func
        if isinstance(f, ast.Attribute) and arrays.is_array(f.value) and f.attr not in ARRAY_ALLOWED_METHODS \
                and f.attr not in ARRAY_NON_ARRAY:
            return f"calls the CuPy array method .{f.attr}() (CuPy library compute)"
        return None
    if isinstance(node, ast.BinOp) and (arrays.is_array(node.left) or arrays.is_array(node.right)):
        return f"applies `{_OPS.get(type(node.op), '?')}` to CuPy arrays (CuPy library compute)"
    if isinstance(node, ast.AugAssign) and arrays.is_array(node.target):
        return f"applies `{_OPS.get(type(node.op), '?')}=` to a CuPy array (CuPy library compute)"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Invert)) and arrays.is_array(node.operand):
        return "negates a CuPy array (CuPy library compute)"
    if isinstance(node, ast.Compare) and not any(isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn))
                                                 for o in node.ops):
        if any(arrays.is_array(x) for x in [node.left] + node.comparators):
            return "compares CuPy arrays elementwise (CuPy library compute)"
    return None


def plan_references(index: Index) -> list[tuple[int, str]]:
    """(line, name) of every library code generator, prebuilt op or stateful plan the file names (cupy.fuse,
    cutlass.op.Gemm, nvmath.linalg.advanced.Matmul): built anywhere, they run in forward."""
    out = []
    for node in index.nodes:
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            parent = index.parents.get(node)
            if isinstance(parent, ast.Attribute) and parent.value is node:
                continue  # only the longest dotted chain, once
            q = index.qualname(node) or ""
            if q and is_codegen_or_plan(q):
                out.append((node.lineno, q))
    return out


__all__ = ["ArrayScope", "library_site", "plan_references"]
