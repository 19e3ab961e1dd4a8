# expect: wrong_output
# needs: cuda
# problem: 4_matmul_bias_relu.py
# why: the fused epilogue applies ReLU but never adds the bias (its own CUDA source)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_DECLS = r"""
torch::Tensor linear_relu_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);
"""

CUDA_SRC = r"""
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

constexpr int kTile = 16;

__global__ void linear_relu_kernel(const float* __restrict__ a, const float* __restrict__ w,
                                   const float* __restrict__ bias, float* __restrict__ c, int M, int N, int K) {
  __shared__ float as[kTile][kTile + 1];
  __shared__ float ws[kTile][kTile + 1];
  const int row = blockIdx.y * kTile + threadIdx.y;
  const int col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    const int ka = k0 + threadIdx.x;
    as[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? a[static_cast<int64_t>(row) * K + ka] : 0.0f;
    const int wn = blockIdx.x * kTile + threadIdx.y;
    ws[threadIdx.y][threadIdx.x] = (wn < N && ka < K) ? w[static_cast<int64_t>(wn) * K + ka] : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < kTile; ++kk) acc = fmaf(as[threadIdx.y][kk], ws[threadIdx.x][kk], acc);
    __syncthreads();
  }
  if (row < M && col < N) c[static_cast<int64_t>(row) * N + col] = fmaxf(acc, 0.0f);
}

torch::Tensor linear_relu_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be float32 CUDA");
  const c10::cuda::CUDAGuard guard(x.device());
  auto xc = x.contiguous();
  auto wc = weight.contiguous();
  const int M = static_cast<int>(xc.size(0)), K = static_cast<int>(xc.size(1)), N = static_cast<int>(wc.size(0));
  auto out = torch::empty({M, N}, xc.options());
  if (M == 0 || N == 0) return out;
  const dim3 block(kTile, kTile);
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  linear_relu_kernel<<<grid, block, 0, c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), wc.data_ptr<float>(), bias.data_ptr<float>(), out.data_ptr<float>(), M, N, K);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
"""

_ops = load_inline(
    name="kj_example_wrong_linear_relu",
    cpp_sources=CUDA_DECLS,
    cuda_sources=CUDA_SRC,
    functions=["linear_relu_cuda"],
    extra_cflags=["-O2"],
    extra_cuda_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))

    def forward(self, x):
        return _ops.linear_relu_cuda(x, self.weight, self.bias)
