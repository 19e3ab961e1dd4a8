"""Static analysis of the library backends (issues 26 and 34): cupy, cuda_core, numba, helion, cute, tilelang.

Each backend gets an honest solution written the way its library's documentation writes kernels, then the
same solution with library compute, an unjoined side stream, or a joined one spliced in. Nothing here imports
cupy, numba, helion, cutlass or tilelang: the analysis only parses source text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kerneljudge.analysis import BACKENDS, analyze, detect_backend
from kerneljudge.analysis import kernels as K
from kerneljudge.analysis.backend import DETECTORS
from kerneljudge.core.types import BACKENDS as KERNEL_BACKENDS

CUPY = '''
import torch
import torch.nn as nn
import cupy as cp

_SRC = r"""
extern "C" __global__ void scale_relu(const float* x, float* y, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i] * s; y[i] = v > 0.f ? v : 0.f; }
}
"""
_kernel = cp.RawKernel(_SRC, "scale_relu")
_add = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y", "fused_add")
_sum = cp.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0")


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        with stream:
            x_cp = cp.from_dlpack(x)
            y_cp = cp.ascontiguousarray(cp.from_dlpack(out)).reshape(-1)
            _kernel(((n + 255) // 256,), (256,), (x_cp, y_cp, cp.float32(self.scale), cp.int32(n)))
        return out
'''

CUDA_CORE = '''
import numpy as np
import torch
import torch.nn as nn
from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch

CODE = r"""
template <typename T>
__global__ void vec_add(const T* a, const T* b, T* c, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        dev = Device()
        dev.set_current()
        prog = Program(CODE, code_type="c++", options=ProgramOptions(std="c++17", arch=f"sm_{dev.arch}"))
        module = prog.compile("cubin", name_expressions=("vec_add<float>",))
        self.kernel = module.get_kernel("vec_add<float>")
        self.dev = dev

    def forward(self, a, b):
        c = torch.empty_like(a)
        n = a.numel()
        stream = self.dev.create_stream(torch.cuda.current_stream())
        config = LaunchConfig(grid=(n + 255) // 256, block=256)
        launch(stream, config, self.kernel, a.data_ptr(), b.data_ptr(), c.data_ptr(), np.uint64(n))
        return c
'''

NUMBA = '''
import math
import torch
import torch.nn as nn
from numba import cuda


@cuda.jit(device=True)
def _cube(v):
    return v * v * v


@cuda.jit
def gelu_kernel(x, y, n):
    i = cuda.grid(1)
    if i < n:
        v = x[i]
        y[i] = 0.5 * v * (1.0 + math.tanh(0.7978845608 * (v + 0.044715 * _cube(v))))


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)
        xs, ys = cuda.as_cuda_array(x.view(-1)), cuda.as_cuda_array(out.view(-1))
        gelu_kernel[(n + 255) // 256, 256, stream](xs, ys, n)
        return out
'''

HELION = '''
import torch
import torch.nn as nn
import helion
import helion.language as hl


@helion.kernel(config=helion.Config(block_sizes=[64, 64, 32]))
def matmul_relu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = y.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], y[tile_k, tile_n])
        out[tile_m, tile_n] = torch.relu(acc).to(out.dtype)
    return out


class ModelNew(nn.Module):
    def forward(self, x, y):
        return matmul_relu(x, y)
'''

CUTE = '''
import torch
import torch.nn as nn
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.kernel
def add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdim, _, _ = cute.arch.block_dim()
    i = bidx * bdim + tidx
    m, n = gA.shape
    if i < m * n:
        gC[i // n, i % n] = gA[i // n, i % n] + gB[i // n, i % n]


@cute.jit
def add_launch(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    m, n = mA.shape
    add_kernel(mA, mB, mC).launch(grid=((m * n + 255) // 256, 1, 1), block=(256, 1, 1))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._compiled = None

    def forward(self, a, b):
        c = torch.empty_like(a)
        args = (from_dlpack(a), from_dlpack(b), from_dlpack(c))
        if self._compiled is None:
            self._compiled = cute.compile(add_launch, *args)
        self._compiled(*args)
        return c
'''

# TileLang's lazy style: a @tilelang.jit factory returns a @T.prim_func; calling it compiles a kernel object
TILELANG = '''
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T


@tilelang.jit
def scale_relu(rows, cols, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((rows, cols), dtype), Out: T.Tensor((rows, cols), dtype)):
        with T.Kernel(T.ceildiv(cols, 64), T.ceildiv(rows, 8), threads=128) as (bx, by):
            for i, j in T.Parallel(8, 64):
                r = by * 8 + i
                c = bx * 64 + j
                if r < rows and c < cols:
                    Out[r, c] = T.max(X[r, c] * 2.0, 0.0) + X[r, c] * X[r, c]

    return main


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernels = {}

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        key = tuple(x.shape)
        if key not in self.kernels:
            self.kernels[key] = scale_relu(x.shape[0], x.shape[1])
        self.kernels[key](x, out)
        return out
'''

# TileLang's eager style: the @tilelang.jit function opens T.Kernel itself and runs when called
TILELANG_EAGER = '''
import torch.nn as nn
import tilelang
import tilelang.language as T


@tilelang.jit
def add_rows(A, B, block_m: int = 32):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    B: T.Tensor((M, N), T.float32)
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, block_m), threads=128) as bx:
        for i, j in T.Parallel(block_m, N):
            C[bx * block_m + i, j] = A[bx * block_m + i, j] + B[bx * block_m + i, j]
    return C


class ModelNew(nn.Module):
    def forward(self, a, b):
        return add_rows(a, b)
'''

HONEST = {"cupy": CUPY, "cuda_core": CUDA_CORE, "numba": NUMBA, "helion": HELION, "cute": CUTE,
          "tilelang": TILELANG}


def codes(source: str, policy: str = "strict", blocking: bool = True) -> list[str]:
    return [f.code for f in analyze(source, policy) if f.blocking or not blocking]


def findings(source: str, code: str) -> list:
    return [f for f in analyze(source, "strict") if f.code == code]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def splice(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new, 1)


# --------------------------------------------------------------------------------------------- detection
def test_every_backend_has_one_detector_in_preference_order():
    assert KERNEL_BACKENDS == ("cuda", "triton", "cpp", "cupy", "cuda_core", "numba", "helion", "cute", "tilelang")
    assert sorted(name for name, _ in DETECTORS) == sorted(KERNEL_BACKENDS)
    assert [name for name, _ in DETECTORS] == ["cuda", "triton", "cupy", "cuda_core", "numba", "helion", "cute",
                                               "tilelang", "cpp"]
    assert BACKENDS == KERNEL_BACKENDS + ("torch",)


@pytest.mark.parametrize("backend", sorted(HONEST))
def test_detects_each_backend(backend):
    assert detect_backend(HONEST[backend]) == backend


@pytest.mark.parametrize("source,backend", [
    ("import cupy\nk = cupy.RawModule(code=SRC)\n", "cupy"),
    ("from cupy import ReductionKernel as R\nk = R('T x', 'T y', 'x', 'a + b', 'y = a', '0')\n", "cupy"),
    ("from cuda.core.experimental import Program\np = Program(src, code_type='c++')\n", "cuda_core"),
    ("import numba.cuda\n@numba.cuda.jit('void(float32[:])')\ndef k(x):\n    pass\n", "numba"),
    ("from numba import cuda\ndef f(x):\n    pass\nk = cuda.jit(f)\n", "numba"),
    ("from numba import cuda\n@cuda.jit(device=True)\ndef f(x):\n    return x\n", "torch"),   # no kernel
    ("import helion\n@helion.kernel\ndef f(x):\n    return x\n", "helion"),
    ("import cutlass.cute as cute\n@cute.kernel\ndef k(a):\n    pass\n", "cute"),
    ("import cupy as cp\ny = cp.matmul(a, b)\n", "torch"),                                # library only
    ("import cupy as cp\nimport triton\n@triton.jit\ndef k(x):\n    pass\nr = cp.RawKernel(s, 'k')\n", "triton"),
    ("import cupy as cp\nfrom numba import cuda\n@cuda.jit\ndef k(x):\n    pass\nr = cp.RawKernel(s, 'g')\n", "cupy"),
    ("import helion\nimport cutlass.cute as cute\n@cute.kernel\ndef k(a):\n    pass\n@helion.kernel\ndef h(x):\n"
     "    return x\n", "helion"),
    ("import tilelang.language as T\n@T.prim_func\ndef main(A: T.Tensor((4,), 'float32')):\n    pass\n", "tilelang"),
    ("from tilelang import language as T\nfrom tilelang.language import prim_func\n@prim_func\ndef k(A):\n"
     "    pass\n", "tilelang"),
    (TILELANG_EAGER, "tilelang"),
    ("import tilelang\nimport tilelang.language as T\ndef f(A):\n    with T.Kernel(1, threads=32) as bx:\n"
     "        pass\nk = tilelang.jit(f)\n", "tilelang"),                        # the eager style, wrapped
    ("import tilelang\n@tilelang.jit\ndef f(n):\n    return make(n)\n", "torch"),  # a factory, no kernel in sight
    ("import tilelang.language as T\nx = T.ceildiv(7, 2)\n", "torch"),              # the language alone
    ("import tilelang.language as T\nimport cutlass.cute as cute\n@cute.kernel\ndef k(a):\n    pass\n"
     "@T.prim_func\ndef main(A):\n    pass\n", "cute"),
])
def test_detection_forms_and_preference(source, backend):
    assert detect_backend(source) == backend


# ---------------------------------------------------------------------------------------- honest passes
@pytest.mark.parametrize("backend", sorted(HONEST))
@pytest.mark.parametrize("policy", ["strict", "lenient"])
def test_honest_solutions_pass(backend, policy):
    assert codes(HONEST[backend], policy) == []
    assert "kernel_not_called" not in codes(HONEST[backend], policy, blocking=False)


# ------------------------------------------------------------------------------------- own kernel names
@pytest.mark.parametrize("backend,expected", [
    ("cupy", {"scale_relu", "fused_add", "reduce_kernel"}),
    ("cuda_core", {"vec_add"}),
    ("numba", {"gelu_kernel"}),
    ("helion", {"_helion_matmul_relu"}),
    ("cute", {"kernel_cutlass_add_kernel"}),
    ("tilelang", {"main_kernel"}),
])
def test_custom_kernel_names(backend, expected):
    names = K.custom_kernel_names(HONEST[backend])
    assert expected <= names
    assert "_cube" not in names and "add_launch" not in names  # device functions and host launchers


def test_tilelang_kernel_names_follow_the_prim_func():
    # TileLang names the device kernel after the prim_func (`main` -> `main_kernel`), the eager style after the
    # decorated function; a lazy factory's own name is never a kernel's
    assert "scale_relu_kernel" not in K.custom_kernel_names(TILELANG)
    assert K.custom_kernel_names(TILELANG_EAGER) >= {"add_rows_kernel"}


NUMBA_DEMANGLED = ("cudapy::solution::gelu_kernel[abi:v1][abi:cw51cXTLSUwv1sDUYKthoaNgpqmjAE8StqAkBQxStNhFE]"
                   "(Array<float, 1, C, mutable, aligned>, Array<float, 1, C, mutable, aligned>, long long)")
NUMBA_MANGLED = "_ZN6cudapy8solution11gelu_kernelB2v1B16cw51cXTLSUwv1sDUE5ArrayIfLi1E1C7mutable7alignedEx"
CUTE_NAME = "kernel_cutlass_add_kernel_tensorptrf32gmemo1024102410241_tensorptrf32gmemo10241_0"


@pytest.mark.parametrize("name,base", [
    (NUMBA_DEMANGLED, "gelu_kernel"),
    (NUMBA_MANGLED, "gelu_kernel"),
    ("_ZN8__main__9histogramB2v1B4abcdE5ArrayIfLi1E1C7mutable7alignedE", "histogram"),  # numba-cuda, no cudapy
    ("_Z10scale_reluPKfPffi", "scale_relu"),                                                # a C++-linkage kernel
    ("void vec_add<float>(float const*, float const*, float*, unsigned long)", "vec_add"),
    (CUTE_NAME, CUTE_NAME),
])
def test_base_names_of_library_kernels(name, base):
    assert K.base_name(name) == base


def _gpu(rows):
    return {"device": "cuda", "wall_us": 100.0, "op_us": 0.0,
            "rows": [{"name": n, "chain": c, "us": us, "calls": 1, "kind": "kernel"} for n, c, us in rows]}


@pytest.mark.parametrize("backend,kernel", [
    ("cupy", "scale_relu"),
    ("cupy", "fused_add"),
    ("cuda_core", "void vec_add<float>(float const*, float const*, float*, unsigned long)"),
    ("numba", NUMBA_DEMANGLED),
    ("numba", NUMBA_MANGLED),
    ("helion", "_helion_matmul_relu"),
    ("cute", CUTE_NAME),
    ("tilelang", "main_kernel"),
    ("tilelang", "main_kernel_1"),   # a second T.Kernel block of the same prim_func
])
def test_profile_counts_each_backends_kernels_as_custom(backend, kernel):
    custom = K.custom_kernel_names(HONEST[backend])
    summary = K.classify(_gpu([(kernel, [], 30.0), ("Memcpy DtoD (Device -> Device)", [], 5.0)]), custom)
    assert summary.by_class["custom"] == 30.0
    assert K.decide(summary, ref_ms=0.01) is None


def test_profile_library_kernels_of_the_new_libraries():
    custom = K.custom_kernel_names(CUPY) | K.custom_kernel_names(CUTE)
    rows = [("scale_relu", [], 10.0),
            ("cupy_multiply", [], 20.0),                                          # CuPy's own ufunc
            ("cupy_copy__float32_float32", [], 3.0),                              # a CuPy copy: allowed
            ("sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x32_cublas", [], 40.0),  # cupy.matmul's cuBLAS
            ("kernel_cutlass_someone_elses_kernel_tensorptr_0", [], 1.0)]       # not named by the source: unknown
    summary = K.classify(_gpu(rows), custom)
    by_name = {r.name: r.cls for r in summary.rows}
    assert by_name["cupy_multiply"] == "library_compute" and by_name["cupy_copy__float32_float32"] == "allowed"
    assert by_name["kernel_cutlass_someone_elses_kernel_tensorptr_0"] == "other"
    assert summary.by_class["library_compute"] == 60.0
    why = K.decide(summary)
    assert why and "library compute carries" in why
    # a kernel launched inside an aten op is the op's, whatever its name
    assert K.kernel_class("scale_relu", ["aten::mm"], frozenset(custom)) == "library_compute"


# ------------------------------------------------------------------------------ library compute (strict)
RET = "        return out\n"


@pytest.mark.parametrize("backend,old,new,expected", [
    ("cupy", RET, "        z = cp.matmul(x_cp, x_cp)\n" + RET, "cp.matmul (cupy.matmul, CuPy library compute)"),
    ("cupy", RET, "        z = cp.linalg.norm(x_cp)\n" + RET, "cupy.linalg.norm"),
    ("cupy", RET, "        z = cp.exp(x_cp)\n" + RET, "cupy.exp"),
    ("cupy", RET, "        z = x_cp.sum()\n" + RET, "the CuPy array method .sum()"),
    ("cupy", RET, "        z = x_cp * 2.0\n" + RET, "applies `*` to CuPy arrays"),
    ("cupy", RET, "        z = x_cp @ x_cp\n" + RET, "applies `@` to CuPy arrays"),
    ("cupy", RET, "        y_cp += 1\n" + RET, "applies `+=` to a CuPy array"),
    ("cuda_core", "        return c\n", "        c = nvmath.linalg.advanced.matmul(a, b)\n        return c\n",
     "nvmath.linalg.advanced.matmul (nvmath-python library compute)"),
    ("helion", "    m, k = x.size()\n", "    x = torch.matmul(x, y)\n    m, k = x.size()\n", "torch.matmul"),
])
def test_library_compute_is_reported_with_its_line(backend, old, new, expected):
    source = splice(HONEST[backend], old, new)
    if backend == "cuda_core":
        source = "import nvmath\n" + source
    hits = findings(source, "torch_compute")
    assert len(hits) == 1 and hits[0].blocking, hits
    assert hits[0].line == line_of(source, new.splitlines()[0].strip())
    assert expected in hits[0].message
    lenient = [f for f in analyze(source, "lenient") if f.code == "torch_compute"]
    assert lenient and not lenient[0].blocking


def test_importing_a_library_is_not_using_it():
    assert codes(splice(CUPY, "import cupy as cp\n", "import cupy as cp\nimport cupyx.scipy.signal\n")) == []


def test_cublas_handles_and_plans_are_library_compute():
    source = splice(CUPY, "import cupy as cp\n", "import cupy as cp\nfrom cupy_backends.cuda.libs import cublas\n")
    source = splice(source, "        return out\n",
                    "        h = cp.cuda.device.get_cublas_handle()\n"
                    "        cublas.sgemm(h, 0, 0, n, n, n, 1.0, x_cp.data.ptr, n, x_cp.data.ptr, n, 0.0, "
                    "y_cp.data.ptr, n)\n        return out\n")
    hits = findings(source, "torch_compute")
    assert [h.line for h in hits] == [line_of(source, "cublas.sgemm(")]
    assert "cupy_backends.cuda.libs.cublas.sgemm" in hits[0].message
    plan = splice(CUDA_CORE, "        self.dev = dev\n",
                  "        self.dev = dev\n        self.mm = nvmath.linalg.advanced.Matmul(1, 2)\n")
    plan = "import nvmath\n" + plan
    hits = findings(plan, "torch_compute")
    assert [h.line for h in hits] == [line_of(plan, "Matmul(")]  # built in __init__, runs in forward
    fused = splice(CUPY, "_sum = ", "@cp.fuse()\ndef f(x):\n    return x * 2\n\n_sum = ")
    assert [h.line for h in findings(fused, "torch_compute")] == [line_of(fused, "@cp.fuse()")]


def test_allowed_cupy_calls_are_not_flagged():
    extra = ("        a = cp.empty((n,), dtype=cp.float32)\n        b = cp.zeros_like(a)\n"
             "        c2 = cp.asarray(x).reshape(-1, 1).transpose()\n        d = cp.ascontiguousarray(c2.T)\n"
             "        e = cp.from_dlpack(out).astype(cp.float16).view(cp.int16)\n"
             "        f = cp.arange(n) if n > 0 else cp.ones(n)\n        g = torch.from_dlpack(e.toDlpack())\n"
             "        cp.cuda.Device().synchronize()\n        sz = a.size * 2 + a.shape[0]\n"
             "        return out\n")
    source = splice(CUPY, "        return out\n", extra)
    assert codes(source) == []


def test_device_code_is_never_torch_compute():
    # numba and CuTe bodies are kernels: their arithmetic on parameters used like tensors is not PyTorch compute
    assert findings(NUMBA, "torch_compute") == [] and findings(CUTE, "torch_compute") == []
    # Helion's device loops use torch ops on tiles; they become the Triton kernel
    assert findings(HELION, "torch_compute") == []


def test_library_fallback_is_a_fallback():
    source = splice(NUMBA, "        out = torch.empty_like(x)\n",
                    "        if not x.is_cuda:\n            return torch.nn.functional.gelu(x)\n"
                    "        out = torch.empty_like(x)\n")
    hits = findings(source, "fallback")
    assert [h.line for h in hits] == [line_of(source, "return torch.nn.functional.gelu(x)")]


def test_kernel_not_called_when_forward_never_launches():
    source = splice(CUPY, "            _kernel(((n + 255) // 256,), (256,), (x_cp, y_cp, cp.float32(self.scale), "
                    "cp.int32(n)))\n", "            pass\n")
    assert "kernel_not_called" in codes(source, blocking=False)


# ------------------------------------------------------------------------------------------ side streams
@pytest.mark.parametrize("backend,old,new,marker", [
    ("cupy", "        stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)\n",
     "        stream = cp.cuda.Stream(non_blocking=True)\n", "cp.cuda.Stream("),
    ("cupy", "        stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)\n",
     "        stream = cp.cuda.Stream()\n", "cp.cuda.Stream("),
    ("cupy", "        stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)\n",
     "        stream = cp.cuda.ExternalStream(self.side_ptr)\n", "ExternalStream("),
    ("cuda_core", "        stream = self.dev.create_stream(torch.cuda.current_stream())\n",
     "        stream = self.dev.create_stream()\n", "create_stream("),
    ("numba", "        stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)\n",
     "        stream = cuda.stream()\n", "cuda.stream()"),
])
def test_unjoined_side_streams_are_flagged(backend, old, new, marker):
    source = splice(HONEST[backend], old, new)
    hits = findings(source, "unsynced_stream")
    assert [h.line for h in hits] == [line_of(source, marker)] and hits[0].blocking
    assert "unsynced_stream" in codes(source, "lenient")


@pytest.mark.parametrize("backend,old,new", [
    ("cupy", "        stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)\n",
     "        stream = cp.cuda.Stream(non_blocking=True)\n"),
    ("cuda_core", "        stream = self.dev.create_stream(torch.cuda.current_stream())\n",
     "        stream = self.dev.create_stream()\n"),
    ("numba", "        stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)\n",
     "        stream = cuda.stream()\n"),
])
def test_joined_side_streams_pass(backend, old, new):
    source = splice(HONEST[backend], old, new)
    joins = {"cupy": "        stream.synchronize()\n", "cuda_core": "        stream.sync()\n",
             "numba": "        stream.synchronize()\n"}
    ret = "        return c\n" if backend == "cuda_core" else "        return out\n"
    assert findings(splice(source, ret, joins[backend] + ret), "unsynced_stream") == []
    if backend == "cupy":  # an event recorded on the side stream, waited on by the caller's stream
        caller = "cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)"
        evented = splice(source, ret, f"        ev = cp.cuda.Event()\n        ev.record(stream)\n"
                         f"        {caller}.wait_event(ev)\n" + ret)
        assert findings(evented, "unsynced_stream") == []


def test_streams_stored_on_self_or_module_are_followed():
    stored = splice(CUPY, "        self.scale = scale\n",
                    "        self.scale = scale\n        self.side = cp.cuda.Stream(non_blocking=True)\n")
    stored = splice(stored, "        with stream:\n", "        with self.side:\n")
    assert [h.line for h in findings(stored, "unsynced_stream")] == [line_of(stored, "with self.side:")]
    module = splice(NUMBA, "class ModelNew", "SIDE = cuda.stream()\n\n\nclass ModelNew")
    module = splice(module, "256, stream](", "256, SIDE](")
    assert [h.line for h in findings(module, "unsynced_stream")] == [line_of(module, "256, SIDE](")]
    # a handle bound to a name first still counts as torch's current stream
    named = splice(NUMBA, "        stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)\n",
                   "        ptr = torch.cuda.current_stream().cuda_stream\n"
                   "        stream = cuda.external_stream(ptr)\n")
    assert findings(named, "unsynced_stream") == []
    wrapped = splice(NUMBA, "        stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)\n",
                     "        mine = torch.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)\n"
                     "        stream = cuda.external_stream(mine.cuda_stream)\n")
    assert findings(wrapped, "unsynced_stream") == []
    foreign = splice(wrapped, "torch.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)",
                     "torch.cuda.ExternalStream(torch.cuda.Stream().cuda_stream)")
    assert [h.line for h in findings(foreign, "unsynced_stream")] == [line_of(foreign, "mine = ")]


# ---------------------------------------------------------------------------- hacks through the libraries
@pytest.mark.parametrize("line,code", [
    ("cp.cuda.Event.elapsed_time = lambda self, other: 0.0", "timer_patch"),
    ("cp.cuda.get_elapsed_time = lambda a, b: 0.0", "timer_patch"),
    ("cp.cuda.runtime.eventElapsedTime = lambda a, b: 0.0", "timer_patch"),
    ("cp.cuda.Stream.synchronize = lambda self: None", "timer_patch"),
    ("cp.matmul = lambda a, b: a", "torch_internals_patch"),
    ("mod = cp.RawModule(path='/tmp/gemm.cubin')", "dynamic_code"),
])
def test_library_hacks_are_flagged(line, code):
    source = splice(CUPY, "\n\nclass ModelNew", f"\n{line}\n\nclass ModelNew")
    assert code in codes(source, "lenient")


def test_library_normal_use_is_not_a_hack():
    cc = splice(CUDA_CORE, "        self.dev = dev\n", "        self.dev = dev\n        dev.sync()\n")
    assert codes(cc, "lenient") == []
    quiet = splice(NUMBA, "from numba import cuda\n", "import numba\nfrom numba import cuda\n"
                   "numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0\n")
    assert codes(quiet, "lenient") == []
    binary = splice(CUDA_CORE, "from cuda.core import", "from cuda.core import ObjectCode,")
    binary = splice(binary, "        module = prog.compile(", "        module = ObjectCode.from_cubin(BLOB)\n"
                    "        module = prog.compile(")
    assert [f.line for f in analyze(binary, "lenient") if f.code == "dynamic_code"] == [
        line_of(binary, "ObjectCode.from_cubin")]
    looked_up = splice(CUPY, "import cupy as cp\n", "import sys\nimport cupy as cp\nmod = sys.modules.get('cupy')\n")
    assert codes(looked_up, "lenient") == []


# ------------------------------------------------------------------------------------------------ TileLang
FIXTURE_SOLUTIONS = Path(__file__).parent / "fixtures" / "solutions"
TL_CALL = "        self.kernels[key](x, out)\n"


@pytest.mark.parametrize("name,strict,lenient", [
    ("gpu_tilelang_correct_scale_relu.py", [], []),
    ("gpu_tilelang_wrong_scale_relu.py", [], []),                          # wrong numbers are the GPU's to find
    ("gpu_tilelang_hack_decoy_torch.py", ["torch_compute"], []),           # C3: refused under strict only
    ("gpu_tilelang_hack_side_stream.py", ["unsynced_stream"], ["unsynced_stream"]),   # A1: refused under both
])
def test_tilelang_fixtures_static_findings(name, strict, lenient):
    source = (FIXTURE_SOLUTIONS / name).read_text()
    assert detect_backend(source) == "tilelang"
    assert sorted(set(codes(source, "strict"))) == strict
    assert sorted(set(codes(source, "lenient"))) == lenient
    assert "kernel_not_called" not in codes(source, "strict", blocking=False)


def test_honest_tilelang_eager_style_passes():
    for policy in ("strict", "lenient"):
        assert codes(TILELANG_EAGER, policy, blocking=False) == []


@pytest.mark.parametrize("new,expected", [
    ("        z = torch.softmax(x, dim=-1)\n", "torch.softmax"),
    ("        out = out + x\n", "applies `+` to tensors"),
    ("        z = x.sum()\n", "the tensor method .sum()"),
])
def test_torch_compute_next_to_a_tilelang_kernel(new, expected):
    source = splice(TILELANG, TL_CALL, TL_CALL + new)
    hits = findings(source, "torch_compute")
    assert [h.line for h in hits] == [line_of(source, new.strip())] and hits[0].blocking
    assert expected in hits[0].message
    assert [f.blocking for f in analyze(source, "lenient") if f.code == "torch_compute"] == [False]


def test_torch_fallback_around_a_tilelang_kernel():
    source = splice(TILELANG, TL_CALL, "        try:\n    " + TL_CALL + "        except Exception:\n"
                    "            out = torch.relu(x * 2.0) + x * x\n")
    hits = findings(source, "fallback")
    assert hits and {h.line for h in hits} == {line_of(source, "out = torch.relu(x * 2.0)")}


@pytest.mark.parametrize("imports,call,name", [
    ("import tvm\n", "tvm.topi.nn.relu(x)", "tvm.topi.nn.relu"),
    ("from tilelang import tvm\n", "tvm.relax.op.matmul(x, x)", "tilelang.tvm.relax.op.matmul"),
    ("from tvm.contrib import cublas\n", "cublas.matmul(x, x)", "tvm.contrib.cublas.matmul"),
])
def test_tvm_operators_are_library_compute(imports, call, name):
    source = splice(TILELANG, "import tilelang\n", "import tilelang\n" + imports)
    source = splice(source, TL_CALL, TL_CALL + f"        z = {call}\n")
    hits = findings(source, "torch_compute")
    assert hits and {h.line for h in hits} == {line_of(source, call)} and all(h.blocking for h in hits)
    assert any(name in h.message and "TVM library compute" in h.message for h in hits)   # the call in forward
    assert any(f"uses {name}" in h.message for h in hits)                                 # and wherever it is named
    assert not any(f.blocking for f in analyze(source, "lenient") if f.code == "torch_compute")


def test_tilelang_kernels_are_launched_however_they_are_held():
    # built and called at once, built at module level, compiled from a prim_func, or through .compile(**sizes)
    forms = [
        splice(TILELANG, TL_CALL, "        scale_relu(x.shape[0], x.shape[1])(x, out)\n"),
        splice(splice(TILELANG, "class ModelNew", "KERNEL = scale_relu(64, 256)\n\n\nclass ModelNew"),
               TL_CALL, "        KERNEL(x, out)\n"),
        splice(TILELANG, TL_CALL, "        k = scale_relu.compile(rows=x.shape[0], cols=x.shape[1])\n"
               "        k(x, out)\n"),
        "import tilelang\nimport tilelang.language as T\nimport torch\nimport torch.nn as nn\n\n\n"
        "@T.prim_func\ndef main(X: T.Tensor((64,), 'float32'), Y: T.Tensor((64,), 'float32')):\n"
        "    with T.Kernel(1, threads=64) as bx:\n        for i in T.Parallel(64):\n            Y[i] = X[i] * 2.0\n\n\n"
        "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.kernel = tilelang.compile(main, target='cuda')\n\n"
        "    def forward(self, x):\n        y = torch.empty_like(x)\n        self.kernel(x, y)\n        return y\n",
    ]
    for source in forms:
        assert detect_backend(source) == "tilelang"
        assert codes(source, "strict", blocking=False) == [], source


def test_a_tilelang_kernel_built_but_never_called_is_not_called():
    # the factory compiles; only calling what it returns runs the kernel
    source = splice(TILELANG, TL_CALL, "        pass\n")
    assert "kernel_not_called" in codes(source, blocking=False)


def test_tilelang_side_streams():
    side = splice(TILELANG, TL_CALL,
                  "        s = torch.cuda.Stream()\n        with torch.cuda.stream(s):\n    " + TL_CALL)
    hits = findings(side, "unsynced_stream")
    assert [h.line for h in hits] == [line_of(side, "torch.cuda.Stream()")] and hits[0].blocking
    assert "unsynced_stream" in codes(side, "lenient")
    joined = splice(side, "        return out\n", "        torch.cuda.current_stream().wait_stream(s)\n"
                    "        return out\n")
    assert findings(joined, "unsynced_stream") == []
    # TVM-FFI's own stream context (the stream TileLang's kernels launch on): the caller's stream is fine
    raw = "import tvm_ffi\n" + splice(TILELANG, TL_CALL, "        dev = tvm_ffi.device('cuda:0')\n"
                                      "        with tvm_ffi.use_raw_stream(dev, HANDLE):\n    " + TL_CALL)
    own = raw.replace("HANDLE", "torch.cuda.current_stream().cuda_stream")
    assert findings(own, "unsynced_stream") == []
    other = raw.replace("HANDLE", "self.side_handle")
    assert [h.line for h in findings(other, "unsynced_stream")] == [line_of(other, "use_raw_stream(")]
    keyword = raw.replace("HANDLE", "stream=self.side_handle")
    assert [h.line for h in findings(keyword, "unsynced_stream")] == [line_of(keyword, "use_raw_stream(")]
