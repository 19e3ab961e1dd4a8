# expect: correct
# needs: cuda,cupy
# problem: 1_gelu_scale.py
# why: CuPy RawModule (NVRTC), elementwise: grid-stride, erff GELU times the per-column scale; zero-copy through DLPack, launched on the caller's torch stream (cupy.cuda.ExternalStream)
import cupy
import numpy
import torch
import torch.nn as nn

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

_MODULE = cupy.RawModule(code=GELU_SCALE_SRC)


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
        blocks = min((n + 255) // 256, 65535 * 8)
        with cupy.cuda.ExternalStream(torch.cuda.current_stream(x.device).cuda_stream):
            args = (cupy.from_dlpack(x), cupy.from_dlpack(scale), cupy.from_dlpack(out), numpy.int64(n),
                    numpy.int32(x.shape[1]))
            kernel = _MODULE.get_function("gelu_scale")
            kernel((blocks,), (256,), args)
        return out
