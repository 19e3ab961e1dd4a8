"""The names a profiler will show for a solution's own kernels, read from its source text (never executed).

Sources of names: `__global__` functions and other top-level C++ functions in embedded C++/CUDA (load_inline
sources, CuPy and cuda.core code compiled at runtime, any literal that looks like C++), the functions
`load_inline` exports and the op namespace the solution registers, `@triton.jit` functions, and the
library-backend kernels of library_kernels.py under the names their libraries give them (numba: the Python
function name inside its mangled symbol; Helion: `_helion_<function>`; CuTe DSL: `kernel_cutlass_<function>`
followed by its argument mangling; TileLang: `<prim_func>_kernel`, then `_1`, `_2`... for further T.Kernel
blocks; CuPy ElementwiseKernel/ReductionKernel: their `name`).
"""

from __future__ import annotations

import ast
import re

from kerneljudge.core import pyast
from kerneljudge.analysis.backend import find_builds, jit_functions
from kerneljudge.analysis.cxx_scan import looks_like_cxx
from kerneljudge.analysis.cxx_tokens import Source, is_ident
from kerneljudge.analysis.library_kernels import own_kernels
from kerneljudge.analysis.python_ast import Index, segments_text

# header-only template libraries a solution may compile into its own kernels
# (name -> (how its kernels are named, how a source shows it uses the library))
HEADER_LIBRARIES = {
    "cub": (re.compile(r"(?<![\w])cub::"), re.compile(r"(?<![\w])cub::|<cub/")),
    "thrust": (re.compile(r"(?<![\w])thrust::"), re.compile(r"(?<![\w])thrust::|<thrust/")),
    "cutlass": (re.compile(r"(?<![\w])(?:cutlass|cute)::|cutlass_"),
                re.compile(r"(?<![\w])(?:cutlass|cute)::|<cutlass/|<cute/")),
}



def custom_kernel_names(source: str) -> frozenset[str]:
    """Names of the solution's own kernels and functions, from its source text (never executed)."""
    try:
        tree = pyast.parse(source)
        index = Index(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    names: set[str] = set()
    try:
        names.update(jit_functions(index))
        texts: list[str] = []
        for kernel in own_kernels(index):  # cupy, cuda_core, numba, helion, cute, tilelang (library_kernels.py)
            names.update(kernel.names)
            texts += [segments_text(segments)[0] for segments in kernel.sources]
        for build in find_builds(index):
            for segments in build.sources:
                texts.append(segments_text(segments)[0])
            for kw in build.node.keywords:
                if kw.arg == "functions":
                    listed = index.strings(kw.value) or []
                    names.update(t.strip() for seg, _ in listed for t in seg.replace(",", "\n").splitlines()
                                 if is_ident(t.strip()))
        texts += [n.value for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and isinstance(n.value, str) and looks_like_cxx(n.value)]
        for text in texts:
            names |= cxx_function_names(text)
    except RecursionError:
        pass
    return frozenset(n for n in names if n and len(n) <= 200)


def cxx_function_names(text: str) -> set[str]:
    """`__global__` kernels, functions defined at top level, names bound by m.def/TORCH_LIBRARY."""
    try:
        src = Source(text)
    except RecursionError:
        return set()
    names = set(src.mentions) | set(src.exports) | set(src.exports.values())
    toks = src.toks
    for i, t in enumerate(toks):
        if t.text == "__global__":
            for j in range(i + 1, min(i + 40, len(toks) - 1)):
                word = toks[j].text
                if word in ("{", ";"):
                    break
                if is_ident(word) and toks[j + 1].text in ("(", "<") and word not in (
                        "__launch_bounds__", "__attribute__", "alignas", "__declspec", "void", "template"):
                    if toks[j + 1].text == "(" or word not in ("static", "inline"):
                        names.add(word)
                        break
        elif t.text in ("TORCH_LIBRARY", "TORCH_LIBRARY_FRAGMENT") and i + 2 < len(toks) and is_ident(toks[i + 2].text):
            names.add(toks[i + 2].text)  # the solution's own op namespace
    return {n for n in names if n not in ("PYBIND11_MODULE", "TORCH_LIBRARY", "TORCH_LIBRARY_FRAGMENT")}


def header_libraries(source: str) -> frozenset[str]:
    """Template libraries (CUB, Thrust, CUTLASS) the solution's own sources use."""
    return frozenset(lib for lib, (_, used) in HEADER_LIBRARIES.items() if used.search(source))


__all__ = ["HEADER_LIBRARIES", "custom_kernel_names", "cxx_function_names", "header_libraries"]
