"""Strict-policy rules: the work must happen in the solution's own kernels.

Looks at the code `ModelNew.forward` reaches (program.Program.reachable) for PyTorch compute: torch.*
and F.* calls (however aliased), torch.ops.aten, compute tensor methods, calls of nn modules, and
operators on tensors.  Arithmetic rule: `@` is always compute; `+ - * / // % **`, unary minus, `+=`-style
updates and comparisons are compute when an operand is *tensor-like*: a forward argument, a parameter or
buffer, the result of a torch call, tensor method or kernel, or anything derived from those -- but not
shapes, sizes, strides, `.item()`, Python numbers or their arithmetic.  Compute inside an `except`
around a kernel call, or in the branch that replaces a kernel call, is reported as a fallback.

Library compute outside torch (CuPy, nvmath-python, CUTLASS's prebuilt ops, TVM's operators: library_compute.py)
is reported under the same code and rules. Device code of the library backends (numba, CuTe and TileLang
functions, Helion's hl.tile loops: library_kernels.py) is the solution's kernel and is never inspected, as
@triton.jit bodies are not.
"""

from __future__ import annotations

import ast
from typing import Optional

from kerneljudge.analysis.findings import Hit
from kerneljudge.analysis.library_compute import ArrayScope, library_site, plan_references
from kerneljudge.analysis.library_kernels import Launches, device_code, own_kernels
from kerneljudge.analysis.program import Program
from kerneljudge.analysis.python_ast import short
from kerneljudge.analysis.tensor_scope import SCALAR_BUILTINS, TensorScope
from kerneljudge.analysis.torch_names import (
    ALLOWED_METHODS, AMBIGUOUS_METHODS, COMPUTE_METHODS, NON_TENSOR_ATTRS, OPERATOR_COMPUTE, TENSOR_CODEGEN_NOTE,
    TORCH_CODEGEN, nn_is_compute, nn_module_class, torch_call_is_compute, torch_reference_is_compute,
)

_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
        ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
_LITERALS = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.JoinedStr, ast.ListComp, ast.DictComp, ast.SetComp)
_NN_CALL_METHODS = frozenset({"forward", "__call__", "_conv_forward", "_forward"})


class ComputeRules:
    def __init__(self, prog: Program):
        self.p, self.ix = prog, prog.ix
        self.hits: list[Hit] = []
        self._memo: dict[int, bool] = {}
        self._blocks: dict[int, tuple] = {}
        kernels = own_kernels(self.ix)
        self.device = device_code(self.ix, kernels)  # library-backend kernel bodies: never PyTorch compute
        self.launches = Launches(self.ix, kernels)

    def run(self, backend: str) -> list[Hit]:
        reach = self.p.reachable()
        for func in reach:
            self._function(func, entry=func in self.p.entries)
        self._reference_model()
        self._codegen()
        cls_node = self.ix.classes.get(self.p.entry_class or "")
        line = cls_node.lineno if cls_node is not None else 1
        if backend == "torch":
            self.hits.append(Hit("no_kernel", line, "no custom kernel found (no load_inline build, @triton.jit "
                                 "function, CuPy/cuda.core kernel, numba/Helion/CuTe/TileLang kernel); under strict "
                                 "the work must happen in the solution's own kernels"))
        elif reach and not any(self._kernel([f], self.p.class_of(f)) for f in reach):
            self.hits.append(Hit("kernel_not_called", line, f"forward never visibly calls the {backend} kernels "
                                 "built in this file; a kernel whose result is unused does not count"))
        return self.hits

    # ------------------------------------------------------------------------------- per function
    def _function(self, func: ast.AST, entry: bool) -> None:
        cls = self.p.class_of(func)
        scope = TensorScope(self.p, func, cls, entry)
        name = getattr(func, "name", "a hook lambda")
        where = "forward" if entry else f"`{name}` (reached from forward)"
        arrays = ArrayScope(self.ix, func)
        for node in self.p.own_nodes(func):
            if id(node) in self.device:
                continue
            phrase = library_site(self.ix, node, arrays)  # first: a CuPy array's .sum() is CuPy's, not torch's
            if phrase:
                self._report(node, phrase, where, func, cls, what="")
                continue
            phrase = self._site(node, scope)
            if phrase:
                self._report(node, phrase, where, func, cls)

    def _site(self, node: ast.AST, s: TensorScope) -> Optional[str]:
        if isinstance(node, ast.Call):
            return self._call_site(node, s)
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            parent = self.ix.parents.get(node)
            if not (isinstance(parent, ast.Call) and parent.func is node) and not (
                    isinstance(parent, ast.Attribute) and parent.value is node):
                q = self.ix.qualname(node) or ""
                if q.startswith("torch.") and torch_reference_is_compute(q):
                    return f"passes {q} as a function"  # map(torch.relu, xs), reduce(torch.add, ...)
        if isinstance(node, ast.BinOp):
            op = _OPS.get(type(node.op), "?")
            if op == "@":
                return "applies `@` (matrix multiply)"
            if not (s.container(node.left) or s.container(node.right) or isinstance(node.left, _LITERALS)
                    or isinstance(node.right, _LITERALS)) and (s.is_tensor(node.left) or s.is_tensor(node.right)):
                return f"applies `{op}` to tensors"
        if (isinstance(node, ast.AugAssign) and s.is_tensor(node.target) and not s.container(node.target)
                and not s.container(node.value)):
            return f"applies `{_OPS.get(type(node.op), '?')}=` to a tensor"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Invert)) and s.is_tensor(node.operand):
            return "negates a tensor"
        if isinstance(node, ast.Compare) and not any(isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn))
                                                     for o in node.ops):
            if any(s.is_tensor(x) for x in [node.left] + node.comparators):
                return "compares tensors elementwise"
        return None

    def _call_site(self, node: ast.Call, s: TensorScope) -> Optional[str]:
        f = node.func
        q = self.ix.qualname(f)
        shown = lambda name: short(f) if short(f) == name else f"{short(f)} ({name})"  # noqa: E731
        if q and q.startswith("torch."):
            nn = nn_module_class(q)
            if nn:  # building a module is no compute; calling it right away is (`nn.ReLU()(x)`)
                parent = self.ix.parents.get(node)
                called = isinstance(parent, ast.Call) and parent.func is node
                return f"builds and calls {shown(q)}" if called and nn_is_compute(nn) else None
            return f"calls {shown(q)}" if torch_call_is_compute(q) else None
        if q == "builtins.getattr":
            return None  # computed lookups on torch are reported file-wide (_codegen)
        if q and q.startswith("builtins.") and q[9:] in SCALAR_BUILTINS:
            return f"calls {q[9:]}() on tensors" if any(s.is_tensor(a) for a in node.args) else None
        if q and q.startswith("operator.") and q[9:] in OPERATOR_COMPUTE:
            return f"calls {q}" if "matmul" in q or any(s.is_tensor(a) for a in node.args) else None
        if q:
            return None
        attr = s.self_attr(f)
        if attr is not None:
            if attr in s.info.nn_attrs:
                return f"calls self.{attr} (an {s.info.nn_attrs[attr]} module)"
            alias = s.info.alias_attrs.get(attr)
            return f"calls self.{attr} ({alias})" if alias and torch_call_is_compute(alias) else None
        if isinstance(f, ast.Name) and f.id in s.modules:
            return f"calls {f.id} (a torch nn module)"
        if isinstance(f, ast.Subscript) and s.is_module(f):
            return f"calls {short(f)} (a torch nn module)"
        if not isinstance(f, ast.Attribute):
            return None
        recv, m = f.value, f.attr
        if s.self_attr(recv) in s.info.nn_attrs:
            return (f"calls {short(f)} (an {s.info.nn_attrs[s.self_attr(recv)]} module)"
                    if (m in _NN_CALL_METHODS or m in COMPUTE_METHODS) else None)
        if (isinstance(recv, ast.Name) and recv.id in ("self", "cls")) or isinstance(recv, _LITERALS + (ast.Constant,)):
            return None
        if self.p.is_ext(recv, s.cls) or s.self_attr(recv) in s.info.local_attrs or self.ix.qualname(recv):
            return None
        if s.is_tensor(recv):
            return None if m in ALLOWED_METHODS or m in NON_TENSOR_ATTRS else f"calls the tensor method .{m}()"
        if m in COMPUTE_METHODS and m not in AMBIGUOUS_METHODS:
            return f"calls .{m}() on `{short(recv, 30)}`"
        return None

    # ------------------------------------------------------------------------------- fallback paths
    def _report(self, node: ast.AST, phrase: str, where: str, func: ast.AST, cls: Optional[str],
                what: str = " (PyTorch compute)") -> None:
        """`what` names the compute unless the phrase already does (library phrases say which library)."""
        line = node.lineno
        if self._in_fallback(node, func, cls):
            msg = (f"{where} {phrase}{what} at line {line} as a fallback to the custom kernel; "
                   f"under strict a {'PyTorch' if what else 'library'} fallback path is not allowed")
            self.hits.append(Hit("fallback", line, msg))
        else:
            msg = (f"{where} {phrase}{what} at line {line}; "
                   "under strict the work must happen in the solution's own kernels")
            self.hits.append(Hit("torch_compute", line, msg))

    def _kernel(self, nodes, cls: Optional[str]) -> bool:
        """Whether any of `nodes` contains a kernel call (memoised per node: sites share ancestors)."""
        for n in nodes:
            if id(n) not in self._memo:
                self._memo[id(n)] = self.p.contains_kernel_call([n], cls) or self.launches.contains(n)
            if self._memo[id(n)]:
                return True
        return False

    def _block(self, stmts: list, cls: Optional[str]) -> tuple[dict, int, int]:
        """(position of each statement, first swallowing try with a kernel, last kernel-calling statement)."""
        key = id(stmts)
        if key not in self._blocks:
            first_try, last_kernel = len(stmts), -1
            for i, st in enumerate(stmts):
                if self._kernel([st], cls):
                    last_kernel = i
                    if first_try == len(stmts) and isinstance(st, ast.Try) and self._kernel(st.body, cls) and any(
                            not any(isinstance(x, ast.Raise) for x in ast.walk(h)) for h in st.handlers):
                        first_try = i  # try: kernel(...) except: pass -- execution falls through
            self._blocks[key] = ({id(b): i for i, b in enumerate(stmts)}, first_try, last_kernel)
        return self._blocks[key]

    def _in_fallback(self, node: ast.AST, func: ast.AST, cls: Optional[str]) -> bool:
        child, parent = node, self.ix.parents.get(node)
        while parent is not None and child is not func:
            if isinstance(parent, ast.ExceptHandler):
                if self._kernel(self.ix.parents[parent].body, cls):
                    return True  # except: around a kernel call
            elif isinstance(parent, (ast.If, ast.IfExp)):
                body = parent.body if isinstance(parent.body, list) else [parent.body]
                orelse = parent.orelse if isinstance(parent.orelse, list) else [parent.orelse]
                if any(child is b for b in body) and self._kernel(orelse, cls):
                    return True  # the branch that replaces the kernel
                if any(child is b for b in orelse) and self._kernel(body, cls):
                    return True
            for block in ("body", "orelse", "finalbody"):
                stmts = getattr(parent, block, None)
                if not isinstance(stmts, list):
                    continue
                where, first_try, last_kernel = self._block(stmts, cls)
                pos = where.get(id(child))
                if pos is None:
                    continue
                if first_try < pos:
                    return True  # try: kernel ... except: pass, then PyTorch
                if isinstance(child, ast.If) and not child.orelse and self._exits(child.body) and last_kernel > pos \
                        and any(x is node for b in child.body for x in ast.walk(b)):
                    return True  # if <kernel unusable>: return torch...; return kernel(...)
            child, parent = parent, self.ix.parents.get(parent)
        return False

    @staticmethod
    def _exits(stmts: list) -> bool:
        return bool(stmts) and isinstance(stmts[-1], (ast.Return, ast.Raise))

    # ----------------------------------------------------------------------------------- whole file
    def _reference_model(self) -> None:
        own = self.ix.classes.get("Model")
        inside_own = {id(n) for n in ast.walk(own)} if own is not None else set()
        for node in self.ix.nodes:
            hit = None
            if isinstance(node, ast.Name) and node.id == "Model" and isinstance(node.ctx, ast.Load):
                hit = "refers to the reference Model"
            elif isinstance(node, ast.Attribute) and node.attr == "Model" and isinstance(node.ctx, ast.Load):
                hit = f"refers to the reference Model through {short(node)}"
            elif isinstance(node, ast.alias) and "Model" in (node.name.split(".")[-1], node.asname):
                hit = "imports a Model (the reference)"
            elif (isinstance(node, ast.Constant) and node.value == "Model"
                  and self._name_lookup(self.ix.parents.get(node))):
                hit = "looks up the reference Model by name"
            if hit and id(node) not in inside_own:
                line = getattr(node, "lineno", None) or getattr(self.ix.parents.get(node), "lineno", 1)
                self.hits.append(Hit("reference_model", line,
                                     f"{hit} at line {line}; under strict the solution may not "
                                     "call or subclass the reference"))

    def _name_lookup(self, parent: Optional[ast.AST]) -> bool:
        if isinstance(parent, ast.Subscript):
            return True  # globals()["Model"], vars(module)["Model"]
        return isinstance(parent, ast.Call) and self.ix.qualname(parent.func) in (
            "builtins.getattr", "builtins.hasattr", "operator.attrgetter")

    def _codegen(self) -> None:
        for line, q in plan_references(self.ix):
            self.hits.append(Hit("torch_compute", line, f"uses {q} at line {line}; library code generators, "
                                 "prebuilt ops and plans do the work for the solution; under strict the work "
                                 "must happen in the solution's own kernels"))
        for node in self.ix.nodes:
            if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
                parent = self.ix.parents.get(node)
                if isinstance(parent, ast.Attribute) and parent.value is node:
                    continue
                q = self.ix.qualname(node) or ""
                if q.startswith(TORCH_CODEGEN):
                    self.hits.append(Hit("torch_compute", node.lineno,
                                         f"uses {q} at line {node.lineno}; {TENSOR_CODEGEN_NOTE}"))
            elif (isinstance(node, ast.Call) and self.ix.qualname(node.func) == "builtins.getattr"
                  and len(node.args) >= 2):
                base = self.ix.qualname(node.args[0]) or ""
                if base.split(".")[0] == "torch" and self.ix.qualname(node) is None:
                    self.hits.append(Hit("torch_compute", node.lineno, f"looks up a torch function by a computed name "
                                         f"({short(node)}) at line {node.lineno}; under strict the work must happen "
                                         "in the solution's own kernels, and a computed name hides which op runs"))
