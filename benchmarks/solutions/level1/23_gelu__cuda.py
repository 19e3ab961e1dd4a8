# problem: level1/23_gelu.py
# kind: elementwise activation
# why: CUDA via load_inline: grid-stride loop with 64-bit indices, exact (erf) GELU written as PyTorch's
#      kernel writes it, x * 0.5 * (1 + erff(x * sqrt(1/2))), full-precision erff; current stream
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

__global__ void gelu_erf_kernel(const float* __restrict__ x, float* __restrict__ y, long long n) {
    const float kAlpha = 0.70710678118654752440f;  // 1 / sqrt(2)
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = x[i];
        y[i] = v * 0.5f * (1.0f + erff(v * kAlpha));
    }
}

torch::Tensor gelu_erf_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    const c10::cuda::CUDAGuard guard(x.device());
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const long long n = xc.numel();
    if (n == 0) return y;
    const int threads = 256;
    long long blocks = (n + threads - 1) / threads;
    if (blocks > 65536) blocks = 65536;
    gelu_erf_kernel<<<(unsigned int)blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor gelu_erf_cuda(torch::Tensor x);"

gelu_ext = load_inline(
    name="kjbench_gelu_erf_cuda_ext",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["gelu_erf_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return gelu_ext.gelu_erf_cuda(x.contiguous())
