# expect: correct
# needs: cuda,cuda_core
# problem: 3_layernorm.py
# why: cuda.core (NVRTC to a cubin, launch on the caller's torch stream), one block per row: two-pass mean and variance with shared-memory reductions, then the affine write; pointers as data_ptr() ints, sizes as numpy scalars
import numpy
import torch
import torch.nn as nn

try:
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
except ImportError:  # cuda.core before 0.4 kept these under .experimental
    from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, launch

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

_KERNELS = {}


def kernel(name, device_index):
    """The NVRTC-compiled kernel `name` (a cubin for this GPU's architecture), compiled once per device."""
    if device_index not in _KERNELS:
        device = Device(device_index)
        device.set_current()
        arch = "".join(str(part) for part in device.compute_capability)
        options = ProgramOptions(std="c++17", arch=f"sm_{arch}")
        _KERNELS[device_index] = Program(LAYER_NORM_SRC, code_type="c++", options=options).compile("cubin")
    return _KERNELS[device_index].get_kernel(name)


class TorchStream:
    """The caller's torch stream in cuda.core's stream protocol (version 0, the cudaStream_t as an int)."""

    def __init__(self, stream):
        self.handle = stream.cuda_stream

    def __cuda_stream__(self):
        return (0, self.handle)


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
        launch(TorchStream(torch.cuda.current_stream(x.device)), LaunchConfig(grid=rows, block=256),
               kernel("layer_norm", x.device.index), x.data_ptr(), weight.data_ptr(), bias.data_ptr(),
               out.data_ptr(), numpy.int32(cols), numpy.float32(self.eps))
        return out
