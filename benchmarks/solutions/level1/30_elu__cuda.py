# problem: level1/30_elu.py
# kind: elementwise activation
# why: CUDA via load_inline: grid-stride loop with 64-bit indices, y = x > 0 ? x : alpha * expm1f(x)
#      (expm1 as in PyTorch's kernel, accurate near 0; alpha passed as a float); current stream
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

__global__ void elu_kernel(const float* __restrict__ x, float* __restrict__ y, long long n, float alpha) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = x[i];
        y[i] = v <= 0.0f ? expm1f(v) * alpha : v;
    }
}

torch::Tensor elu_cuda(torch::Tensor x, double alpha) {
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
    elu_kernel<<<(unsigned int)blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), n, (float)alpha);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor elu_cuda(torch::Tensor x, double alpha);"

elu_ext = load_inline(
    name="kjbench_elu_cuda_ext",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["elu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return elu_ext.elu_cuda(x.contiguous(), float(self.alpha))
