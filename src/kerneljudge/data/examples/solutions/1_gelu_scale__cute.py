# expect: correct
# needs: cuda,cute
# problem: 1_gelu_scale.py
# why: CuTe DSL kernel (@cute.kernel launched from a @cute.jit host function, cute.compile once per shape), one thread per element, cute.math.erf GELU times the per-column scale; torch memory through from_dlpack, launched on the caller's torch stream
import cuda.bindings.driver as cuda_driver
import cutlass
import cutlass.cute as cute
import torch
import torch.nn as nn
from cutlass.cute.runtime import from_dlpack


@cute.kernel
def gelu_scale_kernel(gX: cute.Tensor, gScale: cute.Tensor, gOut: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdim, _, _ = cute.arch.block_dim()
    i = bidx * bdim + tidx
    rows, cols = gX.shape
    if i < rows * cols:
        row = i // cols
        col = i % cols
        v = gX[row, col]
        gOut[row, col] = cutlass.Float32(0.5) * v * (cutlass.Float32(1.0) + cute.math.erf(
            v * cutlass.Float32(0.7071067811865476))) * gScale[col]


@cute.jit
def gelu_scale(mX: cute.Tensor, mScale: cute.Tensor, mOut: cute.Tensor, stream: cuda_driver.CUstream):
    rows, cols = mX.shape
    threads = 256
    gelu_scale_kernel(mX, mScale, mOut).launch(grid=[(rows * cols + threads - 1) // threads, 1, 1],
                                              block=[threads, 1, 1], stream=stream)


_COMPILED = {}


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
        args = (from_dlpack(x), from_dlpack(scale), from_dlpack(out),
                cuda_driver.CUstream(torch.cuda.current_stream(x.device).cuda_stream))
        shape = tuple(x.shape)
        if shape not in _COMPILED:
            _COMPILED[shape] = cute.compile(gelu_scale, *args)
        _COMPILED[shape](*args)
        return out
