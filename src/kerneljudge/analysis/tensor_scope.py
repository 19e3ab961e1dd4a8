"""Which values in a function forward reaches are *tensor-like*: the basis of the arithmetic rule.

Tensor-like: forward's arguments (not those typed int/float/bool/str or defaulting to a Python constant),
parameters and buffers, results of torch calls, tensor methods, kernels and nn modules, and anything
derived from them.  Not tensor-like: shapes, sizes, strides, dtypes, `.item()`, Python numbers and what
is computed from those.  The inference is flow-insensitive and deliberately simple (see the docs' limits).
"""

from __future__ import annotations

import ast
from typing import Optional

from kerneljudge.analysis.program import Program
from kerneljudge.analysis.python_ast import short
from kerneljudge.analysis.torch_names import (
    NON_TENSOR_METHODS, TENSOR_ATTRS, TENSOR_HINTS, nn_is_compute, nn_module_class, torch_call_returns_tensor,
)

_NUMBER_TYPES = ("int", "float", "bool", "str", "complex")
SCALAR_BUILTINS = frozenset({"sum", "max", "min", "abs", "pow", "round", "divmod"})


class TensorScope:
    """Which local names in one reachable function are tensor-like (flow-insensitive)."""

    def __init__(self, prog: Program, func: ast.AST, cls: Optional[str], entry: bool):
        self.p, self.cls, self.info = prog, cls, prog.attr_info(cls)
        self.names: set[str] = set()
        self.modules: set[str] = set()  # local names bound to nn modules (loop over self.layers, m = self.fc)
        self._params(func, entry)
        nodes = [n for n in ast.walk(func) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr,
                                                             ast.For, ast.AsyncFor, ast.comprehension, ast.withitem))]
        for _ in range(3):
            for n in nodes:
                self._bind(n)
        # names only ever bound to list/tuple displays: `outs + [y]` and `outs * 2` are container operations
        bound: dict[str, set[bool]] = {}
        for n in nodes:
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                    if isinstance(t, ast.Name):
                        bound.setdefault(t.id, set()).add(self._display(n.value))
            elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr)):
                bound.update({x.id: {False} for x in ast.walk(n.target) if isinstance(x, ast.Name)})
        self.containers = {name for name, kinds in bound.items() if kinds == {True}}

    def _display(self, e: ast.AST) -> bool:
        if isinstance(e, (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)):
            return True
        if isinstance(e, ast.BinOp):
            return self._display(e.left) or self._display(e.right)
        return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("list", "tuple")

    def container(self, e: ast.AST) -> bool:
        return self._display(e) or (isinstance(e, ast.Name) and e.id in self.containers) or (
            isinstance(e, ast.BinOp) and (self.container(e.left) or self.container(e.right)))

    def _params(self, func: ast.AST, entry: bool) -> None:
        for f in [func] + [n for n in ast.walk(func)
                           if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]:
            a = f.args
            params = a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]
            if f is func and entry and params and self.cls:
                params = params[1:]  # self
            defaults = dict(zip(reversed(a.posonlyargs + a.args), reversed(a.defaults)))
            hinted = {n.value.id for n in ast.walk(f) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                      and n.attr in TENSOR_HINTS}
            for p in params:
                ann = short(p.annotation) if p.annotation is not None else ""
                if p.arg in ("self", "cls") or ann in _NUMBER_TYPES or ann.startswith(("int", "float", "bool", "str")):
                    continue
                default = defaults.get(p)
                if isinstance(default, ast.Constant) and not isinstance(default.value, type(None)):
                    continue  # eps=1e-5, dim=1: Python scalars
                if (f is func and entry) or "Tensor" in ann or p.arg in hinted:
                    self.names.add(p.arg)

    def _bind(self, n: ast.AST) -> None:
        if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
            it = n.iter
            if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                    and it.func.id in ("enumerate", "zip", "reversed") and it.args):
                if it.func.id == "zip" and isinstance(n.target, ast.Tuple):
                    return self._bind_pairs(n.target.elts, it.args)
                if it.func.id == "enumerate" and isinstance(n.target, ast.Tuple) and len(n.target.elts) == 2:
                    return self._bind_pairs(n.target.elts[1:], it.args[:1])
                it = it.args[0]
            return self._bind_pairs([n.target], [it], iterate=True)
        if isinstance(n, ast.withitem):
            return
        value = n.value
        targets = n.targets if isinstance(n, ast.Assign) else [n.target]
        if value is None:
            return
        for t in targets:
            if (isinstance(t, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
                    and len(t.elts) == len(value.elts)):
                self._bind_pairs(t.elts, value.elts)
            else:
                self._bind_pairs([t], [value])

    def _bind_pairs(self, targets, values, iterate: bool = False) -> None:
        for t, v in zip(targets, values):
            if self.is_module(v):
                self.modules.update(x.id for x in ast.walk(t) if isinstance(x, ast.Name))
            elif self.is_tensor(v):
                self.names.update(x.id for x in ast.walk(t) if isinstance(x, ast.Name))

    def is_module(self, v: ast.AST) -> bool:
        if isinstance(v, ast.Call):
            name = nn_module_class(self.p.ix.qualname(v.func) or "")
            if name:  # relu = nn.ReLU() inside forward
                return nn_is_compute(name)
            if isinstance(v.func, ast.Attribute) and v.func.attr in ("children", "modules", "values"):
                v = v.func.value
        while isinstance(v, ast.Subscript):
            v = v.value
        return self.self_attr(v) in self.info.nn_attrs or (isinstance(v, ast.Name) and v.id in self.modules)

    @staticmethod
    def self_attr(node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return node.attr
        return None

    def is_tensor(self, e: ast.AST, depth: int = 0) -> bool:
        if depth > 30:
            return False
        rec = lambda x: self.is_tensor(x, depth + 1)  # noqa: E731
        if isinstance(e, ast.Name):
            return e.id in self.names
        if isinstance(e, ast.Attribute):
            attr = self.self_attr(e)
            if attr is not None:
                return attr in self.info.tensor_attrs
            if self.self_attr(e.value) in self.info.nn_attrs:
                return True  # self.linear.weight
            return e.attr in TENSOR_ATTRS and rec(e.value)
        if isinstance(e, ast.Subscript):
            return rec(e.value)
        if isinstance(e, ast.Starred):
            return rec(e.value)
        if isinstance(e, ast.BinOp):
            return rec(e.left) or rec(e.right)
        if isinstance(e, ast.UnaryOp):
            return rec(e.operand)
        if isinstance(e, ast.IfExp):
            return rec(e.body) or rec(e.orelse)
        if isinstance(e, ast.Compare):
            return any(rec(x) for x in [e.left] + e.comparators)
        if isinstance(e, (ast.List, ast.Tuple)):
            return any(rec(x) for x in e.elts)
        if isinstance(e, ast.Call):
            return self._call_is_tensor(e, rec)
        return False

    def _call_is_tensor(self, e: ast.Call, rec) -> bool:
        q = self.p.ix.qualname(e.func)
        if q:
            if q.startswith("torch."):
                return torch_call_returns_tensor(q)
            if q.startswith("builtins.") and q[9:] in SCALAR_BUILTINS:
                return any(rec(a) for a in e.args)
            return False
        f = e.func
        if self.self_attr(f) in self.info.nn_attrs or self.self_attr(f) in self.info.local_attrs:
            return True
        if isinstance(f, ast.Name) and f.id in self.modules:
            return True
        if self.p.is_kernel_call(e, self.cls):
            return True
        if isinstance(f, ast.Attribute):
            return rec(f.value) and f.attr not in NON_TENSOR_METHODS
        return False
