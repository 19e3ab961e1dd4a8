"""Which form a solution's own kernels take, found from its AST alone (docs/static-analysis.md).

cuda       `load_inline(...)` with non-empty `cuda_sources` (or `cpp_extension.load` of `.cu` files)
triton     a function decorated with `triton.jit` (bare, called, or under `triton.autotune`/`heuristics`)
cupy       cupy.RawKernel / RawModule / ElementwiseKernel / ReductionKernel, or a cupyx.jit.rawkernel
cuda_core  cuda.core (or cuda.core.experimental) `Program(code, ...)`: CUDA C++ compiled at runtime
numba      a function decorated with numba.cuda.jit that is not `device=True`
helion     a function decorated with helion.kernel
cute       a function decorated with cutlass.cute.kernel
tilelang   a function decorated with tilelang.language.prim_func (`@T.prim_func`), or with tilelang.jit and opening
           `with T.Kernel(...)` in its own body
cpp        `load_inline(...)` with C++ sources only (or `load` of C++ files)
torch      none of these

`DETECTORS` is the one place that decides: the first form present wins, so its order is the preference
when a file holds several (cuda > triton > cupy > cuda_core > numba > helion > cute > tilelang > cpp > torch).
Adding a backend is one entry there (and its finder in library_kernels.py).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, NamedTuple, Optional

from kerneljudge.core import pyast
from kerneljudge.analysis.library_kernels import own_kernels
from kerneljudge.analysis.python_ast import Index, const_str, tail_name

# load_inline(name, cpp_sources, cuda_sources=None, functions=None, ...): positional slots
_INLINE_SLOTS = {"cpp_sources": 1, "cuda_sources": 2}
_CUDA_FILE_SUFFIXES = (".cu", ".cuh")


@dataclass
class Build:
    """One extension build call and the source text it compiles (where it can be read statically)."""

    node: ast.Call
    cuda: bool
    sources: list = field(default_factory=list)  # segment lists (python_ast.Segments) of C++/CUDA text


def _arg(index: Index, call: ast.Call, name: str, slot: Optional[int]) -> Optional[ast.AST]:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
        if kw.arg is None:  # load_inline(**{"cuda_sources": ...}) or load_inline(**cfg) with cfg a dict display
            for d in [kw.value] + index.bindings(kw.value):
                if isinstance(d, ast.Dict):
                    for k, v in zip(d.keys, d.values):
                        if k is not None and const_str(k) == name:
                            return v
    if (slot is not None and len(call.args) > slot
            and not any(isinstance(a, ast.Starred) for a in call.args[: slot + 1])):
        return call.args[slot]
    return None


def build_kind(index: Index, call: ast.Call) -> Optional[str]:
    """"inline" for load_inline, "files" for cpp_extension.load, else None."""
    q = index.qualname(call.func)
    name = q.rsplit(".", 1)[-1] if q else tail_name(call.func)
    if name == "load_inline":
        return "inline"
    if name == "load" and q and "cpp_extension" in q:
        return "files"
    return None


def find_builds(index: Index) -> list[Build]:
    builds = []
    for node in index.nodes:
        if not isinstance(node, ast.Call):
            continue
        kind = build_kind(index, node)
        if kind == "inline":
            sources, cuda = [], False
            for name, slot in _INLINE_SLOTS.items():
                arg = _arg(index, node, name, slot)
                if arg is None:
                    continue
                text = index.strings(arg)
                if text is None:  # passed but unreadable statically (built at runtime): assume non-empty
                    cuda = cuda or name == "cuda_sources"
                elif any(t.strip() for t, _ in text):
                    sources.append(text)
                    cuda = cuda or name == "cuda_sources"
            builds.append(Build(node, cuda, sources))
        elif kind == "files":
            files = index.strings(_arg(index, node, "sources", 1) or ast.Constant(None)) or []
            cuda = any(t.strip().endswith(_CUDA_FILE_SUFFIXES) for seg, _ in files for t in seg.splitlines())
            builds.append(Build(node, cuda, []))
    return builds


def _is_jit(index: Index, expr: ast.AST) -> bool:
    target = expr.func if isinstance(expr, ast.Call) else expr
    q = index.qualname(target)
    return bool(q) and q.split(".")[0] == "triton" and q.rsplit(".", 1)[-1] == "jit"


def jit_functions(index: Index) -> dict[str, ast.AST]:
    """Names of Triton kernels: `@triton.jit` defs and `k = triton.jit(fn)` bindings."""
    out: dict[str, ast.AST] = {}
    for node in index.nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_is_jit(index, d) for d in node.decorator_list):
                out[node.name] = node
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _is_jit(index, node.value.func):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node
    return out


class Facts(NamedTuple):
    """What the detectors look at, gathered once per file."""

    builds: list       # load_inline / cpp_extension.load builds
    triton: dict       # @triton.jit kernels
    own: list          # library-backend kernels (library_kernels.own_kernels)


def _library(backend: str) -> Callable[[Facts], bool]:
    return lambda facts: any(k.backend == backend and k.kind == "kernel" for k in facts.own)


# (backend, present?) in order of preference. Why this order: `cuda` is compiled by the judge's own trusted
# build and was the first form; Triton stays ahead of the Python DSLs (Helion itself emits Triton); CuPy and
# cuda.core carry CUDA C++ source like `cuda` (CuPy first: cuda.core solutions often use CuPy arrays as glue,
# but CuPy only counts when it builds a kernel); then the Python DSLs; `cpp` last because a C++-only
# extension next to any GPU form is host glue. Every name in core.types.BACKENDS has exactly one entry.
DETECTORS: tuple[tuple[str, Callable[[Facts], bool]], ...] = (
    ("cuda", lambda facts: any(b.cuda for b in facts.builds)),
    ("triton", lambda facts: bool(facts.triton)),
    ("cupy", _library("cupy")),
    ("cuda_core", _library("cuda_core")),
    ("numba", _library("numba")),
    ("helion", _library("helion")),
    ("cute", _library("cute")),
    ("tilelang", _library("tilelang")),
    ("cpp", lambda facts: bool(facts.builds)),
)


def facts(index: Index) -> Facts:
    return Facts(find_builds(index), jit_functions(index), own_kernels(index))


def detect_from_index(index: Index, found: Optional[Facts] = None) -> str:
    found = found or facts(index)
    return next((name for name, present in DETECTORS if present(found)), "torch")


def detect_backend(source: str) -> str:
    """One of core.types.BACKENDS or "torch"; unparsable source has no detectable kernel ("torch")."""
    try:
        tree = pyast.parse(source)
        return detect_from_index(Index(tree))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "torch"


__all__ = ["DETECTORS", "Build", "Facts", "build_kind", "detect_backend", "detect_from_index", "facts",
           "find_builds", "jit_functions"]
