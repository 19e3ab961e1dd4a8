# expect: correct
# needs: cuda,numba
# problem: 1_gelu_scale.py
# why: numba-cuda @cuda.jit kernel, one thread per element on a 2-D grid, math.erf in float32; torch memory through cuda.as_cuda_array, launched on the caller's torch stream through cuda.external_stream
import math

import numpy
import torch
import torch.nn as nn
from numba import cuda

HALF = numpy.float32(0.5)
ONE = numpy.float32(1.0)
INV_SQRT2 = numpy.float32(0.70710678118654752)


@cuda.jit
def gelu_scale_kernel(x, scale, out):
    col, row = cuda.grid(2)
    if row < x.shape[0] and col < x.shape[1]:
        v = x[row, col]
        out[row, col] = HALF * v * (ONE + math.erf(v * INV_SQRT2)) * scale[col]


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        x = x.contiguous()
        scale = self.scale.detach().contiguous()
        out = torch.empty_like(x)
        if x.numel() == 0:
            return out
        rows, cols = x.shape
        stream = cuda.external_stream(torch.cuda.current_stream(x.device).cuda_stream)
        grid = ((cols + 31) // 32, (rows + 7) // 8)
        gelu_scale_kernel[grid, (32, 8), stream](cuda.as_cuda_array(x), cuda.as_cuda_array(scale),
                                                 cuda.as_cuda_array(out))
        return out
