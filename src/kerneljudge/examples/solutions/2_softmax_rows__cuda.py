# expect: correct
# needs: cuda
# problem: 2_softmax_rows.py
# why: one 512-thread block per row, max and sum reduced with warp shuffles and shared memory (shared examples source)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Shared by every CUDA example: identical load_inline arguments, so one build serves all of them.
EXAMPLES_CUDA_DECLS = r"""
torch::Tensor gelu_scale_cuda(torch::Tensor x, torch::Tensor scale);
torch::Tensor softmax_rows_cuda(torch::Tensor x);
torch::Tensor layernorm_rows_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);
torch::Tensor matmul_bias_relu_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);
"""

EXAMPLES_CUDA_SRC = r"""
// CUDA kernels shared by the bundled CUDA example solutions. Each example passes this exact string to
// load_inline with the same name, declarations, function list and flags, so one build serves all of them.
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

__global__ void gelu_scale_kernel(const float* __restrict__ x, const float* __restrict__ scale,
                                  float* __restrict__ out, int64_t n, int64_t cols) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = x[i];
    out[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)) * scale[i % cols];
  }
}

__global__ void softmax_rows_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t cols) {
  __shared__ float scratch[32];
  const float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
  float* orow = out + static_cast<int64_t>(blockIdx.x) * cols;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
  m = block_reduce<true>(m, scratch);
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += expf(row[c] - m);
  s = block_reduce<false>(s, scratch);
  const float inv = 1.0f / s;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) orow[c] = expf(row[c] - m) * inv;
}

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

// C = relu(A @ W^T + bias), A (M, K) and W (N, K) both row-major. 64x64 output tile per block,
// 256 threads each computing a 4x4 patch; K is walked in slices of 16 staged in shared memory.
constexpr int kTileM = 64, kTileN = 64, kTileK = 16;

__global__ void matmul_bias_relu_kernel(const float* __restrict__ a, const float* __restrict__ w,
                                        const float* __restrict__ bias, float* __restrict__ c,
                                        int M, int N, int K) {
  __shared__ float as[kTileK][kTileM + 4];
  __shared__ float ws[kTileK][kTileN + 4];
  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;
  const int row0 = blockIdx.y * kTileM, col0 = blockIdx.x * kTileN;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += kTileK) {
    // 64 rows x 16 k-values per operand = 1024 values, 4 per thread
    for (int i = tid; i < kTileM * kTileK; i += 256) {
      const int r = i / kTileK, kk = i % kTileK;
      const int gr = row0 + r, gk = k0 + kk;
      as[kk][r] = (gr < M && gk < K) ? a[static_cast<int64_t>(gr) * K + gk] : 0.0f;
      const int gn = col0 + r;
      ws[kk][r] = (gn < N && gk < K) ? w[static_cast<int64_t>(gn) * K + gk] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      float av[4], wv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) av[i] = as[kk][ty * 4 + i];
#pragma unroll
      for (int j = 0; j < 4; ++j) wv[j] = ws[kk][tx * 4 + j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], wv[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    const int gr = row0 + ty * 4 + i;
    if (gr >= M) continue;
    for (int j = 0; j < 4; ++j) {
      const int gn = col0 + tx * 4 + j;
      if (gn < N) c[static_cast<int64_t>(gr) * N + gn] = fmaxf(acc[i][j] + bias[gn], 0.0f);
    }
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

torch::Tensor softmax_rows_cuda(torch::Tensor x) {
  check_cuda_f32(x, "x");
  TORCH_CHECK(x.dim() == 2, "x must be 2-D");
  const c10::cuda::CUDAGuard guard(x.device());
  auto xc = x.contiguous();
  auto out = torch::empty_like(xc);
  if (xc.numel() == 0) return out;
  softmax_rows_kernel<<<static_cast<unsigned>(xc.size(0)), kRowThreads, 0, c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), out.data_ptr<float>(), xc.size(1));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

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

torch::Tensor matmul_bias_relu_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  check_cuda_f32(x, "x");
  check_cuda_f32(weight, "weight");
  check_cuda_f32(bias, "bias");
  TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && weight.size(1) == x.size(1) && bias.numel() == weight.size(0),
              "shape mismatch");
  TORCH_CHECK(x.size(0) < (int64_t{1} << 31) && weight.size(0) < (int64_t{1} << 31) && x.size(1) < (int64_t{1} << 31),
              "sizes must fit in int32");
  const c10::cuda::CUDAGuard guard(x.device());
  auto xc = x.contiguous();
  auto wc = weight.contiguous();
  auto bc = bias.contiguous();
  const int M = static_cast<int>(xc.size(0)), K = static_cast<int>(xc.size(1)), N = static_cast<int>(wc.size(0));
  auto out = torch::empty({M, N}, xc.options());
  if (M == 0 || N == 0) return out;
  const dim3 grid((N + kTileN - 1) / kTileN, (M + kTileM - 1) / kTileM);
  matmul_bias_relu_kernel<<<grid, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(), M, N, K);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
"""

_ops = load_inline(
    name="kj_examples_cuda_ops",
    cpp_sources=EXAMPLES_CUDA_DECLS,
    cuda_sources=EXAMPLES_CUDA_SRC,
    functions=["gelu_scale_cuda", "softmax_rows_cuda", "layernorm_rows_cuda", "matmul_bias_relu_cuda"],
    extra_cflags=["-O2"],
    extra_cuda_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ops.softmax_rows_cuda(x)
