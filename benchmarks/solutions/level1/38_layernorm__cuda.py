# problem: level1/38_layernorm.py
# kind: layernorm
# why: CUDA via load_inline: one 512-thread block per row; mean, then centred (biased) variance, each
#      reduced with warp shuffles + shared memory, then (x - mean) * rsqrt(var + eps) * weight + bias;
#      64-bit row offsets, strided column loops (any width); launched on the current stream
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
    v = buf[32];
    __syncthreads();  // buf is reused by the next reduction
    return v;
}

__global__ void layernorm_rows_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                      const float* __restrict__ b, float* __restrict__ y, long long cols, float eps) {
    __shared__ float buf[33];
    const float* xr = x + (long long)blockIdx.x * cols;
    float* yr = y + (long long)blockIdx.x * cols;
    float s = 0.0f;
    for (long long c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
    const float mean = block_reduce_sum(s, buf) / (float)cols;
    float q = 0.0f;
    for (long long c = threadIdx.x; c < cols; c += blockDim.x) {
        const float d = xr[c] - mean;
        q += d * d;
    }
    const float rstd = rsqrtf(block_reduce_sum(q, buf) / (float)cols + eps);
    for (long long c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = (xr[c] - mean) * rstd * w[c] + b[c];
}

torch::Tensor layernorm_rows_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    for (const auto& t : {x, weight, bias})
        TORCH_CHECK(t.is_cuda() && t.scalar_type() == torch::kFloat32, "tensors must be float32 CUDA tensors");
    TORCH_CHECK(x.dim() >= 1, "x must have a last dimension");
    const c10::cuda::CUDAGuard guard(x.device());
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    auto bc = bias.contiguous();
    const long long cols = xc.size(-1);
    TORCH_CHECK(wc.numel() == cols && bc.numel() == cols, "weight and bias must match the last dimension");
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    const long long rows = xc.numel() / cols;
    TORCH_CHECK(rows <= 2147483647LL, "too many rows");
    layernorm_rows_kernel<<<(unsigned int)rows, 512, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(), cols, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor layernorm_rows_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);"

layernorm_ext = load_inline(name="kjbench_layernorm_cuda_ext", cpp_sources=cpp_source, cuda_sources=cuda_source,
                            functions=["layernorm_rows_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.eps = 1e-5
        self.weight = nn.Parameter(torch.ones(hidden))
        self.bias = nn.Parameter(torch.zeros(hidden))

    def forward(self, x):
        return layernorm_ext.layernorm_rows_cuda(x.contiguous(), self.weight, self.bias, self.eps)
