"""Static analysis of solution source (kerneljudge.analysis): no builds, no child processes, nothing run.

Snippets are written the way language models write KernelBench solutions: a load_inline CUDA module, a
Triton kernel with a wrapper, a C++ CPU extension -- each honest, then with one hack spliced in.
"""

from __future__ import annotations

import dataclasses
import textwrap

import pytest

from kerneljudge.analysis import RULES, Finding, analyze, detect_backend

# --------------------------------------------------------------------------------------- solutions
CUDA_SOLUTION = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Define the custom CUDA kernel for a fused linear + bias + ReLU
fused_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void fused_linear_relu_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                         const float* __restrict__ b, float* __restrict__ out,
                                         int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += x[row * K + k] * w[col * K + k];  // hand-written dot, not torch::matmul
        }
        acc += b[col];
        out[row * N + col] = fmaxf(acc, 0.0f);
    }
}

torch::Tensor fused_linear_relu_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor (do not call at::matmul here)");
    auto xc = x.contiguous();
    const int M = xc.size(0);
    const int K = xc.size(1);
    const int N = w.size(0);
    auto out = torch::empty({M, N}, x.options());
    dim3 block(16, 16);
    dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
    fused_linear_relu_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), M, N, K);
    return out;
}
"""

fused_cpp_source = "torch::Tensor fused_linear_relu_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor b);"

# Compile the inline CUDA code
fused_linear_relu = load_inline(
    name="fused_linear_relu",
    cpp_sources=fused_cpp_source,
    cuda_sources=fused_source,
    functions=["fused_linear_relu_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)  # kept only as a weight container
        self.fused_linear_relu = fused_linear_relu

    def forward(self, x):
        x = x.contiguous()
        B = x.shape[0]
        out = self.fused_linear_relu.fused_linear_relu_cuda(x, self.linear.weight, self.linear.bias)
        return out.view(B, -1)
'''

TRITON_SOLUTION = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK_SIZE": 1024}, num_warps=4), triton.Config({"BLOCK_SIZE": 2048}, num_warps=8)],
    key=["n_elements"],
)
@triton.jit
def gelu_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = 0.5 * x * (1.0 + tl.math.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
    tl.store(out_ptr + offsets, y, mask=mask)


def triton_gelu(x: torch.Tensor) -> torch.Tensor:
    assert x.is_cuda and x.is_contiguous()
    out = torch.empty_like(x)
    n_elements = x.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    gelu_kernel[grid](x, out, n_elements)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        return triton_gelu(x)
'''

CPP_SOLUTION = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <vector>
#include <cmath>

// Row-wise softmax on CPU, by hand (no at::softmax, no torch::exp).
torch::Tensor softmax_cpu(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2, "expected 2D input");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t rows = xc.size(0), cols = xc.size(1);
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            float m = -INFINITY;
            for (int64_t c = 0; c < cols; ++c) m = std::max(m, in[r * cols + c]);
            float s = 0.f;
            for (int64_t c = 0; c < cols; ++c) { o[r * cols + c] = std::exp(in[r * cols + c] - m); \
s += o[r * cols + c]; }
            for (int64_t c = 0; c < cols; ++c) o[r * cols + c] /= s;
        }
    });
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("softmax_cpu", &softmax_cpu, "softmax (CPU)");
}
"""

softmax_ext = load_inline(name="softmax_cpu_ext", cpp_sources=[cpp_source], extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_ext.softmax_cpu(x.float())
'''

TORCH_SOLUTION = '''
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)
'''

# A small CUDA extension plus a ModelNew whose forward is filled in per test (`@BODY@`, `@INIT@`, `@EXTRA@`).
TEMPLATE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

relu_src = """
#include <torch/extension.h>
__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
ext = load_inline(name="relu_ext", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
                  cuda_sources=relu_src, functions=["relu_cuda"])
@EXTRA@

class ModelNew(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim, dim))
        self.scale = 0.5
@INIT@

    def forward(self, x):
@BODY@
'''


def make(body: str = "return ext.relu_cuda(x)", init: str = "", extra: str = "") -> str:
    return (TEMPLATE.replace("@EXTRA@", textwrap.dedent(extra))
            .replace("@INIT@", textwrap.indent(textwrap.dedent(init), " " * 8))
            .replace("@BODY@", textwrap.indent(textwrap.dedent(body), " " * 8)))


def codes(source: str, policy: str = "strict", blocking: bool = True) -> set[str]:
    return {f.code for f in analyze(source, policy) if f.blocking or not blocking}


def blocking(source: str, policy: str = "strict") -> list[Finding]:
    return [f for f in analyze(source, policy) if f.blocking]


def swap(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new)


# ------------------------------------------------------------------------------------------- API
def test_finding_is_frozen_and_serialisable():
    f = Finding("torch_compute", 3, "forward calls torch.mm", True)
    assert f.to_dict() == {"code": "torch_compute", "line": 3, "message": "forward calls torch.mm", "blocking": True}
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.line = 4


def test_analyze_rejects_unknown_policy_and_backend():
    with pytest.raises(ValueError):
        analyze(CUDA_SOLUTION, policy="lax")
    with pytest.raises(ValueError):
        analyze(CUDA_SOLUTION, backend="opencl")


def test_findings_are_sorted_by_line_and_have_known_codes():
    src = make("y = torch.matmul(x, self.weight)\nreturn F.relu(y)", extra="import threading")
    found = analyze(src)
    assert [f.line for f in found] == sorted(f.line for f in found)
    assert all(f.code in RULES for f in found)
    assert all(f.message and "\n" not in f.message for f in found)


def test_message_names_the_construct_and_line():
    src = make("return torch.matmul(x, self.weight)")
    (f,) = [f for f in analyze(src) if f.code == "torch_compute"]
    assert "torch.matmul" in f.message and f"line {f.line}" in f.message and "strict" in f.message
    assert src.splitlines()[f.line - 1].strip() == "return torch.matmul(x, self.weight)"


# ------------------------------------------------------------------------------- backend detection
@pytest.mark.parametrize("source, expected", [
    (CUDA_SOLUTION, "cuda"),
    (TRITON_SOLUTION, "triton"),
    (CPP_SOLUTION, "cpp"),
    (TORCH_SOLUTION, "torch"),
    (("import torch.utils.cpp_extension as ce\n"
      "m = ce.load_inline('m', cpp_sources='int f();', cuda_sources='__global__ void k(){}')"), "cuda"),
    (("from torch.utils import cpp_extension\n"
      "m = cpp_extension.load_inline('m', 'int f();', '__global__ void k(){}')"), "cuda"),
    ("import torch\nm = torch.utils.cpp_extension.load_inline(name='m', cpp_sources=['a'], cuda_sources=['b'])",
     "cuda"),
    (("from torch.utils.cpp_extension import load_inline as li\nsrc = '__global__ void k(){}'\n"
      "m = li('m', cpp_sources='', cuda_sources=src)"), "cuda"),
    (("from torch.utils.cpp_extension import load_inline\nK = 'x'\nK += '__global__ void k(){}'\n"
      "m = load_inline('m', 'int f();', cuda_sources=[K])"), "cuda"),
    (("from torch.utils.cpp_extension import load_inline\n"
      "m = load_inline('m', cpp_sources='int f(){return 1;}', cuda_sources=None)"), "cpp"),
    (("from torch.utils.cpp_extension import load_inline\n"
      "m = load_inline('m', cpp_sources='int f(){return 1;}', cuda_sources='')"), "cpp"),
    (("from torch.utils.cpp_extension import load_inline\n"
      "m = load_inline('m', 'int f(){return 1;}', functions=['f'])"), "cpp"),
    ("from torch.utils.cpp_extension import load\nm = load('m', sources=['kernel.cu'])", "cuda"),
    ("from triton import jit\n@jit\ndef k(x_ptr):\n    pass", "triton"),
    ("import triton\n@triton.jit(do_not_specialize=['n'])\ndef k(x_ptr, n):\n    pass", "triton"),
    ("import triton\ndef _k(x):\n    pass\nk = triton.jit(_k)", "triton"),
    (("import triton\n@triton.autotune(configs=[], key=[])\n"
      "def k(x):\n    pass"), "torch"),  # autotune alone is no kernel
    (TRITON_SOLUTION + "\n" + "from torch.utils.cpp_extension import load_inline\n"
                               "m = load_inline('m', 'int f();')", "triton"),
    (TRITON_SOLUTION + "\n" + CUDA_SOLUTION, "cuda"),
    ("def f(:\n", "torch"),
    (("from torch.utils.cpp_extension import load_inline\ncfg = dict(name='m')\n"
      "kw = {'cpp_sources': 'int f();', 'cuda_sources': '__global__ void k(){}'}\nm = load_inline(**kw)"), "cuda"),
    (("from torch.utils.cpp_extension import load_inline\n"
      "m = load_inline(**{'name': 'm', 'cpp_sources': 'int f(){return 1;}'})"), "cpp"),
])
def test_detect_backend(source, expected):
    assert detect_backend(source) == expected


def test_cuda_sources_from_a_runtime_call_count_as_cuda():
    src = ("from torch.utils.cpp_extension import load_inline\n"
           "m = load_inline('m', 'int f();', cuda_sources=open('k.cu').read())")
    assert detect_backend(src) == "cuda"


# ------------------------------------------------------------------------------- honest solutions
@pytest.mark.parametrize("source", [CUDA_SOLUTION, TRITON_SOLUTION, CPP_SOLUTION], ids=["cuda", "triton", "cpp"])
@pytest.mark.parametrize("policy", ["strict", "lenient"])
def test_honest_solutions_have_no_blocking_finding(source, policy):
    assert blocking(source, policy) == []


def test_plain_torch_is_no_kernel_under_strict_only():
    assert {"no_kernel", "torch_compute"} <= codes(TORCH_SOLUTION)
    assert blocking(TORCH_SOLUTION, "lenient") == []
    assert {"no_kernel", "torch_compute"} <= codes(TORCH_SOLUTION, "lenient", blocking=False)


# --------------------------------------------------------------------- hacks in full solutions
def _cuda_forward(body: str) -> str:
    return swap(CUDA_SOLUTION,
                "        out = self.fused_linear_relu.fused_linear_relu_cuda(x, self.linear.weight, "
                "self.linear.bias)\n",
                textwrap.indent(textwrap.dedent(body), " " * 8))


FULL_HACKS = {
    "fallback_in_except": (_cuda_forward("""
        try:
            out = self.fused_linear_relu.fused_linear_relu_cuda(x, self.linear.weight, self.linear.bias)
        except Exception:
            out = torch.relu(self.linear(x))
    """), {"fallback"}),
    "self_linear_in_forward": (_cuda_forward("out = self.fused_linear_relu.fused_linear_relu_cuda(self.linear(x), "
                                             "self.linear.weight, self.linear.bias)\n"), {"torch_compute"}),
    "x_at_w": (_cuda_forward("out = torch.relu_(x @ self.linear.weight.t())\n"
                             "out = self.fused_linear_relu.fused_linear_relu_cuda(out, "
                             "self.linear.weight, self.linear.bias)\n"), {"torch_compute"}),
    "getattr_torch_mm": (_cuda_forward("out = getattr(torch, 'mm')(x, self.linear.weight.t())\n"
                                       "out = self.fused_linear_relu.fused_linear_relu_cuda(out, "
                                       "self.linear.weight, self.linear.bias)\n"), {"torch_compute"}),
    "aten_mm": (_cuda_forward("out = torch.ops.aten.mm.default(x, self.linear.weight.t())\n"
                              "out = self.fused_linear_relu.fused_linear_relu_cuda(out, "
                              "self.linear.weight, self.linear.bias)\n"), {"torch_compute"}),
    "functional_relu": (_cuda_forward("out = F.relu(F.linear(x, self.linear.weight, self.linear.bias))\n").replace(
        "import torch.nn as nn\n", "import torch.nn as nn\nimport torch.nn.functional as F\n"), {"torch_compute"}),
    "reference_model": (CUDA_SOLUTION.replace("import torch.nn as nn\n",
                                              "import torch.nn as nn\nfrom reference import Model\n").replace(
        "self.fused_linear_relu = fused_linear_relu",
        "self.fused_linear_relu = fused_linear_relu\n        self.ref = Model(in_features, out_features)").replace(
        "return out.view(B, -1)", "return self.ref(x)"), {"reference_model"}),
    "thread_launching_work": (CUDA_SOLUTION.replace("import torch.nn as nn\n",
                                                    "import torch.nn as nn\nimport threading\n").replace(
        "        return out.view(B, -1)",
        "        threading.Thread(target=self.fused_linear_relu.fused_linear_relu_cuda, "
        "args=(x, self.linear.weight, self.linear.bias)).start()\n"
        "        return out.view(B, -1)"), {"thread"}),
    "timer_patch": (CUDA_SOLUTION + "\ntorch.cuda.Event.elapsed_time = lambda self, end: 0.001\n", {"timer_patch"}),
    "tensor_subclass": (CUDA_SOLUTION + textwrap.dedent("""
        class Lazy(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return super().__torch_function__(func, types, args, kwargs or {})
    """), {"tensor_subclass"}),
    "cxx_matmul": (swap(CUDA_SOLUTION, "    auto out = torch::empty({M, N}, x.options());",
                        "    auto out = torch::relu(torch::matmul(xc, w.t()) + b);\n    return out;"),
                   {"cxx_torch_compute"}),
    "cxx_cublas": (swap(CUDA_SOLUTION, "    dim3 block(16, 16);",
                        "    cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, w.data_ptr<float>(), K, "
                        "xc.data_ptr<float>(), K, &zero, out.data_ptr<float>(), N);\n    dim3 block(16, 16);"),
                   {"cxx_torch_compute"}),
}


@pytest.mark.parametrize("name", sorted(FULL_HACKS))
def test_hacked_full_solutions_are_blocked(name):
    source, expected = FULL_HACKS[name]
    assert expected <= codes(source), analyze(source)


def test_triton_solution_hacks():
    fallback = swap(TRITON_SOLUTION, "        return triton_gelu(x)",
                    "        if not x.is_cuda:\n            return torch.nn.functional.gelu(x, approximate='tanh')\n"
                    "        return triton_gelu(x)")
    assert codes(fallback) == {"fallback"}
    assert blocking(fallback, "lenient") == []
    wrapper_compute = swap(TRITON_SOLUTION, "    return out\n", "    return out * 1.0 + x.sum() * 0\n")
    assert codes(wrapper_compute) == {"torch_compute"}
    msgs = " ".join(f.message for f in blocking(wrapper_compute))
    assert "triton_gelu" in msgs and ".sum()" in msgs


def test_cpp_solution_hacks():
    torch_exp = swap(CPP_SOLUTION, "std::exp(in[r * cols + c] - m)", "torch::exp(xc[r][c] - m).item<float>()")
    assert codes(torch_exp) == {"cxx_torch_compute"}
    at_softmax = swap(CPP_SOLUTION, "    auto out = torch::empty_like(xc);", "    return at::softmax(xc, 1);")
    assert codes(at_softmax) == {"cxx_torch_compute"}
    assert blocking(at_softmax, "lenient") == []


# ------------------------------------------------------------------------------ always-blocking
ALWAYS = {
    "syntax_error": ["def forward(self, x:\n    return x\n"],
    "missing_modelnew": [TORCH_SOLUTION.replace("ModelNew", "MyModel")],
    "timer_patch": [
        make(extra="torch.cuda.synchronize = lambda *a, **k: None"),
        make(extra="import time\ntime.perf_counter = lambda: 0.0"),
        make(extra="from time import perf_counter\nimport time as t\nt.monotonic = perf_counter"),
        make(extra="setattr(torch.cuda.Event, 'elapsed_time', lambda s, e: 1e-6)"),
        make(extra="from torch.cuda import Event\nEvent.record = lambda self, stream=None: None"),
        make(extra="torch.cuda.current_stream = lambda *a: None"),
        make(init="torch.cuda.Event.__dict__['record'] = None"),
    ],
    "torch_internals_patch": [
        make(extra="torch.Tensor.__add__ = lambda a, b: a"),
        make(extra="import builtins\nbuiltins.print = lambda *a, **k: None"),
        make(extra="import sys\nsys.modules['torch.nn.functional'] = None"),
        make(extra="torch.nn.functional.relu = ext.relu_cuda"),
        make(extra="from unittest import mock\nmock.patch('torch.allclose', return_value=True).start()"),
        make(extra="lib = torch.library.Library('aten', 'IMPL')"),
        make(extra="object.__setattr__(torch, 'allclose', lambda *a, **k: True)"),
    ],
    "tensor_subclass": [
        make(extra="class Lazy(torch.Tensor):\n    pass"),
        make(extra="class P(nn.Parameter):\n    pass"),
        make(extra="class Hook:\n    def __torch_dispatch__(self, func, types, args=(), kwargs=None):\n"
                   "        return func(*args)"),
        make("return torch.Tensor._make_subclass(torch.Tensor, ext.relu_cuda(x))"),
        make("return ext.relu_cuda(x).as_subclass(torch.Tensor)"),
        make(extra="from torch.utils._python_dispatch import TorchDispatchMode\nclass M(TorchDispatchMode):\n    pass"),
    ],
    "judge_introspection": [
        make(extra="import os, sys\nCHANNEL = int(sys.argv[2])"),
        make(extra="import os\nos.write(4, b'{}')"),
        make(extra="from os import read as _r\nframe = _r(3, 8)"),
        make(extra="import select\nready = select.select([3], [], [], 0)"),
        make(extra="import gc\nobjs = gc.get_objects()"),
        make(extra="import inspect\nframe = inspect.currentframe()"),
        make(extra="import sys\ncaller = sys._getframe(1).f_back.f_locals"),
        make("f = self.frame\nexpected = f.f_globals['expected']\nreturn expected"),
        make(extra="import sys\nmain = sys.modules['__main__']"),
        make(extra="import sys\nfor name, mod in sys.modules.items():\n    pass"),
        make(extra="maps = open('/proc/self/maps').read()"),
        make(extra="import os\nseed = os.environ['KERNELJUDGE_SEED']"),
        make(extra="import os\nseed = os.environ.get('TORCH_SEED', '0')"),
        make(extra="import os\nseed = os.getenv('kerneljudge_run')"),
        make(extra="import os\nenv = dict(os.environ)"),
        make(extra="import ctypes\nlibc = ctypes.CDLL(None)"),
        make(extra="import kerneljudge"),
        make(extra="import os\nk = 'SEED'\nv = os.environ[k]"),
    ],
    "unsynced_stream": [
        make("s = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    y = ext.relu_cuda(x)\nreturn y"),
        make("with torch.cuda.stream(self.side):\n    return ext.relu_cuda(x)", init="self.side = torch.cuda.Stream()"),
        make("return ext.relu_cuda(x)", extra="SIDE = torch.cuda.Stream()\ndef launch(x):\n"
                                              "    torch.cuda.set_stream(SIDE)\n    return ext.relu_cuda(x)"),
    ],
    "global_flag": [
        make(extra="torch.backends.cuda.matmul.allow_tf32 = True"),
        make(extra="torch.backends.cudnn.benchmark = True"),
        make(extra="import torch.backends.cudnn as cudnn\ncudnn.allow_tf32 = True"),
        make(extra="torch.set_float32_matmul_precision('medium')"),
        make(extra="torch.set_flush_denormal(True)"),
        make(extra="setattr(torch.backends.cudnn, 'deterministic', False)"),
        make(extra="import os\nos.environ['NVIDIA_TF32_OVERRIDE'] = '1'"),
        make(init="torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True"),
    ],
    "dynamic_code": [
        make(extra="exec('torch.cuda.synchronize = lambda: None')"),
        make(extra="code = 'x'\nresult = eval(code)"),
        make(extra="import sys\nmod = __import__(sys.argv[0])"),
        make(extra="import importlib, sys\nm = importlib.import_module(sys.argv[1])"),
    ],
}


@pytest.mark.parametrize("code, index", [(c, i) for c, srcs in sorted(ALWAYS.items()) for i in range(len(srcs))])
@pytest.mark.parametrize("policy", ["strict", "lenient"])
def test_always_blocking_rules(code, index, policy):
    source = ALWAYS[code][index]
    found = analyze(source, policy)
    assert any(f.code == code and f.blocking for f in found), found
    assert RULES[code] == (True, True)


def test_syntax_error_reports_its_line_and_nothing_else():
    found = analyze("import torch\n\nclass ModelNew(nn.Module:\n    pass\n")
    assert [(f.code, f.line, f.blocking) for f in found] == [("syntax_error", 3, True)]


# -------------------------------------------------------------------------- threads and processes
THREADS = [
    make("t = threading.Thread(target=ext.relu_cuda, args=(x,))\nt.start()\nreturn x", extra="import threading"),
    make("pool = ThreadPoolExecutor(1)\nfut = pool.submit(ext.relu_cuda, x)\nreturn x",
         extra="from concurrent.futures import ThreadPoolExecutor"),
    make(extra="import multiprocessing as mp\nctx = mp.get_context('fork')"),
    make(extra="import os\npid = os.fork()"),
    make(extra="import subprocess\nsubprocess.Popen(['nvidia-smi'])"),
    make(extra="import os\nos.system('sleep 100 &')"),
    make(extra="import torch.multiprocessing as tmp"),
    make(extra="t = __import__('threading').Thread(target=print)"),
    make(extra="t = __import__('thread' + 'ing').Thread(target=print)"),
]


@pytest.mark.parametrize("index", range(len(THREADS)))
def test_threads_block_under_strict_and_warn_under_lenient(index):
    source = THREADS[index]
    assert "thread" in codes(source, "strict")
    lenient = [f for f in analyze(source, "lenient") if f.code == "thread"]
    assert lenient and not any(f.blocking for f in lenient)


def test_cxx_detached_thread_is_flagged_joined_thread_is_not():
    detached = swap(CPP_SOLUTION, "    return out;\n}",
                    "    std::thread([=]{ /* late work */ }).detach();\n    return out;\n}")
    assert "thread" in codes(detached)
    joined = swap(CPP_SOLUTION, "    return out;\n}",
                  "    std::thread t([&]{ o[0] = 0.f; });\n    t.join();\n    return out;\n}")
    assert "thread" not in codes(joined, blocking=False)


# ------------------------------------------------------------------------------------------ streams
def test_streams_with_sync_back_are_allowed():
    synced = make("""
        main = torch.cuda.current_stream()
        self.side.wait_stream(main)
        with torch.cuda.stream(self.side):
            y = ext.relu_cuda(x)
        main.wait_stream(self.side)
        y.record_stream(main)
        return y
    """, init="self.side = torch.cuda.Stream()")
    assert blocking(synced) == []
    events = make("""
        s = torch.cuda.Stream()
        done = torch.cuda.Event()
        with torch.cuda.stream(s):
            y = ext.relu_cuda(x)
            done.record(s)
        torch.cuda.current_stream().wait_event(done)
        return y
    """)
    assert blocking(events) == []
    full_sync = make("s = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    y = ext.relu_cuda(x)\n"
                     "torch.cuda.synchronize()\nreturn y")
    assert blocking(full_sync) == []
    current = make("stream = torch.cuda.current_stream().cuda_stream\nreturn ext.relu_cuda(x)")
    assert blocking(current) == []


def test_cxx_side_stream_blocks_only_when_forward_reaches_it():
    side = swap(CUDA_SOLUTION, "    fused_linear_relu_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(",
                "    auto side = at::cuda::getStreamFromPool();\n"
                "    fused_linear_relu_kernel<<<grid, block, 0, side.stream()>>>(")
    assert "unsynced_stream" in codes(side)
    synced = swap(side, "    return out;\n}", "    cudaStreamSynchronize(side.stream());\n    return out;\n}")
    assert "unsynced_stream" not in codes(synced, blocking=False)
    helper = '''
void unused_side_launch(torch::Tensor x) {
    cudaStream_t s;
    cudaStreamCreate(&s);
}
'''
    unreached = swap(CUDA_SOLUTION, 'fused_source = """\n', 'fused_source = """\n' + helper)
    found = analyze(unreached)
    assert not [f for f in found if f.blocking], found
    assert any(f.code == "cxx_unreached" and "unused_side_launch" in f.message for f in found)


# --------------------------------------------------------------------------------- strict: compute
COMPUTE = {
    "torch_matmul": "return torch.matmul(x, self.weight)",
    "torch_relu_alias_module": "return t.relu(x)",
    "from_import_alias": "return m(x, self.weight)",
    "assigned_alias": "mm = torch.mm\nreturn mm(x, self.weight)",
    "functional": "return F.softmax(x, dim=-1)",
    "functional_full_path": "return torch.nn.functional.gelu(ext.relu_cuda(x))",
    "aten": "return torch.ops.aten.relu.default(x)",
    "c_nn": "return torch._C._nn.linear(x, self.weight)",
    "vf": "return torch._VF.tanh(x)",
    "getattr_string": "return getattr(torch, 'tanh')(x)",
    "getattr_computed": "name = 'ta' + 'nh'\nreturn getattr(torch, name)(x)",
    "dict_lookup": "return torch.__dict__['sigmoid'](x)",
    "matmul_operator": "return ext.relu_cuda(x) @ self.weight",
    "scale_by_parameter": "return ext.relu_cuda(x) * self.weight",
    "add_input": "y = ext.relu_cuda(x)\nreturn y + x",
    "scalar_times_tensor": "return 2.0 * ext.relu_cuda(x)",
    "inplace_update": "y = ext.relu_cuda(x)\ny += 1\nreturn y",
    "negate": "return -ext.relu_cuda(x)",
    "compare": "mask = x > 0\nreturn ext.relu_cuda(x)",
    "tensor_method_sum": "return ext.relu_cuda(x).sum(dim=1)",
    "tensor_method_on_input": "return x.softmax(-1)",
    "method_chain": "return x.contiguous().view(-1).exp()",
    "unbound_tensor_method": "return torch.Tensor.matmul(x, self.weight)",
    "dunder_matmul": "return x.__matmul__(self.weight)",
    "nn_module_attr": "return self.conv(x)",
    "nn_sequential": "return self.body(x)",
    "nn_module_list_loop": "for layer in self.layers:\n    x = layer(x)\nreturn x",
    "nn_module_indexed": "return self.layers[0](x)",
    "nn_forward_method": "return self.conv.forward(x)",
    "nn_module_built_in_forward": "return nn.ReLU()(x)",
    "self_alias_attr": "return self.act(x)",
    "helper_function": "return helper(x)",
    "helper_method": "return self._post(ext.relu_cuda(x))",
    "builtin_sum_of_tensors": "return sum([x, x])",
    "operator_module": "import operator\nreturn operator.matmul(x, self.weight)",
    "torch_compile": "return self.compiled(x)",
    "cat": "return torch.cat([ext.relu_cuda(x), x], dim=1)",
    "where": "return torch.where(x > 0, x, 0.0)",
    "einsum": "return torch.einsum('ij,jk->ik', x, self.weight)",
    "local_autograd_function": "return Fn.apply(x)",
}
COMPUTE_EXTRA = '''
import torch as t
from torch import mm as m

def helper(v):
    return torch.tanh(v)

class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, v):
        return v.clamp(min=0)
'''
COMPUTE_INIT = '''
self.conv = nn.Conv2d(3, 8, 3)
self.body = nn.Sequential(nn.Linear(16, 16), nn.ReLU())
self.layers = nn.ModuleList([nn.Linear(16, 16) for _ in range(2)])
self.act = F.gelu
self.compiled = torch.compile(lambda v: v * 2)
'''


@pytest.mark.parametrize("name", sorted(COMPUTE))
def test_pytorch_compute_in_forward_is_strict_only(name):
    body = COMPUTE[name]
    extra = COMPUTE_EXTRA
    if name == "helper_method":
        body = body + "\n\ndef _post(self, y):\n    return torch.log1p(y)"
    source = make(body, init=COMPUTE_INIT, extra=extra)
    assert "torch_compute" in codes(source), analyze(source)
    assert blocking(source, "lenient") == []


EVASIONS = {
    "getattr_concatenated_name": ("return mm(x, self.weight)", "mm = getattr(torch, 'm' + 'm')", ""),
    "getattr_name_variable": ("return getattr(torch, op)(x, self.weight)", "op = 'm'\nop += 'm'", ""),
    "getattr_computed_name_anywhere": ("return fn(x)", "import os\nfn = getattr(torch, os.path.basename('tanh'))", ""),
    "dunder_call": ("return torch.mm.__call__(x, self.weight)", "", ""),
    "passed_to_map": ("return list(map(torch.relu, [x]))[0]", "", ""),
    "passed_to_reduce": ("import functools\nreturn functools.reduce(torch.add, [x, x])", "", ""),
    "forward_hook": ("return ext.relu_cuda(x)", "", "self.register_forward_hook(lambda m, i, o: torch.relu(o))"),
    "aten_namespace_alias": ("return ops.mm(x, self.weight)", "ops = torch.ops.aten", ""),
    "dunder_import": ("return F2.relu(x)", "F2 = __import__('torch').nn.functional", ""),
    "vars_lookup": ("return vars(torch)['relu'](x)", "", ""),
    "sys_modules_lookup": ("import sys\nreturn sys.modules['torch'].relu(x)", "", ""),
    "torch_functional_module": ("return torch.functional.einsum('ij->ji', x)", "", ""),
    "type_dunder": ("return type(x).__matmul__(x, self.weight)", "", ""),
    "nn_built_then_called": ("act = nn.GELU()\nreturn act(ext.relu_cuda(x))", "", ""),
    "lambda_in_forward": ("act = lambda v: torch.sigmoid(v)\nreturn act(ext.relu_cuda(x))", "", ""),
}


@pytest.mark.parametrize("name", sorted(EVASIONS))
def test_aliasing_and_indirection_do_not_hide_compute(name):
    body, extra, init = EVASIONS[name]
    source = make(body, init=init, extra=extra)
    assert "torch_compute" in codes(source), analyze(source)


def test_property_used_by_forward_is_checked():
    source = make("return ext.relu_cuda(x) + 0 if False else self.wt").replace(
        "    def forward(self, x):",
        "    @property\n    def wt(self):\n        return self.weight.t() * 2\n\n    def forward(self, x):")
    assert any(f.code == "torch_compute" and "`wt`" in f.message for f in analyze(source))


def test_autograd_backward_and_helper_module_init_are_not_forward():
    source = make("y = self.block(x)\nreturn Fn.apply(y)", init="self.block = Block()", extra="""
        class Fn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, v):
                ctx.save_for_backward(v)
                return ext.relu_cuda(v)

            @staticmethod
            def backward(ctx, g):
                (v,) = ctx.saved_tensors
                return g * (v > 0).to(g.dtype)

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(16, 16)
                self.gain = nn.Parameter(torch.ones(16) * 0.5)

            def forward(self, v):
                return ext.relu_cuda(v.contiguous())
    """)
    assert blocking(source) == [], analyze(source)


def test_threading_lock_is_not_a_thread():
    source = make(extra="import threading\n_lock = threading.Lock()\nwith _lock:\n    pass")
    assert blocking(source) == []


def test_torch_compute_in_a_helper_names_the_helper():
    source = make("return helper(x)", extra="def helper(v):\n    return torch.tanh(v)")
    (f,) = [f for f in analyze(source) if f.code == "torch_compute"]
    assert "`helper` (reached from forward)" in f.message and "torch.tanh" in f.message


def test_unreached_helpers_and_init_are_not_compute():
    source = make("return ext.relu_cuda(x)",
                  init="self.w2 = self.weight @ self.weight\nself.ref = torch.softmax(self.weight, 0)",
                  extra="def reference_check(a):\n    return torch.allclose(torch.relu(a), ext.relu_cuda(a))")
    assert blocking(source) == []


# ------------------------------------------------------------------------------------- fallbacks
FALLBACKS = {
    "except_handler": """
        try:
            return ext.relu_cuda(x)
        except RuntimeError:
            return torch.relu(x)
    """,
    "else_branch": """
        if x.is_cuda:
            y = ext.relu_cuda(x)
        else:
            y = x.clamp(min=0)
        return y
    """,
    "early_return": """
        if not x.is_cuda:
            return F.relu(x)
        return ext.relu_cuda(x)
    """,
    "swallowed_error": """
        try:
            return ext.relu_cuda(x)
        except Exception:
            pass
        return torch.relu(x)
    """,
    "conditional_expression": "return ext.relu_cuda(x) if x.is_cuda else torch.relu(x)",
    "nn_module_in_handler": """
        try:
            return ext.relu_cuda(x)
        except Exception:
            return self.act(x)
    """,
}


@pytest.mark.parametrize("name", sorted(FALLBACKS))
def test_fallback_to_pytorch(name):
    source = make(FALLBACKS[name], init="self.act = nn.ReLU()")
    assert codes(source) == {"fallback"}, analyze(source)
    assert blocking(source, "lenient") == []


def test_try_except_around_the_build_is_fine():
    source = swap(CUDA_SOLUTION, "fused_linear_relu = load_inline(", "try:\n    fused_linear_relu = load_inline(")
    source = swap(source, '    extra_cuda_cflags=["-O3", "--use_fast_math"],\n)\n',
                  '    extra_cuda_cflags=["-O3", "--use_fast_math"],\n)\n'
                  'except Exception as e:\n    print("build failed", e)\n    raise\n')
    source = source.replace("fused_linear_relu = load_inline(", "    fused_linear_relu = load_inline(", 1)
    assert detect_backend(source) == "cuda"
    assert blocking(source) == []
    lazy = make("return self._ext().relu_cuda(x)", extra="""
        _EXT = None
        def _build():
            try:
                return load_inline(name="relu2", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
                                   cuda_sources=relu_src, functions=["relu_cuda"])
            except Exception:
                return None
    """, init="self._ext = _build")
    assert blocking(lazy) == []


# ------------------------------------------------------------------------------- reference Model
@pytest.mark.parametrize("snippet", [
    make("return self.ref(x)", init="self.ref = Model()"),
    make(extra="class Sub(Model):\n    pass"),
    make(extra="from problem import Model as Reference"),
    make(extra="import problem\nR = problem.Model"),
    make(extra="R = globals()['Model']"),
])
def test_reference_model_is_strict_only(snippet):
    assert "reference_model" in codes(snippet)
    assert "reference_model" not in codes(snippet, "lenient")


def test_a_copied_unused_reference_class_is_not_a_reference_call():
    copied = make(extra="class Model(nn.Module):\n    def __init__(self):\n        super(Model, self).__init__()\n"
                        "    def forward(self, x):\n        return torch.relu(x)")
    assert blocking(copied) == []


# ---------------------------------------------------------------------------------- C++ compute
CXX = {
    "torch_matmul": "auto y = torch::matmul(x, x);",
    "at_conv2d": "auto y = at::conv2d(x, x);",
    "method_matmul": "auto y = x.matmul(x);",
    "method_on_tensor_var": "auto y = x.sum(1);",
    "chained_method": "auto y = x.contiguous().exp();",
    "functional": "auto y = torch::nn::functional::relu(x);",
    "native": "auto y = at::native::relu(x);",
    "ops": "auto y = at::_ops::mm::call(x, x);",
    "blas": "at::cuda::blas::gemm<float>('n', 'n', 1, 1, 1, 1.f, nullptr, 1, nullptr, 1, 0.f, nullptr, 1);",
    "cublas": "cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &a, p, 1, p, 1, &b, p, 1);",
    "cudnn": "cudnnConvolutionForward(h, &a, d, p, d, p, c, algo, ws, 0, &b, d, p);",
    "using_namespace": "using namespace at;\nauto y = softmax(x, 1);",
    "global_qualified": "auto y = ::at::addmm(x, x, x);",
}


@pytest.mark.parametrize("name", sorted(CXX))
def test_cxx_torch_compute(name):
    source = swap(TEMPLATE.replace("@EXTRA@", "").replace("@INIT@", "")
                  .replace("@BODY@", "        return ext.relu_cuda(x)"),
                  "    auto y = torch::empty_like(x);", "    " + CXX[name].replace("\n", "\n    "))
    assert "cxx_torch_compute" in codes(source), analyze(source)
    assert blocking(source, "lenient") == []


@pytest.mark.parametrize("name, snippet, code", [
    ("tf32", "at::globalContext().setAllowTF32CuBLAS(true);", "global_flag"),
    ("proc", 'FILE* f = fopen("/proc/self/mem", "r");', "judge_introspection"),
    ("dlsym", 'void* p = dlsym(RTLD_NEXT, "cudaEventElapsedTime");', "judge_introspection"),
    ("env", 'const char* s = getenv("KERNELJUDGE_SEED");', "judge_introspection"),
    ("popen", 'FILE* p = popen("sleep 10 &", "r");', "thread"),
])
def test_cxx_attacks(name, snippet, code):
    source = swap(make(), "    auto y = torch::empty_like(x);",
                  "    " + snippet + "\n    auto y = torch::empty_like(x);")
    assert code in codes(source), analyze(source)


def test_cxx_registering_aten_kernels_is_a_patch():
    source = make() + ('lib = """\n#include <torch/extension.h>\n'
                       'TORCH_LIBRARY_IMPL(aten, CUDA, m) { m.impl("mm", &my_mm); }\n"""\n')
    assert "torch_internals_patch" in codes(source)


def test_cxx_comments_strings_and_own_functions_are_not_compute():
    cxx = r'''
// torch::matmul would be simpler; we do not use it. at::softmax(x) either.
/* x.sum() in a comment */
__device__ float relu(float v) { return v > 0.f ? v : 0.f; }
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}
torch::Tensor f(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous(), "torch::matmul(x) is not called; x.sum() neither");
    auto y = torch::zeros_like(x);
    auto n = x.numel();
    auto v = x.view({-1}).contiguous();
    float m = std::max(1.0f, std::numeric_limits<float>::lowest());
    int64_t blocks = at::ceil_div(n, (int64_t)256);
    auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(x.device());
    auto z = torch::empty({x.size(0), x.size(1)}, opts);
    const char c = 'x';
    int big = 1'000'000;
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "f", ([&] { auto* p = x.data_ptr<scalar_t>(); }));
    return y;
}
'''
    source = make(extra=f"other_src = r'''\n#include <torch/extension.h>\n{cxx}'''\n"
                        "other = load_inline('o', cpp_sources=other_src)")
    assert blocking(source) == [], analyze(source)


# ----------------------------------------------------------------------------------- no kernel
def test_kernel_built_but_never_called_is_noted_not_blocking():
    source = make("return x.clone()")
    notes = [f for f in analyze(source) if f.code == "kernel_not_called"]
    assert notes and not notes[0].blocking


# -------------------------------------------------------------------------- allowed constructs
ALLOWED = {
    "allocation": """
        a = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        b = torch.empty_like(x)
        c = torch.zeros(4, 4)
        d = torch.zeros_like(x)
        e = torch.ones(3)
        f = torch.full((2, 2), 1.5)
        g = x.new_empty((x.size(0), 4))
        h = torch.empty_strided((2, 2), (2, 1))
        return ext.relu_cuda(x)
    """,
    "views": """
        B, C = x.shape[0], x.shape[1]
        y = x.view(B, -1).reshape(B, C, -1).flatten(1).permute(1, 0).transpose(0, 1).contiguous()
        y = y.unsqueeze(0).squeeze(0).expand(B, -1).narrow(0, 0, B).select(1, 0)
        z = x[:, 0]
        w = x[..., 1:3]
        return ext.relu_cuda(y)
    """,
    "inspection_and_casts": """
        n = x.numel()
        d = x.dim()
        s = x.stride(0)
        ok = x.is_contiguous() and x.dtype == torch.float32 and x.device.type == "cuda" and x.size(0) > 0
        if x.dtype != torch.float32:
            x = x.float()
        x = x.to(torch.float16).half().cuda().cpu().to(x.device)
        return ext.relu_cuda(x.contiguous())
    """,
    "python_int_math": """
        B, C, H, W = x.shape
        out_h = (H + 2 * 1 - 3) // 1 + 1
        total = B * C * out_h * W
        blocks = (total + 255) // 256
        scale = 1.0 / math.sqrt(C) * self.scale
        rows = x.size(0) * x.size(1)
        return ext.relu_cuda(x.view(rows, -1)).view(B, C, H, W)
    """,
    "asserts": """
        assert x.is_cuda, "needs cuda"
        assert (x >= 0).all() or True
        assert x.shape[-1] == self.weight.shape[0]
        return ext.relu_cuda(x)
    """,
    "synchronize_and_current_stream": """
        torch.cuda.synchronize()
        stream = torch.cuda.current_stream()
        y = ext.relu_cuda(x)
        stream.synchronize()
        return y
    """,
    "weights_only_from_linear": """
        w = self.linear.weight
        b = self.linear.bias
        return ext.relu_cuda(x.contiguous()).view(x.size(0), -1)
    """,
    "none_checks_and_flags": """
        if x is None or self.scale is None:
            raise ValueError("missing input")
        if self.training:
            pass
        return ext.relu_cuda(x)
    """,
    "list_handling": """
        outs = []
        for chunk in x.split(4):
            outs.append(ext.relu_cuda(chunk.contiguous()))
        dims = [x.size(0)] * 2 + [3]
        return outs[0]
    """,
    "copy_into_output": """
        out = torch.empty_like(x)
        out.copy_(ext.relu_cuda(x))
        out.zero_() if False else None
        return out.clone().detach()
    """,
}
ALLOWED_INIT = """
self.linear = nn.Linear(16, 16)
self.bias = nn.Parameter(torch.zeros(16))
nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
with torch.no_grad():
    self.weight.copy_(self.linear.weight * 2)
    self.bias.fill_(0.1)
self.register_buffer("running", torch.ones(16))
"""


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_allowed_constructs_do_not_block(name):
    source = make(ALLOWED[name], init=ALLOWED_INIT, extra="import math")
    assert blocking(source) == [], analyze(source)


def test_triton_details_do_not_block():
    source = TRITON_SOLUTION + textwrap.dedent('''
        @triton.jit
        def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            offs = pid * BLOCK + tl.arange(0, BLOCK)
            a = tl.load(a_ptr + offs, mask=offs < n)
            b = tl.load(b_ptr + offs, mask=offs < n)
            tl.store(c_ptr + offs, tl.sum(a * b) + tl.exp(a) @ b, mask=offs < n)

        def add(a, b):
            c = torch.empty_like(a)
            n = a.numel()
            add_kernel[(triton.cdiv(n, 1024),)](a, b, c, n, BLOCK=1024)
            return c
    ''')
    source = swap(source, "return triton_gelu(x)", "return add(triton_gelu(x), x)")
    assert blocking(source) == [], analyze(source)


def test_helpers_module_level_builds_and_strings_do_not_block():
    source = make("return Launcher(ext).run(x)", extra='''
        import os
        os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"
        os.environ.setdefault("MAX_JOBS", "4")
        cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        doc = "this module avoids torch.matmul and F.relu on purpose"
        import logging
        log = logging.getLogger(__name__)

        class Launcher:
            def __init__(self, module):
                self.module = module
                self.seen = set()

            def run(self, x):
                self.seen.add(x.shape)
                log.log(10, "launch")
                return self.module.relu_cuda(x)

        def unused():
            pass
    ''')
    assert blocking(source) == [], analyze(source)


def test_own_module_and_stdlib_lookups_in_sys_modules_are_fine():
    source = make(extra="import sys\nsetattr(sys.modules[__name__], '_cache', {})\nm = sys.modules.get(__name__)\n"
                        "json_mod = sys.modules['json']\nhas_triton = 'triton' in sys.modules")
    assert blocking(source) == [], analyze(source)


def test_setting_up_streams_in_init_alone_is_fine():
    source = make("return ext.relu_cuda(x)", init="self.stream = torch.cuda.Stream()")
    assert blocking(source) == []


# ---------------------------------------------------------------------------------- robustness
def test_nothing_is_imported_or_executed():
    sentinel = make(extra="raise SystemExit('executed!')\nimport this_module_does_not_exist")
    assert "dynamic_code" not in codes(sentinel)  # analysed, never run: no exception above


@pytest.mark.parametrize("source", ["", "x = 1", "\x00", "(" * 300 + ")" * 300, "class ModelNew:\n    pass\n"])
def test_degenerate_sources_never_raise(source):
    found = analyze(source)
    assert all(isinstance(f, Finding) for f in found)
    assert detect_backend(source) in ("cuda", "triton", "cpp", "torch")


@pytest.mark.parametrize("snippet, code", [
    (make(extra="del torch.cuda.synchronize"), "timer_patch"),
    (make(extra="import signal\nsignal.alarm(1)"), "thread"),
    (make("return ext.relu_cuda(x) & (x > 0)"), "torch_compute"),
    (make("y = ext.relu_cuda(x)\nreturn y if y.sum() > 0 else x"), "torch_compute"),
    (make("y = []\ny = ext.relu_cuda(x)\nreturn y * 2"), "torch_compute"),  # not only ever a list
])
def test_documented_corner_cases(snippet, code):
    assert code in codes(snippet), analyze(snippet)


def test_shapes_and_container_arithmetic_are_not_compute():
    source = make("""
        out_shape = x.shape[:-1] + (self.weight.shape[0],)
        outs = [ext.relu_cuda(x)]
        outs = outs + [x] * 0
        ok = x.size(0) > 0 and x.dim() == 2
        n = x.numel() // 2 ** 3 - 1
        return outs[0].view(out_shape)
    """)
    assert blocking(source) == [], analyze(source)


def test_sequential_built_from_a_list_variable_is_an_nn_module():
    source = make("return self.features(x)", init="""
        layers = []
        for _ in range(2):
            layers += [nn.Conv2d(3, 3, 3), nn.ReLU(inplace=True)]
        self.features = nn.Sequential(*layers)
    """)
    assert any(f.code == "torch_compute" and "self.features" in f.message for f in analyze(source))
    local = make("return self.blocks[0](x)", init="""
        blocks = []
        blocks.append(Block())
        self.blocks = nn.ModuleList(blocks)
        self.norm = nn.LayerNorm(16)
    """, extra="class Block(nn.Module):\n    def forward(self, v):\n        return ext.relu_cuda(v)")
    assert blocking(local) == [], analyze(local)


def test_persisting_l2_controls_are_refused_under_strict_and_noted_under_lenient():
    """Threat A10: a persisting-L2 window keeps data in L2 across the judge's flush. The fixture and its honest
    twin (the same kernel without the window) differ only by those calls."""
    from pathlib import Path

    fixtures = Path(__file__).parent / "fixtures" / "solutions"
    hack = (fixtures / "gpu_hack_persisting_l2.py").read_text()
    strict = [f for f in analyze(hack, "strict") if f.code == "persisting_l2"]
    assert strict and all(f.blocking for f in strict)
    assert {"cudaLimitPersistingL2CacheSize", "accessPolicyWindow"} <= {f.message.split()[3] for f in strict}
    lenient = [f for f in analyze(hack, "lenient") if f.code == "persisting_l2"]
    assert lenient and not any(f.blocking for f in lenient)
    twin = (fixtures / "gpu_correct_cuda_scale_relu.py").read_text()
    assert not [f for f in analyze(twin, "strict") if f.blocking]
