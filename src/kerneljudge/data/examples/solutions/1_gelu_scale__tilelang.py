# expect: correct
# needs: cuda,tilelang
# problem: 1_gelu_scale.py
# why: TileLang kernel (a @tilelang.jit factory returning a @T.prim_func, compiled once per shape and dtype): a T.Kernel grid of (8, 256) tiles, T.Parallel over each tile with a bounds check, exact erf GELU times the per-column scale in float32; torch tensors passed in and out without copies, launched on the caller's torch stream
import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

TILE_ROWS, TILE_COLS, THREADS = 8, 256, 256
DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}


@tilelang.jit
def gelu_scale_kernel(rows, cols, dtype):
    @T.prim_func
    def main(X: T.Tensor((rows, cols), dtype), S: T.Tensor((cols,), dtype), Out: T.Tensor((rows, cols), dtype)):
        with T.Kernel(T.ceildiv(cols, TILE_COLS), T.ceildiv(rows, TILE_ROWS), threads=THREADS) as (bx, by):
            for i, j in T.Parallel(TILE_ROWS, TILE_COLS):
                r = by * TILE_ROWS + i
                c = bx * TILE_COLS + j
                if r < rows and c < cols:   # the last tiles of a row and of the grid are ragged
                    v = T.Cast("float32", X[r, c])
                    gelu = T.float32(0.5) * v * (T.float32(1.0) + T.erf(v * T.float32(0.7071067811865476)))
                    Out[r, c] = T.Cast(dtype, gelu * T.Cast("float32", S[c]))

    return main


_KERNELS = {}   # (rows, cols, dtype) -> compiled kernel


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
        key = (rows, cols, x.dtype)
        if key not in _KERNELS:
            _KERNELS[key] = gelu_scale_kernel(rows, cols, DTYPES[x.dtype])
        _KERNELS[key](x, scale, out)
        return out
