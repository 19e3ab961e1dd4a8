import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

TILE, THREADS = 256, 256   # 256 channels of one batch row per block, one per thread
DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}


@tilelang.jit
def mean_pool_tanh_kernel(batch, steps, channels, dtype):
    @T.prim_func
    def main(X: T.Tensor((batch, steps, channels), dtype), Out: T.Tensor((batch, channels), dtype)):
        with T.Kernel(T.ceildiv(channels, TILE), batch, threads=THREADS) as (bx, b):
            sums = T.alloc_fragment((TILE,), "float32")
            T.clear(sums)
            # neighbouring threads take neighbouring channels: each step reads a contiguous run of memory
            for t in T.serial(steps):
                for j in T.Parallel(TILE):
                    c = bx * TILE + j
                    sums[j] += T.if_then_else(c < channels, T.Cast("float32", X[b, t, c]), T.float32(0.0))
            for j in T.Parallel(TILE):
                c = bx * TILE + j
                if c < channels:
                    Out[b, c] = T.Cast(dtype, T.tanh(sums[j] / T.float32(steps)))

    return main


kernels = {}   # (batch, steps, channels, dtype) -> compiled kernel


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        batch, steps, channels = x.shape
        out = torch.empty((batch, channels), dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out
        if steps == 0:
            return out.fill_(float("nan"))   # the mean of nothing, as torch gives it
        key = (batch, steps, channels, x.dtype)
        if key not in kernels:
            kernels[key] = mean_pool_tanh_kernel(batch, steps, channels, DTYPES[x.dtype])
        kernels[key](x, out)
        return out
