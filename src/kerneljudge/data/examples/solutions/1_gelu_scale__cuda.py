# expect: correct
# needs: cuda
# problem: 1_gelu_scale.py
# why: grid-stride CUDA kernel, erff GELU times the per-column scale
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_DECLS = r"""
torch::Tensor gelu_scale_cuda(torch::Tensor x, torch::Tensor scale);
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

__global__ void gelu_scale_kernel(const float* __restrict__ x, const float* __restrict__ scale,
                                  float* __restrict__ out, int64_t n, int64_t cols) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = x[i];
    out[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)) * scale[i % cols];
  }
}

int grid_stride_blocks(int64_t n) {
  int64_t blocks = (n + 255) / 256;
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  return static_cast<int>(blocks < 1 ? 1 : blocks);
}

}  // namespace

torch::Tensor gelu_scale_cuda(torch::Tensor x, torch::Tensor scale) {
  check_cuda_f32(x, "x");
  check_cuda_f32(scale, "scale");
  TORCH_CHECK(x.dim() == 2 && scale.numel() == x.size(1), "shape mismatch");
  const c10::cuda::CUDAGuard guard(x.device());
  auto xc = x.contiguous();
  auto sc = scale.contiguous();
  auto out = torch::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return out;
  gelu_scale_kernel<<<grid_stride_blocks(n), 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), sc.data_ptr<float>(), out.data_ptr<float>(), n, xc.size(1));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
"""

_ops = load_inline(
    name="kj_example_gelu_scale_cuda",
    cpp_sources=CUDA_DECLS,
    cuda_sources=CUDA_SRC,
    functions=["gelu_scale_cuda"],
    extra_cflags=["-O2"],
    extra_cuda_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return _ops.gelu_scale_cuda(x, self.scale)
