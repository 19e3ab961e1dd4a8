import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
import torch.nn as nn
from cutlass.cute.runtime import from_dlpack

THREADS = 256


@cute.kernel
def mean_pool_tanh_kernel(mX: cute.Tensor, mOut: cute.Tensor, total: cutlass.Int32, steps: cutlass.Int32,
                          channels: cutlass.Int32, inv_steps: cutlass.Float32):
    # One thread per output element (b, c). Neighbouring threads take neighbouring channels, so each step of
    # the loop over time reads a contiguous run of memory across the warp.
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    if i < total:
        b = i // channels
        c = i - b * channels
        acc = cutlass.Float32(0.0)
        for t in range(steps):
            acc = acc + mX[b, t, c]
        mOut[b, c] = cute.math.tanh(acc * inv_steps)


@cute.jit
def mean_pool_tanh(mX: cute.Tensor, mOut: cute.Tensor, total: cutlass.Int32, steps: cutlass.Int32,
                   channels: cutlass.Int32, inv_steps: cutlass.Float32, stream: cuda.CUstream):
    blocks = (total + THREADS - 1) // THREADS
    mean_pool_tanh_kernel(mX, mOut, total, steps, channels, inv_steps).launch(
        grid=[blocks, 1, 1], block=[THREADS, 1, 1], stream=stream)


compiled = {}   # the compiled host function, built on the first call (its layouts are dynamic: any shape)


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
        if total == 0 or steps == 0:
            return out.fill_(float("nan"))
        if x.numel() >= 2**31:
            raise ValueError("too many elements for 32-bit indices")
        args = (from_dlpack(x).mark_layout_dynamic(leading_dim=2), from_dlpack(out).mark_layout_dynamic(leading_dim=1),
                total, steps, channels, 1.0 / steps, cuda.CUstream(torch.cuda.current_stream().cuda_stream))
        if "mean_pool_tanh" not in compiled:
            compiled["mean_pool_tanh"] = cute.compile(mean_pool_tanh, *args)
        compiled["mean_pool_tanh"](*args)
        return out
