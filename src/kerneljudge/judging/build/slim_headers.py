"""A CUDA unit is compiled first against a slim stand-in for torch/types.h, written for its own source.

Why: torch/types.h is all of ATen: every one of its ~2,500 operators' headers, which nvcc parses three times
(cudafe++ and cicc for the device side, gcc for the host side). A kernel file uses a handful of them. On the
H200's host, a published-style CUDA unit (benchmarks/solutions/level1/21_relu__cuda.py) compiles in 22.2 s
against torch/types.h and in 13.2 s against the stand-in (44.4 s as written with torch/extension.h;
scripts/build_units.py, docs/evidence/2026-12-02-h200-slim-headers.md).

The stand-in (`stand_in`) declares what torch/types.h declares for kernel files: everything ATen/ATen.h
includes except the two headers that declare all operators, read in torch's own per-operator-headers mode
(AT_PER_OPERATOR_HEADERS, defined for the stand-in only), in which those headers include just the operator
headers they use; then the tensor factories and every operator the source calls by name (`torch::NAME(` or
`at::NAME(`, where ATen has an ops/NAME.h); `namespace torch { using namespace at; }` and torch's dtype
constants, as in torch/types.h. It lies in a folder of the build that only the CUDA compile searches (an -I
folder is searched before torch's -isystem ones), so load_inline's own `#include <torch/types.h>` and a
source's torch/extension.h (made types.h first, as judging/build/lean_headers.py does) both reach it; the C++
binding unit still reads the real headers.

What differs from the full headers, and why that is the same program: everything the source names has the
declaration it has under torch/types.h, with one exception. torch/types.h also declares torch:: versions
of the tensor factories (torch::empty_like, torch::zeros, ...) that call the at:: ones and then set the
result's requires_grad; here torch::empty_like finds at::empty_like through the using-directive. Both give
the same tensor, the flag aside, so sources that mention requires_grad do not take part, nor sources that
call torch::tensor or torch::from_blob, torch's own code rather than such wrappers. Sources that
include other torch headers (torch/torch.h, torch/nn, torch/csrc/...) do not either: those headers expect
the real types.h. Where the slim compile fails (an operator called without its namespace, torch::tensor,
TORCH_LIBRARY, ...), the worker compiles with the real headers: one failed compile later, the result is the
ordinary build. Builds record which headers served.
"""

from __future__ import annotations

import os
import re

from kerneljudge.judging.build.lean_headers import CUDA_SUFFIXES, lean

SHADOWED = os.path.join("torch", "types.h")
TORCH_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"](torch/[^>"]+)[>"]', re.MULTILINE)
TAKES_PART = {"torch/extension.h", "torch/types.h"}  # the only torch headers a slim unit may include
TORCH_OWN = re.compile(r"\btorch\s*::\s*(?:tensor|from_blob)\b")  # not wrappers of the at:: function
CALLED = re.compile(r"\b(?:torch|at)\s*::\s*([A-Za-z_]\w*)\s*(?:<[^<>;{}()]*>\s*)?\(")
# what ATen/ATen.h (the bulk of torch/types.h) includes, less the two headers that declare every operator
# (ATen/Functions.h, ATen/NativeFunctions.h); included in torch's per-operator mode, in which these headers
# include the operator headers they use instead of ATen/Functions.h
ATEN_HEADERS = ("ATen/Context.h", "ATen/Device.h", "ATen/DeviceGuard.h", "ATen/DimVector.h", "ATen/Dispatch.h",
                "ATen/Formatting.h", "ATen/ScalarOps.h", "ATen/Tensor.h", "ATen/TensorGeometry.h",
                "ATen/TensorIndexing.h", "ATen/TensorOperators.h", "ATen/Version.h", "ATen/core/ATenGeneral.h",
                "ATen/core/Generator.h", "ATen/core/Reduction.h", "ATen/core/Scalar.h", "ATen/core/UnsafeFromTH.h",
                "ATen/core/ivalue.h", "ATen/core/jit_type.h", "c10/core/Allocator.h", "c10/core/InferenceMode.h",
                "c10/core/Layout.h", "c10/core/Storage.h", "c10/core/TensorOptions.h", "c10/util/Exception.h")
# the factories torch/types.h's torch:: namespace offers; kernel files use them without naming ATen
FACTORIES = ("empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
             "full_like", "arange")
# torch/types.h's own names in namespace torch (aliases of the at:: ones)
DTYPE_ALIASES = (("kUInt8", "at::kByte"), ("kInt8", "at::kChar"), ("kInt16", "at::kShort"),
                 ("kInt32", "at::kInt"), ("kInt64", "at::kLong"), ("kFloat16", "at::kHalf"),
                 ("kFloat32", "at::kFloat"), ("kFloat64", "at::kDouble"), ("kU8", "kUInt8"), ("kI8", "kInt8"),
                 ("kI16", "kInt16"), ("kI32", "kInt32"), ("kI64", "kInt64"), ("kF16", "kFloat16"),
                 ("kF32", "kFloat32"), ("kF64", "kFloat64"))
UNSIGNED_ALIASES = (("kUInt16", "at::kUInt16"), ("kUInt32", "at::kUInt32"), ("kUInt64", "at::kUInt64"),
                    ("kU16", "kUInt16"), ("kU32", "kUInt32"), ("kU64", "kUInt64"))  # torch 2.3 and later


def cuda_texts(request: dict) -> list[str]:
    """The CUDA sources of a validated build request."""
    if request["kind"] == "inline":
        return list(request.get("cuda_sources") or [])
    return [s["text"] for s in request.get("sources") or [] if s["name"].endswith(CUDA_SUFFIXES)]


def takes_part(texts: list[str]) -> bool:
    """Whether CUDA sources may be compiled against the stand-in: only torch/extension.h and torch/types.h
    among their torch includes, no word of autograd's requires_grad, no call of torch::tensor/from_blob."""
    if not texts:
        return False
    for text in texts:
        if "requires_grad" in text or TORCH_OWN.search(text) or not set(TORCH_INCLUDE.findall(text)) <= TAKES_PART:
            return False
    return True


def called_ops(texts: list[str], ops_dir: str) -> list[str]:
    """Operators the sources call as torch::NAME( or at::NAME( that have a header in `ops_dir` (ATen/ops)."""
    names = {m for text in texts for m in CALLED.findall(text)} | set(FACTORIES)
    return sorted(n for n in names if os.path.isfile(os.path.join(ops_dir, f"{n}.h")))


def stand_in(ops: list[str]) -> str:
    """The text of the slim torch/types.h, declaring the given ATen operators."""
    lines = ["// kerneljudge: a slim stand-in for torch/types.h in this build's CUDA unit "
             "(kerneljudge/judging/build/slim_headers.py)",
             "#pragma once",
             "#ifndef AT_PER_OPERATOR_HEADERS",
             "#define AT_PER_OPERATOR_HEADERS",
             "#define KERNELJUDGE_SLIM_PER_OPERATOR",
             "#endif",
             "#include <optional>",
             "#include <torch/version.h>"]
    lines += [f"#include <{header}>" for header in ATEN_HEADERS]
    lines += [f"#include <ATen/ops/{name}.h>" for name in ops]
    lines += ["#ifdef KERNELJUDGE_SLIM_PER_OPERATOR",
              "#undef AT_PER_OPERATOR_HEADERS",
              "#undef KERNELJUDGE_SLIM_PER_OPERATOR",
              "#endif",
              "namespace torch {",
              "using namespace at;  // NOLINT",
              "#if !defined(FBCODE_CAFFE2) && !defined(C10_NODEPRECATED)",
              "using std::nullopt;",
              "using std::optional;",
              "#endif",
              "using Dtype = at::ScalarType;"]
    lines += [f"constexpr auto {name} = {value};" for name, value in DTYPE_ALIASES]
    lines.append("#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)")
    lines += [f"constexpr auto {name} = {value};" for name, value in UNSIGNED_ALIASES]
    lines += ["#endif", "}  // namespace torch", ""]
    return "\n".join(lines)


def slim_request(request: dict, folder: str, ops_dir: str) -> dict | None:
    """A copy of a validated build request whose CUDA compile finds the stand-in (written to
    folder/torch/types.h here) before torch's types.h, its sources' torch/extension.h made torch/types.h;
    None when its CUDA sources do not take part."""
    texts = cuda_texts(request)
    if not takes_part(texts):
        return None
    if request["kind"] == "inline" and request.get("no_implicit_headers") \
            and not any(TORCH_INCLUDE.search(t) for t in texts):
        return None  # nothing would read the stand-in
    path = os.path.join(folder, SHADOWED)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(stand_in(called_ops(texts, ops_dir)))
    flags = list(request.get("extra_cuda_cflags") or []) + [f"-I{folder}"]
    if request["kind"] == "inline":
        return {**request, "cuda_sources": [lean(t) or t for t in texts], "extra_cuda_cflags": flags}
    sources = [{**s, "text": lean(s["text"]) or s["text"]} if s["name"].endswith(CUDA_SUFFIXES) else s
               for s in request["sources"]]
    return {**request, "sources": sources, "extra_cuda_cflags": flags}
