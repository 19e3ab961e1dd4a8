import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_DECLS = "torch::Tensor rms_norm(torch::Tensor x, torch::Tensor weight, double eps);"

CUDA_SOURCE = r"""
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

constexpr int kThreads = 256;

// One block per row. Each thread sums the squares of a strided slice of the row, the block combines the
// partial sums (warp shuffles, then one value per warp through shared memory), and every thread scales
// its slice.
__global__ void rms_norm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                float* __restrict__ out, int64_t cols, float eps) {
  __shared__ float warp_sums[kThreads / 32];
  const float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
  float* out_row = out + static_cast<int64_t>(blockIdx.x) * cols;
  float sum_sq = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    const float v = row[c];
    sum_sq += v * v;
  }
  for (int offset = 16; offset > 0; offset >>= 1) sum_sq += __shfl_down_sync(0xffffffffu, sum_sq, offset);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = sum_sq;
  __syncthreads();
  if (threadIdx.x < 32) {
    float total = threadIdx.x < kThreads / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) total += __shfl_down_sync(0xffffffffu, total, offset);
    if (threadIdx.x == 0) warp_sums[0] = total;
  }
  __syncthreads();
  const float scale = rsqrtf(warp_sums[0] / static_cast<float>(cols) + eps);
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) out_row[c] = row[c] * scale * w[c];
}

torch::Tensor rms_norm(torch::Tensor x, torch::Tensor weight, double eps) {
  TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "inputs must be CUDA tensors");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32,
              "inputs must be float32");
  const int64_t cols = x.size(-1);
  TORCH_CHECK(weight.numel() == cols, "weight must have x.size(-1) elements");
  const c10::cuda::CUDAGuard guard(x.device());
  auto xc = x.contiguous();
  auto wc = weight.contiguous();
  auto out = torch::empty_like(xc);
  const int64_t rows = cols == 0 ? 0 : xc.numel() / cols;
  if (rows == 0) return out;
  TORCH_CHECK(rows < (int64_t{1} << 31), "too many rows for one grid");
  rms_norm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), wc.data_ptr<float>(), out.data_ptr<float>(), cols, static_cast<float>(eps));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
"""

_ext = load_inline(
    name="kj_shot_rms_norm_cuda",
    cpp_sources=CPP_DECLS,
    cuda_sources=CUDA_SOURCE,
    functions=["rms_norm"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, features, eps):
        super().__init__()
        # same name and shape as Model's parameter, so it receives the reference's values
        self.weight = nn.Parameter(torch.randn(features))
        self.eps = eps

    def forward(self, x):
        return _ext.rms_norm(x, self.weight, self.eps)
