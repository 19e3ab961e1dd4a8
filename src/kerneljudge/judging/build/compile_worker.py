"""Build one C++/CUDA extension with torch's own build, inside the builder's box, without importing it.

    python -m kerneljudge.judging.build.compile_worker BUILD_FOLDER < request.json

Started by judging/build/store.py through the sandbox launcher: Landlock lets it write only its own build
folder (sources, ninja file, objects and the library land in BUILD_FOLDER/build; TMPDIR is inside it too).
The request is already validated by the orchestrator.

torch's `load_inline`/`load` compile and then import the result. Importing would run the extension's
static initialisers (solution code) here for nothing, so `_import_module_from_library`, the last step of
`_jit_compile` in torch 1.x to 2.13, is replaced by one that only returns the library's path. Where that
internal is missing, the plain call runs and the import happens inside this box, which is harmless.

A CUDA unit is compiled first against a slim stand-in for torch/types.h (judging/build/slim_headers.py), then,
if it includes torch/extension.h, with torch/types.h in its place (judging/build/lean_headers.py), each when the
request allows it; where both fail, the original text is compiled and only its output is reported. The
last line says which served: "built NAME (slim headers)", "built NAME (lean headers)" or "built NAME". The
binding unit loads a precompiled torch/extension.h where the builder has one for its flags, and asks for
one where it has not (judging/build/pch.py).

Exit status: 0 built; 3 the compiler failed (its output is on stdout; the same request fails the same
way again, so the judge may remember it); 4 a request this torch cannot take; anything else, a failure
that says nothing about the sources.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stdout
from typing import Any

from kerneljudge.judging.build import pch
from kerneljudge.judging.build.lean_headers import lean_request
from kerneljudge.judging.build.slim_headers import slim_request

BUILT, COMPILE_FAILED, BAD_REQUEST = 0, 3, 4
_FLAG_ARGS = ("extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths", "with_cuda",
              "is_python_module")


def _quiet_import(cpp_extension: Any) -> None:
    if hasattr(cpp_extension, "_import_module_from_library"):
        def library_path(module_name: str, path: str, is_python_module: bool) -> str:
            return os.path.join(path, f"{module_name}{cpp_extension.LIB_EXT}")

        cpp_extension._import_module_from_library = library_path
    else:
        print("note: this torch has no _import_module_from_library; the extension is imported in the box")
    # with use_pch=False (always, here) torch deletes a precompiled header in its own folder, if one is there;
    # the box cannot write there, and the header is not this build's business
    if hasattr(cpp_extension, "remove_extension_h_precompiler_headers"):
        cpp_extension.remove_extension_h_precompiler_headers = lambda: None


def _arguments(request: dict[str, Any], out: str, accepted: set[str]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"name": request["name"], "build_directory": out, "verbose": False}
    kwargs.update({k: request[k] for k in _FLAG_ARGS})
    if request["kind"] == "inline":
        kwargs.update(cpp_sources=request["cpp_sources"], cuda_sources=request["cuda_sources"] or None,
                      functions=request["functions"],
                      with_pytorch_error_handling=request["with_pytorch_error_handling"])
        if request["no_implicit_headers"]:
            kwargs["no_implicit_headers"] = True
    else:
        folder = os.path.join(os.path.dirname(out), "src")
        os.makedirs(folder, exist_ok=True)
        paths = []
        for source in request["sources"]:
            path = os.path.join(folder, source["name"])
            with open(path, "w", encoding="utf-8") as f:
                f.write(source["text"])
            paths.append(path)
        kwargs["sources"] = paths
    unknown = set(kwargs) - accepted
    if unknown:
        print(f"this torch's build does not take {', '.join(sorted(unknown))}")
        sys.exit(BAD_REQUEST)
    return kwargs


def _use_pch(cpp_extension: Any, request: dict[str, Any]) -> None:
    """Let the binding unit load the builder's precompiled torch/extension.h where one fits (judging/build/pch.py)."""
    pch_root = request.get("pch_root") or ""
    original = getattr(cpp_extension, "_run_ninja_build", None)
    if not pch_root or original is None or not pch.eligible(request):
        return
    compiler = subprocess.run([os.environ.get("CXX", "c++"), "--version"], capture_output=True, text=True)
    compiler_id = (compiler.stdout or compiler.stderr).strip()
    torch_version = importlib.metadata.version("torch")

    def run_ninja_build(build_directory: str, *args: Any, **kwargs: Any) -> Any:
        path = os.path.join(build_directory, "build.ninja")
        with open(path) as f:
            text = f.read()
        flags = pch.binding_flags(text)
        key = pch.key(flags, compiler_id, torch_version) if flags else None
        folder = pch.ready(pch_root, key) if key else None
        if folder:
            with open(path, "w") as f:
                f.write(pch.with_include(text, folder))
            os.write(1, b"pch-used\n")
        elif key:
            os.write(1, (pch.wanted_line(key, flags) + "\n").encode())  # past any redirect: the builder reads it
        return original(build_directory, *args, **kwargs)

    cpp_extension._run_ninja_build = run_ninja_build


def lighter_requests(request: dict[str, Any], folder: str, ops_dir: str) -> list[tuple[str, dict[str, Any]]]:
    """The lighter-header versions of `request` to try first, in order, each named by its headers."""
    tries = []
    if request.get("slim_headers", True):
        slim = slim_request(request, os.path.join(folder, "slim"), ops_dir)
        if slim is not None:
            tries.append(("slim headers", slim))
    if request.get("lean_headers", True):
        lean = lean_request(request)
        if lean is not None:
            tries.append(("lean headers", lean))
    return tries


def build_with_fallback(build: Any, cpp_extension: Any, request: dict[str, Any], out: str,
                        tries: list[tuple[str, dict[str, Any]]]) -> str | None:
    """Build `request` into `out`, trying the lighter versions first; the name of the one that served, or
    None for the request as written. RuntimeError from the one as written."""
    accepted = set(inspect.signature(build).parameters)
    for name, lighter in tries:
        try:
            with redirect_stdout(io.StringIO()):  # its compiler output is not the solution's to see
                build(**_arguments(lighter, out, accepted))
            return name
        except RuntimeError:
            pass  # whatever failed, the next text decides
        # the same folder: ninja recompiles the CUDA unit whose text or flags changed, and keeps the C++ unit.
        # torch numbers a second build of one name with other sources in one process (NAME_v1): forget the first
        getattr(getattr(cpp_extension, "JIT_EXTENSION_VERSIONER", None), "entries", {}).pop(request["name"], None)
    build(**_arguments(request, out, accepted))
    return None


def main() -> None:
    folder = sys.argv[1]
    request = json.load(sys.stdin)
    import torch.utils.cpp_extension as cpp_extension

    _quiet_import(cpp_extension)
    _use_pch(cpp_extension, request)
    build = cpp_extension.load_inline if request["kind"] == "inline" else cpp_extension.load
    out = os.path.join(folder, "build")
    os.makedirs(out, exist_ok=True)
    ops_dir = os.path.join(cpp_extension.include_paths()[0], "ATen", "ops")
    try:
        served = build_with_fallback(build, cpp_extension, request, out, lighter_requests(request, folder, ops_dir))
    except RuntimeError as exc:
        print(str(exc))
        sys.stdout.flush()
        sys.exit(COMPILE_FAILED if "Error building extension" in str(exc) else 1)
    print(f"built {request['name']}" + (f" ({served})" if served else ""))


if __name__ == "__main__":
    main()
