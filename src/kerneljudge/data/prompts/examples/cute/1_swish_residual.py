import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
import torch.nn as nn
from cutlass.cute.runtime import from_dlpack

THREADS = 256


@cute.kernel
def swish_residual_kernel(mX: cute.Tensor, mR: cute.Tensor, mOut: cute.Tensor, n: cutlass.Int32):
    # one thread per element; the bounds check guards the ragged last block
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    if i < n:
        v = mX[i]
        mOut[i] = v / (cutlass.Float32(1.0) + cute.math.exp(cutlass.Float32(0.0) - v)) + mR[i]


@cute.jit
def swish_residual(mX: cute.Tensor, mR: cute.Tensor, mOut: cute.Tensor, n: cutlass.Int32, stream: cuda.CUstream):
    blocks = (n + THREADS - 1) // THREADS
    swish_residual_kernel(mX, mR, mOut, n).launch(grid=[blocks, 1, 1], block=[THREADS, 1, 1], stream=stream)


compiled = {}   # the compiled host function, built on the first call (its layouts are dynamic: any length)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, residual):
        if x.dtype != torch.float32 or residual.dtype != torch.float32:
            raise TypeError("inputs must be float32")
        if x.shape != residual.shape:
            raise ValueError("x and residual must have the same shape")
        flat_x = x.contiguous().view(-1)
        flat_r = residual.contiguous().view(-1)
        out = torch.empty_like(flat_x)
        n = flat_x.numel()
        if n == 0:
            return out.view(x.shape)
        if n >= 2**31:
            raise ValueError("too many elements for 32-bit indices")
        # zero-copy views of the tensors, and PyTorch's current stream for the launch
        args = (from_dlpack(flat_x).mark_layout_dynamic(leading_dim=0),
                from_dlpack(flat_r).mark_layout_dynamic(leading_dim=0),
                from_dlpack(out).mark_layout_dynamic(leading_dim=0),
                n, cuda.CUstream(torch.cuda.current_stream().cuda_stream))
        if "swish_residual" not in compiled:
            compiled["swish_residual"] = cute.compile(swish_residual, *args)
        compiled["swish_residual"](*args)
        return out.view(x.shape)
