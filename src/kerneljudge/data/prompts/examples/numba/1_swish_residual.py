import math

import numba
import torch
import torch.nn as nn
from numba import cuda

THREADS = 256


@cuda.jit
def swish_residual_kernel(x, r, out):
    # grid-stride loop: any number of elements with a bounded grid; float32 constants keep float32 math
    one = numba.float32(1.0)
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        v = x[i]
        out[i] = v / (one + math.exp(-v)) + r[i]


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
        # launch on PyTorch's current stream; the arrays share the tensors' memory
        stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)
        swish_residual_kernel[blocks, THREADS, stream](
            cuda.as_cuda_array(x.view(-1)), cuda.as_cuda_array(residual.view(-1)), cuda.as_cuda_array(out.view(-1)))
        return out
