"""A build request from a solution, checked before anything is built: types, sizes, names.

The request comes from the solution's process (worker/builds.py makes it), so nothing in it is trusted.
`validate` returns the request as the builder will use it (every key present, in one form), or raises
BuildRefused.
"""

from __future__ import annotations

import re
from typing import Any

MAX_SOURCE_BYTES = 4 << 20
MAX_FLAGS = 256
MAX_FLAG_CHARS = 4096
MAX_FILES = 64
MAX_FUNCTIONS = 4096
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_FILE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127}$")
_FLAG_KEYS = ("extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths")
_INLINE_KEYS = {"kind", "name", "cpp_sources", "cuda_sources", "functions", "with_pytorch_error_handling",
                "no_implicit_headers", "with_cuda", "is_python_module", *_FLAG_KEYS}
_FILES_KEYS = {"kind", "name", "sources", "with_cuda", "is_python_module", *_FLAG_KEYS}
SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".c", ".cu", ".cuh", ".h", ".hpp", ".hh", ".inl")


class BuildRefused(ValueError):
    """The request is malformed or too large; nothing was built."""


def _refuse(why: str) -> None:
    raise BuildRefused(why)


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        _refuse(f"{what} must be a string")
    if "\x00" in value:
        _refuse(f"{what} contains a NUL character")
    return value


def _string_list(value: Any, what: str, limit: int, max_chars: int | None = None) -> list[str]:
    if not isinstance(value, list) or len(value) > limit:
        _refuse(f"{what} must be a list of at most {limit} strings")
    out = [_text(v, what) for v in value]
    if max_chars is not None:
        for v in out:
            if len(v) > max_chars or "\n" in v or "\r" in v:
                _refuse(f"each of {what} must be one line of at most {max_chars} characters")
    return out


def validate(request: Any) -> dict[str, Any]:
    """The request as the builder will use it, or BuildRefused. Never trusts a type or a size."""
    if not isinstance(request, dict):
        _refuse("a build request must be an object")
    kind = request.get("kind")
    allowed = _INLINE_KEYS if kind == "inline" else _FILES_KEYS if kind == "files" else None
    if allowed is None:
        _refuse("kind must be 'inline' or 'files'")
    unknown = set(request) - allowed
    if unknown:
        _refuse(f"unknown build arguments: {', '.join(sorted(map(str, unknown)))}")
    name = _text(request.get("name"), "name")
    if not _NAME.match(name):
        _refuse("the extension's name must be a Python identifier of at most 128 characters")
    out: dict[str, Any] = {"kind": kind, "name": name}
    for key in _FLAG_KEYS:
        out[key] = _string_list(request.get(key, []), key, MAX_FLAGS, MAX_FLAG_CHARS)
    with_cuda = request.get("with_cuda")
    if with_cuda is not None and not isinstance(with_cuda, bool):
        _refuse("with_cuda must be true, false or null")
    out["with_cuda"] = with_cuda
    out["is_python_module"] = _bool(request.get("is_python_module", True), "is_python_module")
    if kind == "inline":
        out["cpp_sources"] = _string_list(request.get("cpp_sources", []), "cpp_sources", MAX_FILES)
        out["cuda_sources"] = _string_list(request.get("cuda_sources", []), "cuda_sources", MAX_FILES)
        out["functions"] = _functions(request.get("functions"))
        out["with_pytorch_error_handling"] = _bool(request.get("with_pytorch_error_handling", True),
                                                   "with_pytorch_error_handling")
        out["no_implicit_headers"] = _bool(request.get("no_implicit_headers", False), "no_implicit_headers")
        texts = out["cpp_sources"] + out["cuda_sources"] + [*(out["functions"] or {}).values()]
    else:
        out["sources"] = _files(request.get("sources"))
        texts = [s["text"] for s in out["sources"]]
    if sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) > MAX_SOURCE_BYTES:
        _refuse(f"the sources are over {MAX_SOURCE_BYTES >> 20} MB in all")
    return out


def _bool(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        _refuse(f"{what} must be true or false")
    return value


def _functions(value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or len(value) > MAX_FUNCTIONS:
        _refuse(f"functions must be null or an object of at most {MAX_FUNCTIONS} names")
    for fn, doc in value.items():
        if not _NAME.match(_text(fn, "a function name")):
            _refuse(f"function name {fn[:40]!r} is not a C++ identifier")
        _text(doc, "a function docstring")
    return dict(value)


def _files(value: Any) -> list[dict[str, str]]:
    if not isinstance(value, list) or not value or len(value) > MAX_FILES:
        _refuse(f"sources must be a list of 1 to {MAX_FILES} files")
    seen, out = set(), []
    for item in value:
        if not isinstance(item, dict) or set(item) != {"name", "text"}:
            _refuse("each source must be an object with exactly 'name' and 'text'")
        name = _text(item["name"], "a source file name")
        if not _FILE.match(name) or not name.endswith(SOURCE_SUFFIXES) or name in seen:
            _refuse(f"source file name {name[:60]!r} is not a plain, unique C/C++/CUDA file name")
        seen.add(name)
        out.append({"name": name, "text": _text(item["text"], f"the text of {name}")})
    return out


def uses_cuda(request: dict[str, Any]) -> bool:
    if request["with_cuda"] or request.get("cuda_sources"):
        return True
    return any(s["name"].endswith((".cu", ".cuh")) for s in request.get("sources", ()))
