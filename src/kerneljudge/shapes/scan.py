"""Module-level integer constants of a problem file, read from its text (nothing is executed).

Problem.constants holds only literals that `ast.literal_eval` accepts; upstream KernelBench also writes
sizes as arithmetic (`M = 1024 * 2`), as tuple assignments (`height, width = 32, 32`), with annotations
(`dim: int = 4096`) and from other constants (`hidden = 4 * n_embd`). This module evaluates exactly those
forms with a tiny arithmetic evaluator over ints, floats and earlier constants, and records how each name is
used, which the role rules in derive.py read:

- `axis_uses`: names passed as a `dim=` / `axis=` keyword (or `dims=`, `start_dim=`, `end_dim=`) anywhere;
- `read`: names read anywhere outside their own assignment (a constant nobody reads is never changed);
- `model_reads`: names the code of class Model reads as module globals (not as its own parameters or locals):
  a solution that copies the problem copies such a constant, and the judge cannot change it there.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass, field
from typing import Any

from kerneljudge.core import pyast

AXIS_KEYWORDS = frozenset({"dim", "axis", "dims", "start_dim", "end_dim"})
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
           ast.Mod: operator.mod, ast.Div: operator.truediv, ast.Pow: operator.pow}
_CALLS = {"int": int, "max": max, "min": min, "round": round, "abs": abs}
_MAX_POW = 64           # 2 ** 64 is as large as a size expression gets; anything larger is not a size
_MAX_ABS = 1 << 62


class _NotConstant(Exception):
    pass


@dataclass(frozen=True)
class Constant:
    """One module-level constant: an int, or a tuple/list of ints."""

    name: str
    value: Any                    # int | tuple[int, ...] | list[int]
    expr: str                     # its right-hand side as written (ast.unparse)
    deps: tuple[str, ...] = ()    # other constants the expression reads (empty for a literal)

    @property
    def elements(self) -> tuple[int, ...]:
        return tuple(self.value) if isinstance(self.value, (tuple, list)) else (self.value,)


@dataclass(frozen=True)
class Scan:
    constants: dict[str, Constant] = field(default_factory=dict)   # integer-valued only, in file order
    others: dict[str, Any] = field(default_factory=dict)           # other evaluable constants (floats, dicts...)
    axis_uses: frozenset[str] = frozenset()
    read: frozenset[str] = frozenset()
    model_reads: frozenset[str] = frozenset()


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_int_value(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return bool(value) and all(is_int(v) for v in value)
    return is_int(value)


def scan_text(text: str) -> Scan:
    """The integer constants of a problem file and how its names are used. Raises SyntaxError."""
    tree = pyast.parse(text)
    env: dict[str, Any] = {}
    nodes: dict[str, ast.expr] = {}
    deps: dict[str, tuple[str, ...]] = {}
    for stmt in tree.body:
        for target, node in _assignments(stmt):
            try:
                value = evaluate(node, env)
            except _NotConstant:
                env.pop(target, None)   # a later non-constant assignment hides the earlier one
                nodes.pop(target, None)
                continue
            env[target] = value
            nodes[target] = node
            deps[target] = tuple(sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & set(env)))
    constants = {name: Constant(name, env[name], ast.unparse(nodes[name]), deps[name])
                 for name in env if is_int_value(env[name])}
    others = {name: env[name] for name in env if name not in constants}
    return Scan(constants, others, frozenset(_axis_uses(tree) & set(env)), frozenset(_reads(tree) & set(env)),
                frozenset(_model_global_reads(tree) & set(env)))


def evaluate(node: ast.expr, env: dict[str, Any]) -> Any:
    """Arithmetic over int/float/bool literals and earlier constants, in tuples, lists and dicts (metadata
    such as `HELD_OUT = [{"vocab": 128256 + 1}]`); raises _NotConstant otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool, str)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        raise _NotConstant(node.id)
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [evaluate(e, env) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        try:
            return {evaluate(k, env): evaluate(v, env) for k, v in zip(node.keys, node.values)}
        except TypeError:   # an unhashable key
            raise _NotConstant("dict") from None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = evaluate(node.operand, env)
        if not isinstance(value, (int, float)):
            raise _NotConstant("unary")
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = evaluate(node.left, env), evaluate(node.right, env)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
            raise _NotConstant("binop")
        if isinstance(node.op, ast.Pow) and abs(right) > _MAX_POW:
            raise _NotConstant("pow")
        try:
            value = _BINOPS[type(node.op)](left, right)
        except (ZeroDivisionError, OverflowError, ValueError):
            raise _NotConstant("arith") from None
        if isinstance(value, complex) or abs(value) > _MAX_ABS:
            raise _NotConstant("range")
        return value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALLS \
            and not node.keywords and node.args:
        args = [evaluate(a, env) for a in node.args]
        try:
            return _CALLS[node.func.id](*args)
        except (TypeError, ValueError, OverflowError):
            raise _NotConstant("call") from None
    raise _NotConstant(type(node).__name__)


def recompute(expr: str, env: dict[str, Any]) -> Any:
    """A dependent constant's expression evaluated with its inputs changed (env: name -> value); None when
    it fails."""
    try:
        return evaluate(pyast.parse(expr, mode="eval").body, env)
    except (_NotConstant, SyntaxError):
        return None


def _assignments(stmt: ast.stmt) -> list[tuple[str, ast.expr]]:
    """(name, value node) pairs of a module-level assignment: `a = ...`, `a: int = ...`, `a, b = x, y`."""
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return [(stmt.target.id, stmt.value)]
    if not isinstance(stmt, ast.Assign):
        return []
    pairs: list[tuple[str, ast.expr]] = []
    for target in stmt.targets:
        if isinstance(target, ast.Name):
            pairs.append((target.id, stmt.value))
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(stmt.value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(stmt.value.elts):
            pairs += [(t.id, v) for t, v in zip(target.elts, stmt.value.elts) if isinstance(t, ast.Name)]
    return pairs


def _axis_uses(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in AXIS_KEYWORDS:
            found |= {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
    return found


def _reads(tree: ast.Module) -> set[str]:
    """Names loaded anywhere except on the right of their own module-level assignment."""
    found: set[str] = set()
    for stmt in tree.body:
        own = {name for name, _ in _assignments(stmt)}
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in own:
                found.add(node.id)
    return found


def _model_global_reads(tree: ast.Module) -> set[str]:
    """Names the class Model's body and methods load that none of its functions binds (a parameter, an assignment,
    a loop or import target): module globals read by the problem's own model."""
    found: set[str] = set()
    for stmt in tree.body:
        if not (isinstance(stmt, ast.ClassDef) and stmt.name == "Model"):
            continue
        bound: set[str] = set()
        for node in ast.walk(stmt):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                args = node.args
                bound |= {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
                          if a is not None}
            elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                bound.add(node.id)
            elif isinstance(node, ast.alias):
                bound.add((node.asname or node.name).split(".")[0])
        found |= {node.id for node in ast.walk(stmt)
                  if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound}
    return found
