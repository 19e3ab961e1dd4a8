"""CUDA units are compiled first against a slim stand-in for torch/types.h, then lean, then as written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import pytest

from kerneljudge.judging.build import slim_headers
from kerneljudge.judging.build.compile_worker import build_with_fallback, lighter_requests
from kerneljudge.judging.build.lean_headers import lean

from .test_lean_headers import FakeTorch

KERNEL = """#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
__global__ void k(float* y, long n) {}
torch::Tensor f(torch::Tensor x) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
  auto y = torch::empty_like(x);
  auto z = at::matmul(x, x.t());
  return torch::relu(y + z);
}
"""


def _request(**extra):
    return {"kind": "inline", "name": "kj_x", "cpp_sources": ["torch::Tensor f(torch::Tensor x);"],
            "cuda_sources": [KERNEL], "functions": ["f"], "with_pytorch_error_handling": True,
            "no_implicit_headers": False, "extra_cflags": None, "extra_cuda_cflags": ["-O3"], "extra_ldflags": None,
            "extra_include_paths": None, "with_cuda": None, "is_python_module": True, **extra}


def _ops_dir(tmp_path, names=("empty", "empty_like", "zeros", "matmul", "relu")):
    ops = tmp_path / "ops"
    ops.mkdir(exist_ok=True)
    for name in names:
        (ops / f"{name}.h").write_text("")
    return str(ops)


def test_which_sources_take_part():
    assert slim_headers.takes_part([KERNEL, "__global__ void j() {}"])
    assert slim_headers.takes_part(["#include <torch/types.h>\n#include <ATen/cuda/CUDAContext.h>\n"])
    assert not slim_headers.takes_part([])
    assert not slim_headers.takes_part([KERNEL, "#include <torch/torch.h>\n"])  # expects the real types.h
    assert not slim_headers.takes_part(['#include "torch/csrc/autograd/variable.h"\n'])
    assert not slim_headers.takes_part([KERNEL.replace("empty_like(x)", "empty_like(x).set_requires_grad(true)")])
    assert not slim_headers.takes_part([KERNEL.replace("torch::empty_like(x)", "torch::tensor({1.0, 2.0})")])
    assert not slim_headers.takes_part([KERNEL.replace("torch::empty_like(x)", "torch::from_blob(p, {2})")])
    assert slim_headers.takes_part([KERNEL.replace("torch::empty_like(x)", "torch::tensor_split(x, 2)[0]")])


def test_the_stand_in_declares_the_factories_and_the_operators_called(tmp_path):
    ops = _ops_dir(tmp_path)
    called = slim_headers.called_ops(["y = at::empty<float>(x); torch :: matmul (a, b); at::unknown_op(x);"
                                      " x.relu(); torch::Tensor t; torch::kFloat32;"], ops)
    assert called == ["empty", "empty_like", "matmul", "zeros"]  # relu is a method call here; unknown_op has no header
    text = slim_headers.stand_in(called)
    assert "#include <ATen/ops/matmul.h>" in text and "#include <ATen/ops/relu.h>" not in text
    assert "using namespace at;  // NOLINT" in text and "constexpr auto kFloat32 = at::kFloat;" in text
    assert "#include <ATen/TensorOperators.h>" in text and "ATen/Functions.h" not in text
    assert "torch/types.h" not in text.split("\n", 1)[1]  # it never includes what it stands in for


def test_a_slim_request_shadows_types_h_for_the_cuda_compile_only(tmp_path):
    request = _request()
    slim = slim_headers.slim_request(request, str(tmp_path / "slim"), _ops_dir(tmp_path))
    assert slim["cuda_sources"] == [lean(KERNEL)]
    assert slim["extra_cuda_cflags"] == ["-O3", f"-I{tmp_path / 'slim'}"]
    assert slim["cpp_sources"] == request["cpp_sources"] and slim["extra_cflags"] is None
    written = (tmp_path / "slim" / "torch" / "types.h").read_text()
    assert "#include <ATen/ops/matmul.h>" in written and "#include <ATen/ops/relu.h>" in written
    assert request["cuda_sources"] == [KERNEL] and request["extra_cuda_cflags"] == ["-O3"]  # not changed
    files = {**request, "kind": "files",
             "sources": [{"name": "a.cpp", "text": KERNEL}, {"name": "b.cu", "text": KERNEL}]}
    slim = slim_headers.slim_request(files, str(tmp_path / "slim2"), _ops_dir(tmp_path))
    assert [s["text"] for s in slim["sources"]] == [KERNEL, lean(KERNEL)]
    bare = _request(no_implicit_headers=True, cuda_sources=["__global__ void k() {}"])
    assert slim_headers.slim_request(bare, str(tmp_path / "slim3"), _ops_dir(tmp_path)) is None
    assert slim_headers.slim_request(_request(cuda_sources=[]), str(tmp_path / "slim4"), _ops_dir(tmp_path)) is None


def _kind(sources, flags):
    """Which of the worker's tries a fake load_inline call is."""
    if any(flag.startswith("-I") for flag in flags):
        return "slim"
    return "lean" if "extension.h" not in sources[0] else "as written"


def _build(fake, request, tmp_path):
    return build_with_fallback(fake.load_inline, fake.cpp_extension, request, str(tmp_path / "out"),
                               lighter_requests(request, str(tmp_path), _ops_dir(tmp_path)))


@pytest.mark.parametrize("failing, served, calls", [
    ((), "slim headers", ["slim"]),
    (("slim",), "lean headers", ["slim", "lean"]),
    (("slim", "lean"), None, ["slim", "lean", "as written"]),
])
def test_slim_then_lean_then_as_written(tmp_path, capsys, failing, served, calls):
    fake = FakeTorch(lambda kind: kind in failing, _kind)
    assert _build(fake, _request(), tmp_path) == served
    assert fake.calls == calls
    assert "lighter attempt" not in capsys.readouterr().out  # a lighter try's errors are not the solution's build log


def test_turned_off_it_goes_straight_to_lean(tmp_path):
    fake = FakeTorch(lambda kind: False, _kind)
    assert _build(fake, _request(slim_headers=False), tmp_path) == "lean headers"
    assert fake.calls == ["lean"]


def _compiles(tmp_path, source: str) -> subprocess.CompletedProcess:
    """g++ parses `source` as a CUDA unit's host side would, with the stand-in written for it in front."""
    import torch.utils.cpp_extension as cpp_extension

    includes = cpp_extension.include_paths()
    folder = tmp_path / "slim"
    request = _request(cuda_sources=[source])
    slim = slim_headers.slim_request(request, str(folder), os.path.join(includes[0], "ATen", "ops"))
    unit = tmp_path / "unit.cpp"
    unit.write_text("#include <torch/types.h>\n" + slim["cuda_sources"][0].replace("__global__ ", ""))
    command = [shutil.which("g++") or "g++", "-std=c++17", "-fsyntax-only", f"-I{folder}", str(unit),
               f"-I{sysconfig.get_paths()['include']}"] + [f"-isystem{p}" for p in includes]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(shutil.which("g++") is None or sys.platform != "linux", reason="needs g++ on Linux")
def test_the_stand_in_compiles_against_this_torch_and_an_unknown_name_does_not(tmp_path):
    source = KERNEL.replace("#include <c10/cuda/CUDAStream.h>\n", "") + """
static_assert(std::is_same_v<torch::Tensor, at::Tensor>, "one Tensor");
torch::Tensor g(torch::Tensor x) {
  auto out = torch::zeros({x.size(0)}, x.options().dtype(torch::kInt64));
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "g", [&] { (void)x.data_ptr<scalar_t>(); });
  return torch::cat({out, torch::arange(3, out.options())});
}
"""
    done = _compiles(tmp_path, source)
    assert done.returncode == 0, done.stderr[-3000:]
    done = _compiles(tmp_path, source.replace("torch::relu(y + z)", "torch::nn::functional::relu(y + z)"))
    assert done.returncode != 0 and "nn" in done.stderr  # then the worker builds with the real headers
