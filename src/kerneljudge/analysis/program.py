"""Facts about a solution that the strict compute rules need: its classes and what their attributes hold,
its extension modules and Triton kernels, which local functions launch kernels, and which code
`ModelNew.forward` can reach within the file.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterator, Optional

from kerneljudge.analysis.backend import build_kind, find_builds, jit_functions
from kerneljudge.analysis.python_ast import Index, const_str
from kerneljudge.analysis.torch_names import (ATEN_LIKE_OPS, NN_CONTAINERS, nn_is_compute, nn_module_class,
                                              torch_call_returns_tensor)

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
ENTRY_METHODS = ("forward", "__call__")
# autograd.Function methods that never run in a timed forward pass (the judge runs no backward)
_NOT_FORWARD = ("backward", "jvp", "vjp", "setup_context", "vmap")
_HOOKS = frozenset({"register_forward_hook", "register_forward_pre_hook", "register_module_forward_hook",
                    "register_module_forward_pre_hook"})


@dataclass
class ClassInfo:
    """What `self.<attr>` holds in one class (gathered from every method and the class body)."""

    nn_attrs: dict = field(default_factory=dict)     # attr -> "nn.Linear": torch modules that compute
    local_attrs: dict = field(default_factory=dict)  # attr -> {local class names} (instances/containers)
    ext_attrs: set = field(default_factory=set)      # extension modules or kernel callables
    tensor_attrs: set = field(default_factory=set)   # parameters, buffers, tensors
    alias_attrs: dict = field(default_factory=dict)  # attr -> torch function it aliases (self.act = F.relu)


class Program:
    def __init__(self, index: Index):
        self.ix = index
        self.builds = find_builds(index)
        jits = jit_functions(index)
        self.jit_names = set(jits)
        self.jit_defs = {id(n) for n in jits.values() if isinstance(n, _FUNCS)}
        self.methods: dict[str, dict[str, ast.AST]] = {
            name: {f.name: f for f in c.body if isinstance(f, _FUNCS)} for name, c in index.classes.items()}
        self.ext_names: set[str] = set()
        self.ext_funcs: set[str] = set()
        self._collect_extensions()
        self.info = {name: ClassInfo() for name in index.classes}
        for _ in range(2):  # twice: an attribute may hold another attribute's extension (self.f = self.ext.f)
            for name, c in index.classes.items():
                self._class_info(c, self.info[name])
        self.kernel_funcs: set[int] = set()
        self._collect_kernel_funcs()
        self.entry_class = self._entry_class()
        self.entries = ([m for m in (self.method(self.entry_class, n) for n in ENTRY_METHODS) if m]
                        if self.entry_class else [])

    # ------------------------------------------------------------------------------ classes/methods
    def bases(self, cls: str) -> list[str]:
        c = self.ix.classes.get(cls)
        return ([b.id for b in c.bases if isinstance(b, ast.Name) and b.id in self.ix.classes and b.id != cls]
                if c else [])

    def method(self, cls: Optional[str], name: str, seen: frozenset = frozenset()) -> Optional[ast.AST]:
        """Method lookup through local base classes (a simple depth-first MRO is enough here)."""
        if not cls or cls in seen:
            return None
        found = self.methods.get(cls, {}).get(name)
        for base in ([] if found else self.bases(cls)):
            found = found or self.method(base, name, seen | {cls})
        return found

    def all_methods(self, cls: str) -> list[ast.AST]:
        out, todo, seen = [], [cls], set()
        while todo:
            c = todo.pop()
            if c not in seen:
                seen.add(c)
                out.extend(self.methods.get(c, {}).values())
                todo.extend(self.bases(c))
        return out

    def attr_info(self, cls: Optional[str]) -> ClassInfo:
        """ClassInfo merged over local bases."""
        merged = ClassInfo()
        for c in ([cls] + self._ancestors(cls)) if cls else []:
            info = self.info.get(c)
            if info:
                for k, v in info.nn_attrs.items():
                    merged.nn_attrs.setdefault(k, v)
                for k, v in info.local_attrs.items():
                    merged.local_attrs.setdefault(k, set()).update(v)
                merged.ext_attrs |= info.ext_attrs
                merged.tensor_attrs |= info.tensor_attrs
                for k, v in info.alias_attrs.items():
                    merged.alias_attrs.setdefault(k, v)
        return merged

    def _ancestors(self, cls: str) -> list[str]:
        out, todo = [], list(self.bases(cls))
        while todo:
            c = todo.pop()
            if c not in out and c != cls:
                out.append(c)
                todo.extend(self.bases(c))
        return out

    def class_of(self, node: ast.AST) -> Optional[str]:
        """Class whose method (possibly through nested functions) contains `node`."""
        parent = self.ix.parents.get(node)
        while parent is not None:
            if isinstance(parent, ast.ClassDef):
                return parent.name
            parent = self.ix.parents.get(parent)
        return None

    def _entry_class(self) -> Optional[str]:
        if "ModelNew" in self.ix.classes:
            return "ModelNew"
        for node in self.ix.tree.body:  # `ModelNew = MyModel`
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in self.ix.classes:
                if any(isinstance(t, ast.Name) and t.id == "ModelNew" for t in node.targets):
                    return node.value.id
        return None

    # ---------------------------------------------------------------------------------- extensions
    def is_ext(self, expr: ast.AST, cls: Optional[str] = None) -> bool:
        """Whether `expr` denotes a compiled extension module, or a function of one."""
        if isinstance(expr, ast.Call):
            if build_kind(self.ix, expr):
                return True
            f = expr.func
            if isinstance(f, ast.Name) and f.id in self.ext_funcs:
                return True
            if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"
                    and f.attr in self.ext_funcs):
                return True
            if self.ix.qualname(f) == "builtins.getattr" and expr.args:
                return self.is_ext(expr.args[0], cls)
            return False
        if isinstance(expr, ast.Name):
            return expr.id in self.ext_names
        if isinstance(expr, ast.Attribute):
            if isinstance(expr.value, ast.Name) and expr.value.id == "self":
                return expr.attr in self.attr_info(cls).ext_attrs
            q = self.ix.qualname(expr)
            if q and q.startswith("torch.ops.") and len(q.split(".")) > 2:
                return q.split(".")[2] not in ATEN_LIKE_OPS  # a custom op the solution registered
            return self.is_ext(expr.value, cls)
        return False

    def _collect_extensions(self) -> None:
        assigns = [n for n in self.ix.nodes if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None]
        funcs = [n for n in self.ix.nodes if isinstance(n, _FUNCS)]
        for _ in range(5):  # names of extensions, functions returning them, aliases of their functions
            before = (len(self.ext_names), len(self.ext_funcs))
            for node in assigns:
                if self.is_ext(node.value):
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                        if isinstance(t, ast.Name):
                            self.ext_names.add(t.id)
            for f in funcs:
                if any(isinstance(r, ast.Return) and r.value is not None and self.is_ext(r.value) for r in ast.walk(f)):
                    self.ext_funcs.add(f.name)
            if (len(self.ext_names), len(self.ext_funcs)) == before:
                break

    def _class_info(self, cls: ast.ClassDef, info: ClassInfo) -> None:
        for node in ast.walk(cls):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        self._classify_attr(info, t.attr, node.value, cls.name)
                    elif isinstance(t, ast.Name) and self.ix.parents.get(node) is cls:
                        self._classify_attr(info, t.id, node.value, cls.name)  # class attribute
            elif isinstance(node, ast.Call) and node.args:
                f = node.func
                is_self = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"
                name = const_str(node.args[0]) if is_self else (const_str(node.args[1]) if len(node.args) > 1 else None)
                if is_self and f.attr in ("register_buffer", "register_parameter") and name:
                    info.tensor_attrs.add(name)
                elif is_self and f.attr == "add_module" and name and len(node.args) > 1:
                    self._classify_attr(info, name, node.args[1], cls.name)
                elif self.ix.qualname(f) == "builtins.setattr" and len(node.args) > 2 and name:
                    if isinstance(node.args[0], ast.Name) and node.args[0].id == "self":
                        self._classify_attr(info, name, node.args[2], cls.name)

    def _module_sources(self, value: ast.AST) -> list:
        """Nodes that may build the modules `value` holds: the expression itself and, for a container
        built from a list variable (`nn.Sequential(*layers)`), what the enclosing function puts in it."""
        nodes = list(ast.walk(value))
        container = isinstance(value, ast.Name) or (
            isinstance(value, ast.Call) and nn_module_class(self.ix.qualname(value.func) or "") in NN_CONTAINERS)
        names = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} if container else set()
        func = self.ix.parents.get(value)
        while func is not None and not isinstance(func, _FUNCS):
            func = self.ix.parents.get(func)
        for n in ast.walk(func) if names and func is not None else ():
            if isinstance(n, (ast.Assign, ast.AugAssign)) and any(
                    isinstance(t, ast.Name) and t.id in names
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target])):
                nodes.extend(ast.walk(n.value))
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                  and n.func.attr in ("append", "extend", "insert")
                  and isinstance(n.func.value, ast.Name) and n.func.value.id in names):
                nodes.extend(x for a in n.args for x in ast.walk(a))
        return nodes

    def _classify_attr(self, info: ClassInfo, attr: str, value: ast.AST, cls: str) -> None:
        if self.is_ext(value, cls) or any(isinstance(n, ast.Call) and build_kind(self.ix, n) for n in ast.walk(value)):
            info.ext_attrs.add(attr)
            return
        compute, local = None, set()
        for n in self._module_sources(value):  # also modules inside Sequential(...) / ModuleList(layers)
            if isinstance(n, ast.Call):
                q = self.ix.qualname(n.func) or ""
                name = nn_module_class(q)
                if name and nn_is_compute(name):
                    compute = compute or f"nn.{name}"
                elif isinstance(n.func, ast.Name) and n.func.id in self.ix.classes:
                    local.add(n.func.id)
            elif isinstance(n, ast.Name) and n.id in self.ix.classes and n.id != cls:
                local.add(n.id)
        top = nn_module_class(self.ix.qualname(value.func) or "") if isinstance(value, ast.Call) else None
        if compute:
            info.nn_attrs[attr] = compute if top not in NN_CONTAINERS else f"nn.{top} holding {compute}"
        if local:
            info.local_attrs.setdefault(attr, set()).update(local)
        if compute or local:
            return
        q = self.ix.qualname(value)
        if isinstance(value, ast.Call):
            if torch_call_returns_tensor(self.ix.qualname(value.func) or ""):
                info.tensor_attrs.add(attr)
        elif q and q.startswith("torch."):
            info.alias_attrs[attr] = q
        elif isinstance(value, ast.Attribute) and value.attr in ("weight", "bias"):
            info.tensor_attrs.add(attr)  # self.w = self.linear.weight

    # -------------------------------------------------------------------------------------- kernels
    def is_kernel_call(self, call: ast.Call, cls: Optional[str]) -> bool:
        f = call.func
        if isinstance(f, ast.Subscript):  # kernel[grid](...)
            base = f.value
            return (isinstance(base, ast.Name) and base.id in self.jit_names) or (
                isinstance(base, ast.Attribute) and base.attr in self.jit_names)
        if isinstance(f, ast.Name):
            if f.id in self.jit_names:
                return True
            fn = self.ix.functions.get(f.id)
            if fn is not None and id(fn) in self.kernel_funcs:
                return True
        if self.is_ext(f, cls):
            return True
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
            m = self.method(cls, f.attr)
            if m is not None and id(m) in self.kernel_funcs:
                return True
            info = self.attr_info(cls)
            for local in info.local_attrs.get(f.attr, ()):
                if any(id(m) in self.kernel_funcs for m in self.all_methods(local)):
                    return True
        return False

    def _collect_kernel_funcs(self) -> None:
        funcs = [n for n in self.ix.nodes if isinstance(n, _FUNCS) and id(n) not in self.jit_defs]
        for _ in range(6):
            before = len(self.kernel_funcs)
            for f in funcs:
                if id(f) not in self.kernel_funcs:
                    cls = self.class_of(f)
                    if any(isinstance(c, ast.Call) and self.is_kernel_call(c, cls) for c in self.own_nodes(f)):
                        self.kernel_funcs.add(id(f))
            if len(self.kernel_funcs) == before:
                break

    def contains_kernel_call(self, nodes, cls: Optional[str]) -> bool:
        return any(isinstance(c, ast.Call) and self.is_kernel_call(c, cls) for n in nodes for c in ast.walk(n))

    # ---------------------------------------------------------------------------------- reachability
    def own_nodes(self, func: ast.AST) -> Iterator[ast.AST]:
        """Nodes of a function body, skipping asserts (allowed checks) and nested Triton kernels."""
        stack = list(reversed(func.body)) if hasattr(func, "body") and isinstance(func.body, list) else [func.body]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Assert) or id(node) in self.jit_defs:
                continue
            yield node
            stack.extend(reversed(list(ast.iter_child_nodes(node))))

    def reachable(self) -> list[ast.AST]:
        """Functions forward can reach within the file: called/referenced helpers, methods of self, of
        local classes it uses (instances held in attributes, autograd Functions, nested modules)."""
        order, seen, todo = [], set(), list(self.entries) + self._hooks()
        while todo:
            f = todo.pop(0)
            if id(f) in seen or id(f) in self.jit_defs:
                continue
            seen.add(id(f))
            order.append(f)
            cls = self.class_of(f)
            info = self.attr_info(cls)
            for n in self.own_nodes(f):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                    if n.id in self.ix.functions:
                        todo.append(self.ix.functions[n.id])
                    elif n.id in self.ix.classes and n.id not in (cls, self.entry_class):
                        todo.extend(m for m in self.all_methods(n.id) if m.name not in _NOT_FORWARD)  # used in forward
                elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                    if n.value.id == "self":
                        m = self.method(cls, n.attr)
                        todo.extend([m] if m else [])
                        for local in info.local_attrs.get(n.attr, ()):  # built in __init__, used here
                            todo.extend(m for m in self.all_methods(local)
                                        if m.name not in _NOT_FORWARD + ("__init__", "__new__"))
                    elif n.value.id in self.ix.classes:
                        m = self.method(n.value.id, n.attr)
                        todo.extend([m] if m else [])
                elif (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Call)
                      and isinstance(n.value.func, ast.Name) and n.value.func.id == "super"):
                    for base in self.bases(cls) if cls else []:
                        m = self.method(base, n.attr)
                        todo.extend([m] if m else [])
        return order

    def _hooks(self) -> list[ast.AST]:
        """Forward hooks run inside the forward call: lambdas and local functions registered as hooks."""
        out = []
        if not self.entries:
            return out
        for node in self.ix.nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _HOOKS:
                for arg in list(node.args) + [k.value for k in node.keywords]:
                    if isinstance(arg, ast.Lambda):
                        out.append(arg)
                    elif isinstance(arg, ast.Name) and arg.id in self.ix.functions:
                        out.append(self.ix.functions[arg.id])
                    elif isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "self":
                        m = self.method(self.class_of(node), arg.attr)
                        out.extend([m] if m else [])
        return out

    def used_exports(self) -> Optional[set[str]]:
        """Extension functions forward's code calls (`ext.f`, `self.ext.f`, aliases of them); None when
        that cannot be known (no forward, or a function looked up by a computed name)."""
        if not self.entries:
            return None
        aliases: dict[str, set[str]] = {}  # "name" / "self.attr" -> extension attributes bound to it
        for node in self.ix.nodes:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute)
                    and self.is_ext(node.value.value, self.class_of(node))):
                for t in node.targets:
                    key = (t.id if isinstance(t, ast.Name)
                           else (f"self.{t.attr}" if isinstance(t, ast.Attribute) else None))
                    if key:
                        aliases.setdefault(key, set()).add(node.value.attr)
        used: set[str] = set()
        for func in self.reachable():
            cls = self.class_of(func)
            for n in self.own_nodes(func):
                if isinstance(n, ast.Attribute) and self.is_ext(n.value, cls):
                    used.add(n.attr)
                elif isinstance(n, ast.Name):
                    used |= aliases.get(n.id, set())
                elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
                    used |= aliases.get(f"self.{n.attr}", set())
                elif (isinstance(n, ast.Call) and self.ix.qualname(n.func) == "builtins.getattr" and n.args
                      and self.is_ext(n.args[0], cls)):
                    name = const_str(n.args[1]) if len(n.args) > 1 else None
                    if name is None:
                        return None
                    used.add(name)
        return used
