"""The solution's own kernels in the library backends, read from its AST (never imported or run).

    cupy       cupy.RawKernel / RawModule: CUDA C++ that NVRTC compiles at runtime (the `__global__`
               functions are the kernels); ElementwiseKernel / ReductionKernel: a kernel CuPy writes around
               the solution's own operation, named by its `name` argument; functions under cupyx.jit.rawkernel
    cuda_core  cuda.core (or cuda.core.experimental) Program(code, ...): CUDA C++ compiled at runtime
    numba      functions under numba.cuda.jit (`device=True` ones are device functions, not kernels)
    helion     functions under helion.kernel: Helion emits one Triton kernel named `_helion_<function>`
    cute       functions under cutlass.cute.kernel (device code; the CuTe DSL names the compiled kernel
               `kernel_cutlass_<function>_<argument mangling>`) and cutlass.cute.jit (host launchers)
    tilelang   functions under tilelang.language.prim_func (`@T.prim_func`), and functions under tilelang.jit
               whose own body opens `with T.Kernel(...)` (the eager style); TileLang names the compiled kernel
               `<function>_kernel` (`_kernel_1`, ... for further T.Kernel blocks). A tilelang.jit function that
               only returns a nested prim_func (the lazy style) is a host factory: calling it, or
               `tilelang.compile(prim_func)`, gives a compiled kernel

Everything here is a table or a finder over `Index`; backend.py decides which backend a file is, kernel
names come from here for profile classification, and compute.py skips the device code found here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Optional

from kerneljudge.analysis.python_ast import Index, Segments

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)

# decorator -> (backend, kind, profile name of the function `f`, or None when not launched by name)
#   kind "kernel": launched as a kernel; "device": called only from kernels; "host": compiled launcher code
DECORATORS: dict[str, tuple[str, str, Optional[Callable[[str], str]]]] = {
    "numba.cuda.jit": ("numba", "kernel", lambda f: f),
    "helion.kernel": ("helion", "kernel", lambda f: f"_helion_{f}"),
    "cutlass.cute.kernel": ("cute", "kernel", lambda f: f"kernel_cutlass_{f}"),
    "cutlass.cute.jit": ("cute", "host", None),
    "cupyx.jit.rawkernel": ("cupy", "kernel", lambda f: f),
    "tilelang.language.prim_func": ("tilelang", "kernel", lambda f: f"{f}_kernel"),
    "tilelang.jit": ("tilelang", "host", lambda f: f"{f}_kernel"),       # "kernel" when its body opens T.Kernel
    "tilelang.jit.jit": ("tilelang", "host", lambda f: f"{f}_kernel"),
}
# CuPy classes that build a kernel: class name -> (slot, keyword, default) of the kernel-name argument
CUPY_KERNEL_CLASSES: dict[str, tuple[int, str, Optional[str]]] = {
    "RawKernel": (1, "name", None),
    "RawModule": (-1, "", None),                   # names come from its code's __global__ functions
    "ElementwiseKernel": (3, "name", "kernel"),
    "ReductionKernel": (6, "name", "reduce_kernel"),
}
# functions that launch an already-built kernel object
LAUNCH_FUNCTIONS = frozenset({"cuda.core.launch", "cuda.core.experimental.launch"})
# methods that fetch a kernel from a compiled module (cupy RawModule.get_function, cuda.core ObjectCode.get_kernel)
KERNEL_GETTERS = frozenset({"get_function", "get_kernel"})
# Helion's device loops: code inside them becomes the Triton kernel; code around them runs on the host
HELION_LOOPS = frozenset({"helion.language.tile", "helion.language.grid"})
CUTE_COMPILE = frozenset({"cutlass.cute.compile"})
# TileLang: compiling a prim_func gives a kernel object; `with T.Kernel(...)` opens a kernel's launch frame
TILELANG_COMPILE = frozenset({"tilelang.compile", "tilelang.jit.compile"})
TILELANG_KERNEL_FRAME = "tilelang.language.Kernel"


@dataclass(frozen=True)
class OwnKernel:
    """One kernel (or device/host function) the solution writes through a library."""

    backend: str
    kind: str                        # "kernel", "device" or "host" (see DECORATORS)
    node: ast.AST                    # the def, or the call that builds the kernel
    names: tuple = ()                # names the profiler shows for it, where the source says them
    sources: tuple = ()              # Segments of C++/CUDA text compiled at runtime (cupy, cuda_core)
    bound: tuple = ()                # Python names it is reachable under (def name, `k = cuda.jit(f)`)


def call_arg(call: ast.Call, slot: int, keyword: str) -> Optional[ast.AST]:
    """The argument in positional `slot` or passed as `keyword` (None when absent or behind *args)."""
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if 0 <= slot < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: slot + 1]):
        return call.args[slot]
    return None


def _decorator(index: Index, expr: ast.AST) -> Optional[tuple[str, ast.AST]]:
    """(qualname, node) of a known kernel decorator, bare (`@cuda.jit`) or called (`@cuda.jit("void(f4[:])")`)."""
    q = index.qualname(expr.func if isinstance(expr, ast.Call) else expr)
    return (q, expr) if q in DECORATORS else None


def _device_only(decorator: ast.AST) -> bool:
    return isinstance(decorator, ast.Call) and any(
        kw.arg == "device" and isinstance(kw.value, ast.Constant) and kw.value.value is True
        for kw in decorator.keywords)


def _opens_kernel_frame(index: Index, node: ast.AST) -> bool:
    """Whether a function's own body (nested functions aside) opens `with T.Kernel(...)`: TileLang's eager style,
    where the tilelang.jit function itself is the kernel."""
    stack = list(node.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (*_FUNCS, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, (ast.With, ast.AsyncWith)) and any(
                isinstance(i.context_expr, ast.Call) and index.qualname(i.context_expr.func) == TILELANG_KERNEL_FRAME
                for i in n.items):
            return True
        stack.extend(ast.iter_child_nodes(n))
    return False


def _from_def(index: Index, node: ast.AST) -> Optional[OwnKernel]:
    for d in node.decorator_list:
        found = _decorator(index, d)
        if found:
            backend, kind, name = DECORATORS[found[0]]
            if backend == "numba" and _device_only(found[1]):
                kind = "device"
            if backend == "tilelang" and kind == "host" and _opens_kernel_frame(index, node):
                kind = "kernel"
            names = (name(node.name),) if name and kind == "kernel" else ()
            return OwnKernel(backend, kind, node, names, bound=(node.name,))
    return None


def _from_wrapper(index: Index, node: ast.Assign) -> Optional[OwnKernel]:
    """`k = cuda.jit(f)`, `k = cuda.jit("sig")(f)`, `k = helion.kernel(config=c)(f)`, `k = tilelang.jit(f)` for a
    local function f."""
    call = node.value
    if not isinstance(call, ast.Call) or not call.args or not isinstance(call.args[0], ast.Name):
        return None
    found = _decorator(index, call.func)
    if not found:
        return None
    backend, kind, name = DECORATORS[found[0]]
    fn = call.args[0].id
    wrapped = index.functions.get(fn)
    if backend == "tilelang" and kind == "host" and wrapped is not None and _opens_kernel_frame(index, wrapped):
        kind = "kernel"
    targets = tuple(t.id for t in node.targets if isinstance(t, ast.Name))
    names = (name(fn),) if name and kind == "kernel" else ()
    return OwnKernel(backend, kind, node, names, bound=targets)


def _cupy_class(index: Index, call: ast.Call) -> Optional[str]:
    q = index.qualname(call.func) or ""
    parts = q.split(".")
    return parts[-1] if parts[0] == "cupy" and parts[-1] in CUPY_KERNEL_CLASSES else None


def _is_program(index: Index, call: ast.Call) -> bool:
    q = index.qualname(call.func) or ""
    return q.startswith("cuda.core.") and q.rsplit(".", 1)[-1] == "Program"


def _from_call(index: Index, call: ast.Call) -> Optional[OwnKernel]:
    cls = _cupy_class(index, call)
    if cls:
        slot, keyword, default = CUPY_KERNEL_CLASSES[cls]
        code = call_arg(call, 0, "code") if cls in ("RawKernel", "RawModule") else None
        text = index.strings(code) if code is not None else None
        names: tuple = ()
        if slot >= 0:
            arg = call_arg(call, slot, keyword)
            given = index.known_str(arg) if arg is not None else default
            names = (given,) if given else ()
        return OwnKernel("cupy", "kernel", call, names, (text,) if text else ())
    if _is_program(index, call):
        text = index.strings(call_arg(call, 0, "code") or ast.Constant(None))
        return OwnKernel("cuda_core", "kernel", call, (), (text,) if text else ())
    return None


def own_kernels(index: Index) -> list[OwnKernel]:
    """Every library-backend kernel, device function and launcher the file defines, in source order."""
    out = []
    for node in index.nodes:
        found = None
        if isinstance(node, _FUNCS):
            found = _from_def(index, node)
        elif isinstance(node, ast.Assign):
            found = _from_wrapper(index, node)
        elif isinstance(node, ast.Call):
            found = _from_call(index, node)
        if found:
            out.append(found)
    return sorted(out, key=lambda k: (getattr(k.node, "lineno", 0), getattr(k.node, "col_offset", 0)))


def runtime_sources(kernels: list[OwnKernel]) -> list[Segments]:
    """C++/CUDA text the solution compiles at runtime through CuPy or cuda.core (where readable)."""
    return [s for k in kernels for s in k.sources]


def device_code(index: Index, kernels: list[OwnKernel]) -> set[int]:
    """ids of nodes that are device code (or DSL host code compiled with it): the strict PyTorch-compute rules
    do not apply inside them. Helion kernels count only inside their hl.tile/hl.grid loops: the code around
    them is ordinary PyTorch run on the host."""
    out: set[int] = set()
    for k in kernels:
        if not isinstance(k.node, _FUNCS):
            continue
        if k.backend != "helion":
            out.update(id(n) for stmt in k.node.body for n in ast.walk(stmt))
            continue
        for n in ast.walk(k.node):
            if (isinstance(n, (ast.For, ast.AsyncFor)) and isinstance(n.iter, ast.Call)
                    and index.qualname(n.iter.func) in HELION_LOOPS):
                out.update(id(x) for x in ast.walk(n))
    return out


class Launches:
    """Which calls launch the solution's library kernels: a kernel object called (`k(grid, block, args)`,
    `ew(x, y)`, `helion_fn(x)`, a compiled CuTe function, a compiled TileLang kernel `k(x, out)`), a
    numba/cupyx.jit launch `k[grid, block](...)`, or cuda.core's `launch(stream, config, kernel, ...)`; and which
    local functions make one. A kernel object kept in a container (`cache[key] = cute.compile(...)`,
    `self.kernels[shape] = tilelang_factory(...)`) is launched as `cache[key](...)`."""

    def __init__(self, index: Index, kernels: list[OwnKernel]):
        self.ix = index
        # a TileLang factory (a tilelang.jit function of the lazy style) only builds: calling what it returns launches
        self.names: set[str] = {b for k in kernels if k.kind in ("kernel", "host")
                                and not (k.backend == "tilelang" and k.kind == "host") for b in k.bound}
        # TileLang functions whose call (or `.compile(...)`) returns a compiled kernel object
        self.factories: set[str] = {b for k in kernels if k.backend == "tilelang" for b in k.bound}
        self.attrs: set[str] = set()
        for node in index.nodes:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and self._builds(node.value):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(t, ast.Subscript):
                        t = t.value   # a container of kernel objects: `cache[key] = ...`
                    if isinstance(t, ast.Name):
                        self.names.add(t.id)
                    elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        self.attrs.add(t.attr)
        self.funcs: set[str] = set()  # local functions and methods that launch (directly or through each other)
        defs = [n for n in index.nodes if isinstance(n, _FUNCS)]
        for _ in range(6):
            before = len(self.funcs)
            self.funcs.update(f.name for f in defs if f.name not in self.names and self.contains(f))
            if len(self.funcs) == before:
                break

    def _builds(self, expr: ast.AST) -> bool:
        for n in ast.walk(expr):
            if isinstance(n, ast.Call):
                f = n.func
                if _cupy_class(self.ix, n) or self.ix.qualname(f) in CUTE_COMPILE | TILELANG_COMPILE:
                    return True
                if isinstance(f, ast.Attribute) and f.attr in KERNEL_GETTERS:
                    return True
                if isinstance(f, ast.Attribute) and f.attr == "compile":
                    f = f.value   # a TileLang jit function's `.compile(**sizes)`
                if isinstance(f, ast.Name) and f.id in self.factories:
                    return True
        return False

    def _named(self, f: ast.AST) -> bool:
        if isinstance(f, ast.Name):
            return f.id in self.names
        return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" \
            and f.attr in self.attrs

    def is_launch(self, call: ast.Call) -> bool:
        """A direct launch (not a call of a local function that launches)."""
        f = call.func
        if self.ix.qualname(f) in LAUNCH_FUNCTIONS:
            return True
        if isinstance(f, ast.Subscript):  # numba / cupyx.jit: kernel[blocks, threads](...)
            return self._named(f.value)
        if isinstance(f, ast.Call):  # built and called at once: `tilelang_factory(m, n)(x, out)`
            return self._builds(f)
        return self._named(f)

    def contains(self, node: ast.AST) -> bool:
        """Whether `node` holds a launch, or a call of a local function or method that makes one."""
        return any(isinstance(c, ast.Call) and (self.is_launch(c) or self._calls_launcher(c)) for c in ast.walk(node))

    def _calls_launcher(self, call: ast.Call) -> bool:
        f = call.func
        if isinstance(f, ast.Name):
            return f.id in self.funcs
        return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" \
            and f.attr in self.funcs


__all__ = ["CUPY_KERNEL_CLASSES", "DECORATORS", "TILELANG_COMPILE", "Launches", "OwnKernel", "call_arg", "device_code",
           "own_kernels", "runtime_sources"]
