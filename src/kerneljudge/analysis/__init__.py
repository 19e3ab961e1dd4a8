"""Static analysis of solution source text, run in the judge's (trusted) process.

Nothing here imports or executes the solution: it is parsed with `ast`, and the C++/CUDA it embeds is
read by a small tokenizer.  See docs/static-analysis.md for the rules and their limits.

    detect_backend(source) -> one of core.types.BACKENDS ("cuda", "triton", "cpp", "cupy", "cuda_core",
                              "numba", "helion", "cute", "tilelang") or "torch" (no kernel of its own)
    analyze(source, policy="strict", backend=None) -> list[Finding]   (sorted by line)

May import: core. Never the solution (its text is parsed, not imported).
"""

from __future__ import annotations

import ast
from typing import Optional

from kerneljudge.core import pyast
from kerneljudge.core.types import BACKENDS as KERNEL_BACKENDS
from kerneljudge.analysis.backend import detect_backend, detect_from_index, facts
from kerneljudge.analysis.compute import ComputeRules
from kerneljudge.analysis.cxx_scan import looks_like_cxx, scan_sources
from kerneljudge.analysis.findings import POLICIES, RULES, Finding, Hit, check_policy, resolve
from kerneljudge.analysis.kernel_names import cxx_function_names
from kerneljudge.analysis.library_kernels import runtime_sources
from kerneljudge.analysis.program import Program
from kerneljudge.analysis.python_ast import Index, segments_text
from kerneljudge.analysis.safety import SafetyRules

__all__ = ["analyze", "detect_backend", "Finding", "POLICIES", "RULES"]
BACKENDS = KERNEL_BACKENDS + ("torch",)   # "torch": no kernel of its own, only PyTorch calls


def analyze(source: str, policy: str = "strict", backend: Optional[str] = None) -> list[Finding]:
    """Findings for one solution; `blocking=True` ones mean reject under `policy`."""
    check_policy(policy)
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; expected one of {BACKENDS}")
    try:
        tree = pyast.parse(source)
    except SyntaxError as e:
        line = e.lineno or 1
        return resolve([Hit("syntax_error", line, f"the solution does not parse: {e.msg} at line {line}")], policy)
    except (ValueError, RecursionError, MemoryError) as e:  # null bytes, absurd nesting
        return resolve([Hit("syntax_error", 1, f"the solution cannot be parsed ({type(e).__name__})")], policy)
    try:
        return resolve(_hits(tree, backend), policy)
    except RecursionError:  # hostile nesting deep enough to defeat the walkers: never accept it blindly
        return resolve([Hit("syntax_error", 1, "the solution is nested too deeply to be analysed")], policy)
    except Exception as e:  # a checker bug must not wave a solution through (nor crash the judge)
        return resolve([Hit("analysis_error", 1,
                            f"static analysis failed on this solution ({type(e).__name__}: {e})")], policy)


def _hits(tree: ast.Module, backend: Optional[str]) -> list[Hit]:
    index = Index(tree)
    hits: list[Hit] = []
    if not _defines_modelnew(tree):
        hits.append(Hit("missing_modelnew", 1, "the solution defines no class ModelNew at module level"))
    hits += SafetyRules(index).run()
    program = Program(index)
    found = facts(index)
    hits += ComputeRules(program).run(backend or detect_from_index(index, found))
    # C++/CUDA text: what builds compile, what CuPy/cuda.core compile at runtime, plus any literal that looks
    # like C++ (e.g. written to a .cu file)
    runtime = runtime_sources(found.own)
    used = program.used_exports()
    if used is not None and runtime:  # their kernels are launched from Python: forward can reach every one
        used = used | {n for segments in runtime for n in cxx_function_names(segments_text(segments)[0])}
    sources, seen = [], set()
    for segments in [s for b in program.builds for s in b.sources] + runtime + [
            [(n.value, n.lineno)] for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and looks_like_cxx(n.value)]:
        key = repr(segments)
        if key not in seen:  # the same literal may be reached directly and through a build
            seen.add(key)
            sources.append(segments)
    hits += scan_sources(sources, used)
    return hits


def _defines_modelnew(tree: ast.Module) -> bool:
    stack = list(tree.body)
    while stack:  # module level, including inside if/try/with blocks, but not inside functions
        node = stack.pop()
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "ModelNew" for t in targets):
                return True
        if (isinstance(node, (ast.Import, ast.ImportFrom))
                and any((a.asname or a.name) == "ModelNew" for a in node.names)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))
    return False
