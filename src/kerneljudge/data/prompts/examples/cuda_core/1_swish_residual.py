import numpy
import torch
import torch.nn as nn

try:
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
except ImportError:  # cuda.core releases before 0.4 keep the same API under cuda.core.experimental
    from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, launch

SOURCE = r"""
// Grid-stride loop: any number of elements with a bounded grid.
extern "C" __global__ void swish_residual_kernel(const float* __restrict__ x, const float* __restrict__ r,
                                                 float* __restrict__ out, long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = x[i];
    out[i] = v / (1.0f + expf(-v)) + r[i];
  }
}
"""

THREADS = 256

# compiled once, when the module is imported, for the GPU PyTorch uses (its primary context is made current)
device = Device(torch.cuda.current_device())
device.set_current()
program = Program(SOURCE, code_type="c++", options=ProgramOptions(arch=f"sm_{device.arch}", std="c++17"))
swish_residual_kernel = program.compile("cubin").get_kernel("swish_residual_kernel")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, residual):
        if x.dtype != torch.float32 or residual.dtype != torch.float32:
            raise TypeError("inputs must be float32")
        if x.shape != residual.shape:
            raise ValueError("x and residual must have the same shape")
        x = x.contiguous()
        residual = residual.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n == 0:
            return out
        blocks = min((n + THREADS - 1) // THREADS, 65536)
        # a cuda.core Stream wrapping PyTorch's current stream: the kernel is ordered with PyTorch's work
        stream = device.create_stream(torch.cuda.current_stream())
        launch(stream, LaunchConfig(grid=blocks, block=THREADS), swish_residual_kernel,
               x.data_ptr(), residual.data_ptr(), out.data_ptr(), numpy.int64(n))
        return out
