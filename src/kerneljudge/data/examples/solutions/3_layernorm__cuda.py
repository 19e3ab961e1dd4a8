# expect: correct
# needs: cuda
# problem: 3_layernorm.py
# why: one block per row, two block reductions (mean, then centred variance), fused affine
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_DECLS = r"""
torch::Tensor layernorm_rows_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);
"""

CUDA_SRC = r"""
// Only c10/cuda headers are used (not ATen/cuda/CUDAContext.h, which also pulls in cuBLAS/cuSPARSE headers).
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

namespace {

void check_cuda_f32(const torch::Tensor& t, const char* what) {
  TORCH_CHECK(t.is_cuda(), what, " must be a CUDA tensor");
  TORCH_CHECK(t.scalar_type() == torch::kFloat32, what, " must be float32");
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Reduces v over the whole block; every thread gets the result. scratch holds one float per warp.
// Only the sum (kMax = false) is used here; both branches are compiled, so warp_max stays.
template <bool kMax>
__device__ float block_reduce(float v, float* scratch) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int n_warps = (blockDim.x + 31) >> 5;
  v = kMax ? warp_max(v) : warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float t = lane < n_warps ? scratch[lane] : (kMax ? -INFINITY : 0.0f);
    t = kMax ? warp_max(t) : warp_sum(t);
    if (lane == 0) scratch[0] = t;
  }
  __syncthreads();
  const float result = scratch[0];
  __syncthreads();  // scratch may be reused right after
  return result;
}

constexpr int kRowThreads = 512;

__global__ void layernorm_rows_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                      const float* __restrict__ b, float* __restrict__ out, int64_t cols,
                                      float eps) {
  __shared__ float scratch[32];
  const float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
  float* orow = out + static_cast<int64_t>(blockIdx.x) * cols;
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += row[c];
  const float mean = block_reduce<false>(s, scratch) / static_cast<float>(cols);
  float sq = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = row[c] - mean;
    sq += d * d;
  }
  const float var = block_reduce<false>(sq, scratch) / static_cast<float>(cols);
  const float rstd = rsqrtf(var + eps);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) orow[c] = (row[c] - mean) * rstd * w[c] + b[c];
}

}  // namespace

torch::Tensor layernorm_rows_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
  check_cuda_f32(x, "x");
  check_cuda_f32(weight, "weight");
  check_cuda_f32(bias, "bias");
  TORCH_CHECK(x.dim() == 2 && weight.numel() == x.size(1) && bias.numel() == x.size(1), "shape mismatch");
  const c10::cuda::CUDAGuard guard(x.device());
  auto xc = x.contiguous();
  auto wc = weight.contiguous();
  auto bc = bias.contiguous();
  auto out = torch::empty_like(xc);
  if (xc.numel() == 0) return out;
  layernorm_rows_kernel<<<static_cast<unsigned>(xc.size(0)), kRowThreads, 0, c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(), xc.size(1),
      static_cast<float>(eps));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
"""

_ops = load_inline(
    name="kj_example_layernorm_cuda",
    cpp_sources=CUDA_DECLS,
    cuda_sources=CUDA_SRC,
    functions=["layernorm_rows_cuda"],
    extra_cflags=["-O2"],
    extra_cuda_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))
        self.bias = nn.Parameter(torch.zeros(hidden))

    def forward(self, x):
        return _ops.layernorm_rows_cuda(x, self.weight, self.bias, self.eps)
