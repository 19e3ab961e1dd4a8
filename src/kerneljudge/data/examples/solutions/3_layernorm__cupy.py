# expect: correct
# needs: cuda,cupy
# problem: 3_layernorm.py
# why: CuPy RawModule (NVRTC), one block per row: two-pass mean and variance with shared-memory reductions, then the affine write; zero-copy through DLPack, launched on the caller's torch stream (cupy.cuda.ExternalStream)
import cupy
import numpy
import torch
import torch.nn as nn

# one block of 256 threads per row: the mean, the variance about it (two passes), then the write
LAYER_NORM_SRC = r"""
__device__ float block_sum(float v, float* red) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  const float total = red[0];
  __syncthreads();
  return total;
}

extern "C" __global__ void layer_norm(const float* __restrict__ x, const float* __restrict__ weight,
                                      const float* __restrict__ bias, float* __restrict__ out, int cols, float eps) {
  __shared__ float red[256];
  const long long base = (long long)blockIdx.x * cols;
  float acc = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += x[base + c];
  const float mean = block_sum(acc, red) / cols;
  acc = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = x[base + c] - mean;
    acc += d * d;
  }
  const float rstd = 1.0f / sqrtf(block_sum(acc, red) / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    out[base + c] = (x[base + c] - mean) * rstd * weight[c] + bias[c];
  }
}
"""

_MODULE = cupy.RawModule(code=LAYER_NORM_SRC)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(hidden))
        self.bias = nn.Parameter(torch.randn(hidden))

    def forward(self, x):
        x = x.contiguous()
        weight = self.weight.detach().contiguous()
        bias = self.bias.detach().contiguous()
        out = torch.empty_like(x)
        rows, cols = x.shape
        if x.numel() == 0:
            return out
        with cupy.cuda.ExternalStream(torch.cuda.current_stream(x.device).cuda_stream):
            args = (cupy.from_dlpack(x), cupy.from_dlpack(weight), cupy.from_dlpack(bias), cupy.from_dlpack(out),
                    numpy.int32(cols), numpy.float32(self.eps))
            kernel = _MODULE.get_function("layer_norm")
            kernel((rows,), (256,), args)
        return out
