"""CUDA units are compiled with torch/types.h for torch/extension.h first, and as written when that fails."""

from __future__ import annotations

import types

import pytest

from kerneljudge.judging.build.compile_worker import build_with_fallback, lighter_requests
from kerneljudge.judging.build.lean_headers import lean, lean_request

KERNEL = "#include <torch/extension.h>\n#include <cuda_runtime.h>\n__global__ void k() {}\n"


def test_only_the_extension_include_is_replaced():
    assert lean(KERNEL) == "#include <torch/types.h>\n#include <cuda_runtime.h>\n__global__ void k() {}\n"
    assert lean('  #  include "torch/extension.h"\n') == "  #  include <torch/types.h>\n"
    assert lean("#include <torch/types.h>\n// #include <torch/extension.h> in a comment\n") is None
    assert lean("#include <torch/extension.hpp>\n") is None


def test_requests_of_both_kinds():
    inline = {"kind": "inline", "name": "x", "cpp_sources": ["#include <torch/extension.h>\n"],
              "cuda_sources": [KERNEL, "__global__ void j() {}\n"]}
    got = lean_request(inline)
    assert got["cpp_sources"] == inline["cpp_sources"]  # the binding unit keeps pybind11
    assert got["cuda_sources"] == [lean(KERNEL), "__global__ void j() {}\n"]
    assert inline["cuda_sources"][0] == KERNEL  # the request itself is not changed
    assert lean_request({**inline, "cuda_sources": []}) is None
    files = {"kind": "files", "name": "x", "sources": [{"name": "a.cpp", "text": KERNEL},
                                                        {"name": "b.cu", "text": KERNEL}]}
    got = lean_request(files)
    assert [s["text"] for s in got["sources"]] == [KERNEL, lean(KERNEL)]
    assert lean_request({**files, "sources": files["sources"][:1]}) is None


class FakeTorch:
    """load_inline's stand-in: records what `describe(cuda_sources, extra_cuda_cflags)` says of each call (by
    default its CUDA text); fails where `fails` says of that."""

    def __init__(self, fails, describe=lambda sources, flags: sources[0]):
        self.calls, self.fails, self.describe = [], fails, describe
        self.cpp_extension = types.SimpleNamespace(JIT_EXTENSION_VERSIONER=types.SimpleNamespace(entries={}))

    def load_inline(self, name, build_directory, verbose, cpp_sources, cuda_sources, functions,
                    with_pytorch_error_handling, extra_cflags=None, extra_cuda_cflags=None, extra_ldflags=None,
                    extra_include_paths=None, with_cuda=None, is_python_module=True):
        self.cpp_extension.JIT_EXTENSION_VERSIONER.entries[name] = len(self.calls)
        seen = self.describe(cuda_sources, extra_cuda_cflags or [])
        self.calls.append(seen)
        if self.fails(seen):
            print("compiler output of a lighter attempt")
            raise RuntimeError(f"Error building extension '{name}': nope")


def _request(**extra):
    return {"kind": "inline", "name": "kj_x", "cpp_sources": ["int f();"], "cuda_sources": [KERNEL],
            "functions": None, "with_pytorch_error_handling": True, "no_implicit_headers": False,
            "extra_cflags": None, "extra_cuda_cflags": None, "extra_ldflags": None, "extra_include_paths": None,
            "with_cuda": None, "is_python_module": True, **extra}


def _build(fake, request, folder):
    """The worker's fallback with the lean try only (the slim one is tests/test_slim_headers.py's)."""
    request = {**request, "slim_headers": False}
    return build_with_fallback(fake.load_inline, fake.cpp_extension, request, str(folder),
                               lighter_requests(request, str(folder), str(folder)))


def test_the_lean_build_serves_when_it_compiles(tmp_path):
    fake = FakeTorch(lambda text: False)
    assert _build(fake, _request(), tmp_path) == "lean headers"
    assert fake.calls == [lean(KERNEL)]


def test_a_lean_build_that_fails_is_built_as_written(tmp_path, capsys):
    fake = FakeTorch(lambda text: "torch/types.h" in text and "extension" not in text)
    assert _build(fake, _request(), tmp_path) is None
    assert fake.calls == [lean(KERNEL), KERNEL]
    assert "lighter attempt" not in capsys.readouterr().out  # its errors are not the solution's build log


def test_the_original_failure_is_what_is_raised(tmp_path):
    fake = FakeTorch(lambda text: True)
    with pytest.raises(RuntimeError, match="Error building extension"):
        _build(fake, _request(), tmp_path)
    assert fake.calls == [lean(KERNEL), KERNEL]


def test_torch_does_not_rename_the_second_attempt(tmp_path):
    # torch's versioner would call a second build of one name with other sources NAME_v1; the worker forgets
    # the first attempt, so the versioner holds only the second
    fake = FakeTorch(lambda text: "extension" not in text)
    _build(fake, _request(), tmp_path)
    assert fake.cpp_extension.JIT_EXTENSION_VERSIONER.entries == {"kj_x": 1}


def test_turned_off_or_nothing_to_lighten_means_one_build(tmp_path):
    fake = FakeTorch(lambda text: False)
    _build(fake, _request(lean_headers=False), tmp_path)
    _build(fake, _request(cuda_sources=["__global__ void k() {}"]), tmp_path)
    assert fake.calls == [KERNEL, "__global__ void k() {}"]
