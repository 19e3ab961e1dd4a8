# expect: correct
# needs: cuda,cuda_core
# problem: 2_softmax_rows.py
# why: cuda.core (NVRTC to a cubin, launch on the caller's torch stream), one block per row: max, sum of exp, write, with shared-memory tree reductions; any width; pointers as data_ptr() ints, sizes as numpy scalars
import numpy
import torch
import torch.nn as nn

try:
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
except ImportError:  # cuda.core before 0.4 kept these under .experimental
    from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, launch

# one block of 256 threads per row: the row's max, the sum of exp(x - max), then the write
SOFTMAX_ROWS_SRC = r"""
extern "C" __global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ out, int cols) {
  __shared__ float red[256];
  const long long base = (long long)blockIdx.x * cols;
  float m = __int_as_float(0xff800000);  // -inf
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, x[base + c]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(x[base + c] - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  const float inv = 1.0f / red[0];
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[base + c] = expf(x[base + c] - m) * inv;
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
        _KERNELS[device_index] = Program(SOFTMAX_ROWS_SRC, code_type="c++", options=options).compile("cubin")
    return _KERNELS[device_index].get_kernel(name)


class TorchStream:
    """The caller's torch stream in cuda.core's stream protocol (version 0, the cudaStream_t as an int)."""

    def __init__(self, stream):
        self.handle = stream.cuda_stream

    def __cuda_stream__(self):
        return (0, self.handle)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        rows, cols = x.shape
        if x.numel() == 0:
            return out
        launch(TorchStream(torch.cuda.current_stream(x.device)), LaunchConfig(grid=rows, block=256),
               kernel("softmax_rows", x.device.index), x.data_ptr(), out.data_ptr(), numpy.int32(cols))
        return out
