# problem: level1/39_rmsnorm.py
# kind: rmsnorm
# why: CUDA via load_inline: one 512-thread block per row; sum of squares reduced with warp shuffles +
#      shared memory, inv = rsqrt(sum / n + eps), y = weight * (x * inv) in the reference's order; 64-bit
#      row offsets, strided column loops (any width); launched on the current stream
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float warp_reduce_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// sum over the block (blockDim.x a multiple of 32); every thread gets the total; buf holds 33 floats
__device__ float block_reduce_sum(float v, float* buf) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_reduce_sum(v);
    if (lane == 0) buf[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? buf[lane] : 0.0f;
        v = warp_reduce_sum(v);
        if (lane == 0) buf[32] = v;
    }
    __syncthreads();
    return buf[32];
}

__global__ void rmsnorm_rows_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                    float* __restrict__ y, long long cols, float eps) {
    __shared__ float buf[33];
    const float* xr = x + (long long)blockIdx.x * cols;
    float* yr = y + (long long)blockIdx.x * cols;
    float ss = 0.0f;
    for (long long c = threadIdx.x; c < cols; c += blockDim.x) {
        const float v = xr[c];
        ss += v * v;
    }
    const float inv = rsqrtf(block_reduce_sum(ss, buf) / (float)cols + eps);
    for (long long c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = w[c] * (xr[c] * inv);
}

torch::Tensor rmsnorm_rows_cuda(torch::Tensor x, torch::Tensor weight, double eps) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "tensors must be CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32,
                "tensors must be float32");
    TORCH_CHECK(x.dim() >= 1, "x must have a last dimension");
    const c10::cuda::CUDAGuard guard(x.device());
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const long long cols = xc.size(-1);
    TORCH_CHECK(wc.numel() == cols, "weight must match the last dimension");
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    const long long rows = xc.numel() / cols;
    TORCH_CHECK(rows <= 2147483647LL, "too many rows");
    rmsnorm_rows_kernel<<<(unsigned int)rows, 512, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), wc.data_ptr<float>(), y.data_ptr<float>(), cols, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor rmsnorm_rows_cuda(torch::Tensor x, torch::Tensor weight, double eps);"

rmsnorm_ext = load_inline(
    name="kjbench_rmsnorm_cuda_ext",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["rmsnorm_rows_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.eps = 1e-6
        self.weight = nn.Parameter(torch.ones(hidden))

    def forward(self, x):
        return rmsnorm_ext.rmsnorm_rows_cuda(x.contiguous(), self.weight, self.eps)
