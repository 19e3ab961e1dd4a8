import cupy
import numpy
import torch
import torch.nn as nn

THREADS = 256

MEAN_POOL_SOURCE = r"""
// One thread per output element (b, c). Neighbouring threads take neighbouring channels, so each step of the
// loop over time reads a contiguous run of memory across the warp.
extern "C" __global__ void mean_pool_tanh_kernel(const float* __restrict__ x, float* __restrict__ out,
                                                 long long batch, long long steps, long long channels) {
  const long long total = batch * channels;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const long long b = i / channels;
    const long long c = i - b * channels;
    const float* p = x + b * steps * channels + c;
    float acc = 0.0f;
    for (long long t = 0; t < steps; ++t) acc += p[t * channels];
    out[i] = tanhf(acc / static_cast<float>(steps));
  }
}
"""

# a RawModule can hold several kernels; this one holds one
mean_pool_module = cupy.RawModule(code=MEAN_POOL_SOURCE, options=("-std=c++17",))
mean_pool_tanh_kernel = mean_pool_module.get_function("mean_pool_tanh_kernel")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if x.dtype != torch.float32 or x.dim() != 3:
            raise TypeError("x must be a float32 (batch, steps, channels) tensor")
        x = x.contiguous()
        batch, steps, channels = x.shape
        out = torch.empty((batch, channels), dtype=x.dtype, device=x.device)
        total = batch * channels
        if total == 0:
            return out
        blocks = min((total + THREADS - 1) // THREADS, 65536)
        with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            mean_pool_tanh_kernel((blocks,), (THREADS,),
                                  (cupy.asarray(x), cupy.asarray(out), numpy.int64(batch),
                                   numpy.int64(steps), numpy.int64(channels)))
        return out
