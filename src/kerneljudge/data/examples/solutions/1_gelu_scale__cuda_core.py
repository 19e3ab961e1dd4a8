# expect: correct
# needs: cuda,cuda_core
# problem: 1_gelu_scale.py
# why: cuda.core (NVRTC to a cubin, launch on the caller's torch stream), elementwise: grid-stride, erff GELU times the per-column scale; pointers as data_ptr() ints, sizes as numpy scalars
import numpy
import torch
import torch.nn as nn

try:
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
except ImportError:  # cuda.core before 0.4 kept these under .experimental
    from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, launch

GELU_SCALE_SRC = r"""
extern "C" __global__ void gelu_scale(const float* __restrict__ x, const float* __restrict__ scale,
                                      float* __restrict__ out, long long n, int cols) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const float v = x[i];
    out[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)) * scale[i % cols];
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
        _KERNELS[device_index] = Program(GELU_SCALE_SRC, code_type="c++", options=options).compile("cubin")
    return _KERNELS[device_index].get_kernel(name)


class TorchStream:
    """The caller's torch stream in cuda.core's stream protocol (version 0, the cudaStream_t as an int)."""

    def __init__(self, stream):
        self.handle = stream.cuda_stream

    def __cuda_stream__(self):
        return (0, self.handle)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        x = x.contiguous()
        scale = self.scale.detach().contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n == 0:
            return out
        config = LaunchConfig(grid=min((n + 255) // 256, 65535 * 8), block=256)
        launch(TorchStream(torch.cuda.current_stream(x.device)), config, kernel("gelu_scale", x.device.index),
               x.data_ptr(), scale.data_ptr(), out.data_ptr(), numpy.int64(n), numpy.int32(x.shape[1]))
        return out
