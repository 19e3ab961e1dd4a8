"""Solution side of the trusted builder: load_inline and load no longer compile in the solution's process.

A solution's `torch.utils.cpp_extension.load_inline(...)` (or `load(...)` with source files) is turned into
a plain build request (every argument that changes the result; sources as text) and handed to
`request_build`, which the worker wires to the judge: the orchestrator builds it in its own box, in a
folder keyed by a hash of the request, and copies the finished extension into this process's scratch
folder. The extension is then imported from that copy exactly as torch would import it. A failed build
is raised as torch raises it (RuntimeError "Error building extension '<name>': <compiler output>").

Arguments that only say how or where to build (build_directory, verbose, keep_intermediates, use_pch)
are dropped: the judge decides where builds go (the solution could not write elsewhere anyway), and a
precompiled header would be written into torch's own folder.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
from typing import Any, Callable

RequestBuild = Callable[[dict[str, Any]], str]

_DROPPED = {"build_directory", "verbose", "keep_intermediates", "use_pch"}


class BuildFailed(Exception):
    """Raised by a request_build callback when the judge's build failed; the message is the build log."""


def _strings(value: Any, what: str) -> list[str]:
    """torch accepts None, one string, or a list of strings here."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise TypeError(f"{what} must be a string or a list of strings, got {type(value).__name__}")


def _flags(arguments: dict[str, Any]) -> dict[str, Any]:
    out = {k: _strings(arguments.get(k), k)
           for k in ("extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths")}
    if arguments.get("with_sycl") or arguments.get("extra_sycl_cflags") or arguments.get("sycl_sources"):
        raise RuntimeError("SYCL extensions are not supported by the judge")
    with_cuda = arguments.get("with_cuda")
    if with_cuda is not None and not isinstance(with_cuda, bool):
        raise TypeError("with_cuda must be True, False or None")
    out["with_cuda"] = with_cuda
    out["is_python_module"] = bool(arguments.get("is_python_module", True))
    return out


def _functions(value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return {f: f for f in value}
    if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return dict(value)
    raise ValueError(f"Expected 'functions' to be a list or dict, but was {type(value)}")


def inline_request(arguments: dict[str, Any]) -> dict[str, Any]:
    """The build request for a load_inline call (its bound arguments)."""
    name = arguments.get("name")
    if not isinstance(name, str):
        raise TypeError("the extension's name must be a string")
    return {"kind": "inline", "name": name,
            "cpp_sources": _strings(arguments.get("cpp_sources"), "cpp_sources"),
            "cuda_sources": _strings(arguments.get("cuda_sources"), "cuda_sources"),
            "functions": _functions(arguments.get("functions")),
            "with_pytorch_error_handling": bool(arguments.get("with_pytorch_error_handling", True)),
            "no_implicit_headers": bool(arguments.get("no_implicit_headers", False)),
            **_flags(arguments)}


def files_request(arguments: dict[str, Any]) -> dict[str, Any]:
    """The build request for a load call: its source files travel as text (the builder cannot read them)."""
    name = arguments.get("name")
    if not isinstance(name, str):
        raise TypeError("the extension's name must be a string")
    if arguments.get("is_standalone"):
        raise RuntimeError("standalone executables (is_standalone=True) are not supported by the judge")
    sources, seen = [], set()
    for path in _strings(arguments.get("sources"), "sources"):
        base = os.path.basename(path)
        if base in seen:
            raise ValueError(f"two sources are named {base!r}; the judge builds them in one folder")
        seen.add(base)
        with open(path, encoding="utf-8", errors="strict") as f:
            sources.append({"name": base, "text": f.read()})
    return {"kind": "files", "name": name, "sources": sources, **_flags(arguments)}


def import_extension(name: str, path: str, is_python_module: bool) -> Any:
    """What torch does with a finished build: import it as a module, or load it as a library."""
    if is_python_module:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import the extension {name!r} from {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    import torch

    torch.ops.load_library(path)
    return path


def _build(request: dict[str, Any], request_build: RequestBuild) -> Any:
    try:
        path = request_build(request)
    except BuildFailed as exc:
        raise RuntimeError(f"Error building extension '{request['name']}': {exc}") from None
    return import_extension(request["name"], path, request["is_python_module"])


def _wrap(original: Callable[..., Any], make_request: Callable[[dict[str, Any]], dict[str, Any]],
          request_build: RequestBuild) -> Callable[..., Any]:
    signature = inspect.signature(original)

    @functools.wraps(original)
    def replacement(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)  # a wrong call fails as it would with torch itself
        arguments = {k: v for k, v in bound.arguments.items() if k not in _DROPPED}
        return _build(make_request(arguments), request_build)

    return replacement


def install(request_build: RequestBuild) -> None:
    """Route torch.utils.cpp_extension.load_inline and load through the judge's builder."""
    import torch.utils.cpp_extension as cpp_extension

    cpp_extension.load_inline = _wrap(cpp_extension.load_inline, inline_request, request_build)
    cpp_extension.load = _wrap(cpp_extension.load, files_request, request_build)
