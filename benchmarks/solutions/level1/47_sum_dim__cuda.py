# problem: level1/47_sum_dim.py
# kind: reduction
# why: CUDA via load_inline: any reduce_dim; x is viewed as (outer, reduced, inner); a 32x16 block owns
#      32 adjacent inner columns of one outer index (coalesced loads), its 16 thread rows stride down the
#      reduced axis, and the 16 partial sums are added in shared memory; fp32 accumulation, 64-bit
#      offsets, keepdim=True output; launched on the current stream
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#define TILE_I 32
#define TILE_R 16

__global__ void sum_mid_kernel(const float* __restrict__ x, float* __restrict__ y, long long n_red,
                               long long n_inner, long long inner_tiles) {
    __shared__ float part[TILE_R][TILE_I + 1];
    const long long outer = (long long)blockIdx.x / inner_tiles;
    const long long col = ((long long)blockIdx.x % inner_tiles) * TILE_I + threadIdx.x;
    float acc = 0.0f;
    if (col < n_inner) {
        const float* p = x + outer * n_red * n_inner + col;
        for (long long r = threadIdx.y; r < n_red; r += TILE_R) acc += p[r * n_inner];
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < n_inner) {
        float t = 0.0f;
        for (int k = 0; k < TILE_R; ++k) t += part[k][threadIdx.x];
        y[outer * n_inner + col] = t;
    }
}

torch::Tensor sum_dim_cuda(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    const c10::cuda::CUDAGuard guard(x.device());
    auto xc = x.contiguous();
    const int64_t nd = xc.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "reduce_dim out of range");
    long long n_outer = 1, n_inner = 1;
    for (int64_t d = 0; d < dim; ++d) n_outer *= xc.size(d);
    for (int64_t d = dim + 1; d < nd; ++d) n_inner *= xc.size(d);
    const long long n_red = xc.size(dim);
    std::vector<int64_t> out_sizes = xc.sizes().vec();
    out_sizes[dim] = 1;
    auto y = torch::empty(out_sizes, xc.options());
    if (n_outer == 0 || n_inner == 0) return y;
    const long long inner_tiles = (n_inner + TILE_I - 1) / TILE_I;
    const long long blocks = n_outer * inner_tiles;
    TORCH_CHECK(blocks <= 2147483647LL, "tensor too large");
    sum_mid_kernel<<<(unsigned int)blocks, dim3(TILE_I, TILE_R), 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), n_red, n_inner, inner_tiles);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor sum_dim_cuda(torch::Tensor x, int64_t dim);"

sum_dim_ext = load_inline(
    name="kjbench_sum_dim_cuda_ext",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["sum_dim_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, reduce_dim):
        super().__init__()
        self.reduce_dim = reduce_dim

    def forward(self, x):
        return sum_dim_ext.sum_dim_cuda(x.contiguous(), int(self.reduce_dim))
