# problem: level1/60_log_softmax_vocab.py
# kind: log-softmax
# why: CUDA via load_inline: log-softmax over the last dimension, one 1024-thread block per (vocab-long)
#      row: row max, then sum of expf(x - max), each reduced with warp shuffles + shared memory, then
#      x - max - logf(sum) as PyTorch's kernel writes it; 64-bit row offsets; launched on the current stream
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

// reduce over the block (blockDim.x a multiple of 32); every thread gets the result; buf holds 33 floats
template <bool IS_MAX>
__device__ float block_reduce(float v, float* buf) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int off = 16; off > 0; off >>= 1) {
        const float o = __shfl_xor_sync(0xffffffffu, v, off);
        v = IS_MAX ? fmaxf(v, o) : v + o;
    }
    if (lane == 0) buf[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? buf[lane] : (IS_MAX ? -INFINITY : 0.0f);
        for (int off = 16; off > 0; off >>= 1) {
            const float o = __shfl_xor_sync(0xffffffffu, v, off);
            v = IS_MAX ? fmaxf(v, o) : v + o;
        }
        if (lane == 0) buf[32] = v;
    }
    __syncthreads();
    v = buf[32];
    __syncthreads();  // buf is reused by the next reduction
    return v;
}

__global__ void log_softmax_lastdim_kernel(const float* __restrict__ x, float* __restrict__ y, long long cols) {
    __shared__ float buf[33];
    const float* xr = x + (long long)blockIdx.x * cols;
    float* yr = y + (long long)blockIdx.x * cols;
    float m = -INFINITY;
    for (long long c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    m = block_reduce<true>(m, buf);
    float s = 0.0f;
    for (long long c = threadIdx.x; c < cols; c += blockDim.x) s += expf(xr[c] - m);
    const float logsum = logf(block_reduce<false>(s, buf));
    for (long long c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = xr[c] - m - logsum;
}

torch::Tensor log_softmax_lastdim_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() >= 1, "x must have a last dimension");
    const c10::cuda::CUDAGuard guard(x.device());
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    const long long cols = xc.size(-1);
    const long long rows = xc.numel() / cols;
    TORCH_CHECK(rows <= 2147483647LL, "too many rows");
    log_softmax_lastdim_kernel<<<(unsigned int)rows, 1024, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor log_softmax_lastdim_cuda(torch::Tensor x);"

log_softmax_ext = load_inline(
    name="kjbench_log_softmax_vocab_cuda_ext",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["log_softmax_lastdim_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits):
        return log_softmax_ext.log_softmax_lastdim_cuda(logits.contiguous())
