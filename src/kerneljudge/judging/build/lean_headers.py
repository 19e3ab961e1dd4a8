"""A CUDA unit that includes torch/extension.h is compiled first with torch/types.h in its place.

Why: nvcc parses every header three times (cudafe++ and cicc for the device side, gcc for the host side), and
torch/extension.h is torch's whole C++ frontend plus pybind11 and Python.h. On a 2-core CPU, one CUDA unit
took 120 s with it and 45 s with torch/types.h (scripts/build_units.py). load_inline already puts
`#include <torch/types.h>` at the top of every CUDA unit, and its Python bindings live in the C++ unit,
which keeps torch/extension.h, so a kernel file rarely needs more than types.h declares.

Where it does (it names torch::nn, pybind11, ...), the lean compile fails and the worker compiles the
original text: the result is the original build, later by one failed compile. A lean build that compiles
uses the same declarations of everything it names, so it is the same program; builds record which they were.
"""

from __future__ import annotations

import re

HEAVY = re.compile(r'^([ \t]*#[ \t]*include[ \t]*)[<"]torch/extension\.h[>"]', re.MULTILINE)
LEAN = "torch/types.h"
CUDA_SUFFIXES = (".cu", ".cuh")


def lean(text: str) -> str | None:
    """`text` with each `#include <torch/extension.h>` made `#include <torch/types.h>`; None if it has none."""
    new, count = HEAVY.subn(rf"\g<1><{LEAN}>", text)
    return new if count else None


def lean_request(request: dict) -> dict | None:
    """A copy of a validated build request whose CUDA sources include types.h instead of extension.h, or None
    when no CUDA source includes extension.h (then there is nothing to try)."""
    if request["kind"] == "inline":
        cuda = request.get("cuda_sources") or []
        lighter = [lean(s) for s in cuda]
        if not any(x is not None for x in lighter):
            return None
        return {**request, "cuda_sources": [x if x is not None else s for x, s in zip(lighter, cuda)]}
    sources, changed = [], False
    for source in request.get("sources") or []:
        new = lean(source["text"]) if source["name"].endswith(CUDA_SUFFIXES) else None
        changed |= new is not None
        sources.append({**source, "text": new} if new is not None else source)
    return {**request, "sources": sources} if changed else None
