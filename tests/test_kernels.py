"""Threat C3 (decoy kernels): which kernels in a profile are the solution's own, which are library compute,
which only allocate or copy; and the rules that make strict reject. Pure functions plus one real CPU profile."""

from __future__ import annotations

from collections import namedtuple

import pytest

from kerneljudge.analysis import kernels as K
from kerneljudge.worker import profiling

CUDA_SOLUTION = '''
import torch
from torch.utils.cpp_extension import load_inline
import triton
import triton.language as tl

SRC = r"""
#include <c10/cuda/CUDAStream.h>
template <typename T, int TILE>
__global__ void __launch_bounds__(256) tiled_kernel(const T* x, T* y, int n) { }
__global__ void plain_kernel(float* y) { }
namespace fused { __global__ void inner_kernel(float* y) { } }
static __global__ void helper_kernel(float* y) { }
torch::Tensor run(torch::Tensor x) { plain_kernel<<<1, 1>>>(x.data_ptr<float>()); return x; }
"""
ext = load_inline(name="e", cpp_sources="torch::Tensor run(torch::Tensor x);", cuda_sources=SRC,
                  functions=["run"])

@triton.jit
def _softmax_kernel(x_ptr, n):
    pass

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return ext.run(x)
'''


def test_custom_kernel_names_from_cuda_triton_and_exports():
    names = K.custom_kernel_names(CUDA_SOLUTION)
    assert {"tiled_kernel", "plain_kernel", "inner_kernel", "helper_kernel", "run", "_softmax_kernel"} <= names
    assert "__launch_bounds__" not in names and "template" not in names
    assert K.custom_kernel_names("def broken(:") == frozenset()
    assert K.custom_kernel_names("import torch\nclass ModelNew: pass\n") == frozenset()


def test_header_libraries():
    assert K.header_libraries('#include <cub/cub.cuh>\n cub::DeviceReduce::Sum(...)') == {"cub"}
    assert K.header_libraries("uses cublasSgemm and cublasLt") == frozenset()  # "cub" inside "cublas" is not CUB
    assert K.header_libraries("#include <cutlass/gemm/device/gemm.h>") == {"cutlass"}


@pytest.mark.parametrize("demangled,base", [
    ("void tiled_kernel<float, 32>(float const*, float*, int)", "tiled_kernel"),
    ("fused::inner_kernel(float*)", "inner_kernel"),
    ("_softmax_kernel", "_softmax_kernel"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
     "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
     "vectorized_elementwise_kernel"),
    ("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT"),
])
def test_base_name(demangled, base):
    assert K.base_name(demangled) == base


CUSTOM = frozenset({"tiled_kernel", "plain_kernel", "_softmax_kernel"})


@pytest.mark.parametrize("name,chain,expected", [
    # the solution's own kernels, launched outside any torch op
    ("void tiled_kernel<float, 32>(float const*, float*, int)", [], "custom"),
    ("_softmax_kernel", [], "custom"),
    ("_softmax_kernel_0d1d2de", [], "custom"),              # older Triton's signature suffix
    # anything launched inside a torch compute op is library compute, whatever its name
    ("plain_kernel(float*)", ["aten::mm"], "library_compute"),
    ("some_new_cublas_name_we_never_saw", ["aten::linear", "aten::addmm"], "library_compute"),
    ("void at::native::elementwise_kernel<128, 2, direct_copy_kernel_cuda>(...)", ["aten::matmul", "aten::contiguous",
                                                                                  "aten::clone", "aten::copy_"],
     "library_compute"),
    # allocation and copies
    ("void at::native::elementwise_kernel<128, 2, direct_copy_kernel_cuda>(...)", ["aten::contiguous", "aten::clone",
                                                                                  "aten::copy_"], "allowed"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, ...>(...)", [], "allowed"),
    ("Memcpy DtoD (Device -> Device)", [], "allowed"),
    ("Memset (Device)", [], "allowed"),
    ("void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 64, 64>(...)", [], "allowed"),
    # torch's own compute kernels and vendor libraries, even when called straight from C++
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, ...>(...)", [],
     "library_compute"),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<...>>>(...)", [],
     "library_compute"),
    ("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", [], "library_compute"),
    ("sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
     [], "library_compute"),
    ("ampere_sgemm_128x64_nn", [], "library_compute"),
    ("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(...)", [], "library_compute"),
    ("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>(...)", [],
     "library_compute"),
    ("triton_poi_fused_add_mul_relu_0", [], "library_compute"),
    ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(...)", [], "library_compute"),
    # a solution naming its kernel like a torch one does not make at::native kernels its own
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, ...>(...)", [],
     "library_compute"),
    # unknown: never counted as library compute
    ("my_macro_generated_kernel(float*)", [], "other"),
    ("void cub::DeviceReduceKernel<...>(...)", [], "other"),
])
def test_kernel_class(name, chain, expected):
    custom = CUSTOM | {"vectorized_elementwise_kernel"} if "CUDAFunctor_add" in name else CUSTOM
    assert K.kernel_class(name, chain, custom) == expected


def test_header_library_kernels_are_the_solutions_own_when_it_uses_the_library():
    name = "void cub::DeviceReduceKernel<cub::DeviceReducePolicy<float>::Policy600, float*>(...)"
    assert K.kernel_class(name, [], CUSTOM) == "other"
    assert K.kernel_class(name, [], CUSTOM, frozenset({"cub"})) == "custom"
    torch_cub = "void at_cuda_detail::cub::DeviceRadixSortOnesweepKernel<...>(...)"
    assert K.kernel_class(torch_cub, [], CUSTOM, frozenset({"cub"})) == "library_compute"


@pytest.mark.parametrize("name,chain,expected", [
    ("aten::mm", [], "library_compute"),
    ("aten::add.Tensor", [], "library_compute"),
    ("aten::empty_like", [], "allowed"),
    ("aten::empty_strided", ["aten::empty_like"], "allowed"),
    ("aten::copy_", ["aten::contiguous", "aten::clone"], "allowed"),
    ("aten::copy_", ["aten::mul", "aten::to", "aten::_to_copy"], "library_compute"),  # part of a compute op
    ("aten::nonzero", ["aten::index"], "allowed"),                                    # inside an allowed op
    ("aten::mm", ["myops::fused_linear"], "library_compute"),                       # inside the solution's own op
    ("myops::fused_linear", [], "custom"),
    ("my record_function label", [], "custom"),
    ("Torch-Compiled Region: 0/0", [], "library_compute"),
])
def test_cpu_op_class(name, chain, expected):
    assert K.cpu_op_class(name, chain) == expected


def _gpu(rows, **extra):
    return {"device": "cuda", "wall_us": 100.0, "op_us": 0.0,
            "rows": [{"name": n, "chain": c, "us": us, "calls": 1, "kind": "kernel"} for n, c, us in rows], **extra}


def test_gpu_decoy_with_cublas_is_rejected_and_named():
    summary = K.classify(_gpu([("plain_kernel(float*)", [], 2.0),
                               ("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", ["aten::mm"], 40.0),
                               ("Memset (Device)", [], 1.0)]), CUSTOM)
    why = K.decide(summary)
    assert why and "library compute carries 93%" in why and "nvjet_tst_128x256" in why
    rows = summary.to_rows()
    assert rows[0]["class"] == "library_compute" and rows[-1]["class"] == "total"
    assert rows[-1]["library_compute_share"] == pytest.approx(40 / 43, abs=1e-3)


def test_honest_gpu_profile_with_heavy_copies_is_not_rejected():
    # a transpose copied with .contiguous() can cost more than the kernel: allocation and copies never count
    summary = K.classify(_gpu([("tiled_kernel<float, 32>(float const*, float*, int)", [], 10.0),
                               ("void at::native::elementwise_kernel<128, 2, direct_copy_kernel_cuda>(...)",
                                ["aten::contiguous", "aten::clone", "aten::copy_"], 30.0),
                               ("Memcpy DtoD (Device -> Device)", [], 5.0)]), CUSTOM)
    assert K.decide(summary, ref_ms=0.02) is None
    assert summary.share("custom") == pytest.approx(10 / 45)


def test_unknown_kernels_need_known_custom_names_before_they_count():
    rows = [("plain_kernel(float*)", [], 1.0), ("my_macro_generated_kernel(float*)", [], 20.0)]
    assert K.decide(K.classify(_gpu(rows), frozenset())) is None                # names unknown: no accusation
    why = K.decide(K.classify(_gpu(rows), CUSTOM))
    assert why and "own kernels carry only 5%" in why


def test_a_slow_decoy_cannot_dilute_the_library_share():
    # 5% of the device time, but as long as the reference itself takes: the library did the work
    rows = [("plain_kernel(float*)", [], 950.0), ("ampere_sgemm_128x64_nn", ["aten::mm"], 50.0)]
    summary = K.classify(_gpu(rows), CUSTOM)
    assert K.decide(summary) is None
    why = K.decide(summary, ref_ms=0.06)
    assert why and "of the PyTorch reference's whole time" in why
    assert K.decide(summary, ref_ms=1.0) is None


def test_library_work_is_compared_with_the_reference_profiled_the_same_way():
    rows = [("plain_kernel(float*)", [], 950.0), ("ampere_sgemm_128x64_nn", ["aten::mm"], 50.0)]
    summary = K.classify(_gpu(rows), CUSTOM)
    summary.reference_library_us, summary.reference_library_calls = 60.0, 1
    why = K.decide(summary, ref_ms=10.0)      # the profiled reference wins over its median time
    assert why and "83% of what the PyTorch reference's own library compute takes" in why
    # tiny ops make times noisy; the number of library calls is steady
    summary.reference_library_us, summary.reference_library_calls = 500.0, 2
    why = K.decide(summary)
    assert why and "ran 1 library compute kernels in one call, where the PyTorch reference runs 2" in why
    summary.reference_library_calls = 3
    assert K.decide(summary) is None
    honest = K.classify(_gpu([("plain_kernel(float*)", [], 10.0)]), CUSTOM)
    honest.reference_library_us, honest.reference_library_calls = 10.0, 1
    assert K.decide(honest, ref_ms=0.001) is None


def test_cpu_library_calls_count_outermost_ops_only():
    profile = {"device": "cpu", "wall_us": 100.0, "rows": [
        {"name": "aten::mul", "chain": [], "us": 5.0, "calls": 2},
        {"name": "aten::to", "chain": ["aten::mul"], "us": 1.0, "calls": 1},
        {"name": "aten::mm", "chain": ["myops::linear"], "us": 1.0, "calls": 1},
        {"name": "aten::empty", "chain": [], "us": 1.0, "calls": 3}]}
    assert K.classify(profile).library_calls == 3
    runs = [K.classify({**profile, "rows": profile["rows"][:k]}) for k in (1, 2, 4)]
    assert K.median_run(runs) is runs[1]


def test_cpu_profile_remainder_is_the_solutions_code():
    profile = {"device": "cpu", "wall_us": 200.0, "op_us": 60.0, "rows": [
        {"name": "aten::mul", "chain": [], "us": 30.0, "calls": 1},
        {"name": "aten::empty_like", "chain": [], "us": 20.0, "calls": 1},
        {"name": "aten::empty_strided", "chain": ["aten::empty_like"], "us": 10.0, "calls": 1}]}
    summary = K.classify(profile, CUSTOM)
    assert summary.by_class["custom"] == pytest.approx(140.0)
    assert summary.by_class["library_compute"] == 30.0 and summary.by_class["allowed"] == 30.0
    assert "15%" in K.decide(summary)


def test_rows_the_child_left_out_are_never_counted_against_it():
    profile = {"device": "cpu", "wall_us": 100.0, "op_us": 95.0, "left_out_us": 95.0, "rows_left_out": 500,
               "rows": []}
    summary = K.classify(profile, CUSTOM)
    assert summary.by_class["other"] == 95.0 and K.decide(summary, ref_ms=0.001) is None
    assert summary.to_rows()[-1]["rows_left_out"] == 500


@pytest.mark.parametrize("bad", [
    None, [], {"device": "tpu", "rows": []}, {"device": "cpu"}, {"device": "cpu", "rows": [{"name": 3}]},
    {"device": "cpu", "rows": [{"name": "aten::mm", "us": float("nan")}]},
    {"device": "cpu", "rows": [{"name": "aten::mm", "us": -5}]},
    {"device": "cpu", "rows": [{"name": "aten::mm", "us": 1, "chain": "aten::mm"}]},
    {"device": "cpu", "rows": [], "wall_us": "fast"},
])
def test_malformed_profiles_are_refused(bad):
    with pytest.raises(K.ProfileError):
        K.classify(bad, CUSTOM)


def test_verdict_rows_are_bounded():
    rows = [(f"kernel_{i}(float*)", [], float(i + 1)) for i in range(50)]
    out = K.classify(_gpu(rows), CUSTOM).to_rows()
    assert len(out) == K.TOP_ROWS + 1 and out[-1]["rows_left_out"] == 50 - K.TOP_ROWS
    long = K.classify(_gpu([("x" * 5000, [], 1.0)]), CUSTOM).to_rows()
    assert len(long[0]["name"]) <= K.NAME_CHARS


# ------------------------------------------------------------------------ the child's side (profiling.py)
Kernel = namedtuple("Kernel", "name device duration")


class _Range:
    def __init__(self, us):
        self.us = us

    def elapsed_us(self):
        return self.us


class _Event:
    def __init__(self, name, device="DeviceType.CPU", parent=None, kernels=(), us=0.0, self_us=0.0):
        self.name, self.device_type, self.cpu_parent = name, device, parent
        self.kernels, self.time_range, self.self_cpu_time_total, self.is_async = (list(kernels), _Range(us),
                                                                                   self_us, False)


def test_summarize_attributes_kernels_to_the_op_that_launched_them():
    matmul = _Event("aten::matmul")
    mm = _Event("aten::mm", parent=matmul, kernels=[Kernel("nvjet_x", 0, 40.0)])
    events = [matmul, mm,
              _Event("nvjet_x", "DeviceType.CUDA", us=40.0),
              _Event("plain_kernel(float*)", "DeviceType.CUDA", us=3.0),
              _Event("Memset (Device)", "DeviceType.CUDA", us=1.0)]
    data = profiling.summarize(events, "cuda", 60.0)
    by_name = {r["name"]: r for r in data["rows"]}
    assert by_name["nvjet_x"]["chain"] == ["aten::matmul", "aten::mm"] and by_name["nvjet_x"]["us"] == 40.0
    assert by_name["plain_kernel(float*)"]["chain"] == [] and by_name["Memset (Device)"]["kind"] == "memset"
    summary = K.classify(data, CUSTOM)
    assert summary.by_class["library_compute"] == 40.0 and summary.by_class["custom"] == 3.0
    # an op's legacy timing entry (named like the op, no such device activity) is not a kernel
    legacy = profiling.summarize(events + [_Event("aten::add", kernels=[Kernel("aten::add", 0, 9.0)])], "cuda", 60.0)
    assert "aten::add" not in {r["name"] for r in legacy["rows"]}


def test_summarize_cpu_chains_and_bounds(monkeypatch):
    outer = _Event("aten::mul", self_us=10.0)
    events = [outer, _Event("aten::to", parent=outer, self_us=2.0)]
    events += [_Event(f"op{i}", self_us=0.001 * i) for i in range(profiling.MAX_ROWS + 10)]
    data = profiling.summarize(events, "cpu", 500.0)
    assert data["rows"][0] == {"name": "aten::mul", "chain": [], "us": 10.0, "calls": 1, "kind": "op"}
    assert {"name": "aten::to", "chain": ["aten::mul"], "us": 2.0, "calls": 1, "kind": "op"} in data["rows"]
    assert len(data["rows"]) == profiling.MAX_ROWS and data["rows_left_out"] == 12


def test_real_cpu_profile_sees_aten_compute_and_spares_allocation():
    import torch

    class Decoy(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x * 2.0) + x

    class Allocates(torch.nn.Module):
        def forward(self, x):
            out = torch.empty_like(x)
            out.copy_(x.contiguous())
            return out.view(-1).reshape(x.shape)

    x = torch.randn(64, 64)
    decoy = K.classify(profiling.profile_call(Decoy(), [x], "cpu"), CUSTOM)
    names = {r.name for r in decoy.rows if r.cls == "library_compute"}
    assert {"aten::mul", "aten::add"} <= names
    honest = K.classify(profiling.profile_call(Allocates(), [x], "cpu"), CUSTOM)
    assert honest.by_class["library_compute"] == 0.0 and honest.by_class["allowed"] > 0
    assert K.decide(honest, ref_ms=0.001) is None
