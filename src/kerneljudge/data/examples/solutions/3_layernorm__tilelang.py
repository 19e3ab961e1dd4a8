# expect: correct
# needs: cuda,tilelang
# problem: 3_layernorm.py
# why: TileLang kernel (a @tilelang.jit factory returning a @T.prim_func, compiled once per shape and dtype), one block per row: two-pass mean and variance over 1024-column tiles (T.reduce_sum over a fragment, columns past the row's end read as 0), then the affine write; float32 arithmetic, 1/sqrt for the scale; torch tensors passed in and out without copies, launched on the caller's torch stream
import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

TILE, THREADS = 1024, 256   # one row per block, 1024 columns at a time (4 per thread)
DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}


@tilelang.jit
def layernorm_kernel(rows, cols, eps, dtype):
    acc = "float32"
    tiles = (cols + TILE - 1) // TILE

    @T.prim_func
    def main(X: T.Tensor((rows, cols), dtype), W: T.Tensor((cols,), dtype), B: T.Tensor((cols,), dtype),
             Y: T.Tensor((rows, cols), dtype)):
        with T.Kernel(rows, threads=THREADS) as r:
            tile = T.alloc_fragment((1, TILE), acc)
            part = T.alloc_fragment((1,), acc)
            sum_x = T.alloc_fragment((1,), acc)
            sum_sq = T.alloc_fragment((1,), acc)
            mean = T.alloc_fragment((1,), acc)
            rstd = T.alloc_fragment((1,), acc)
            T.fill(sum_x, 0.0)
            T.fill(sum_sq, 0.0)
            # pass 1: the mean
            for t in T.serial(tiles):
                for i, j in T.Parallel(1, TILE):
                    c = t * TILE + j
                    tile[i, j] = T.if_then_else(c < cols, T.Cast(acc, X[r, c]), T.float32(0.0))
                T.reduce_sum(tile, part, dim=1, clear=True)
                for i in T.Parallel(1):
                    sum_x[i] = sum_x[i] + part[i]
            for i in T.Parallel(1):
                mean[i] = sum_x[i] / T.float32(cols)
            # pass 2: the (biased) variance from the deviations
            for t in T.serial(tiles):
                for i, j in T.Parallel(1, TILE):
                    c = t * TILE + j
                    tile[i, j] = T.if_then_else(c < cols, T.Cast(acc, X[r, c]) - mean[i], T.float32(0.0))
                for i, j in T.Parallel(1, TILE):
                    tile[i, j] = tile[i, j] * tile[i, j]
                T.reduce_sum(tile, part, dim=1, clear=True)
                for i in T.Parallel(1):
                    sum_sq[i] = sum_sq[i] + part[i]
            for i in T.Parallel(1):
                rstd[i] = T.float32(1.0) / T.sqrt(sum_sq[i] / T.float32(cols) + T.float32(eps))
            # pass 3: normalise, scale and shift
            for t in T.serial(tiles):
                for i, j in T.Parallel(1, TILE):
                    c = t * TILE + j
                    if c < cols:
                        norm = (T.Cast(acc, X[r, c]) - mean[i]) * rstd[i]
                        Y[r, c] = T.Cast(dtype, norm * T.Cast(acc, W[c]) + T.Cast(acc, B[c]))

    return main


_KERNELS = {}   # (rows, cols, eps, dtype) -> compiled kernel


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(hidden))
        self.bias = nn.Parameter(torch.randn(hidden))

    def forward(self, x):
        x = x.contiguous()
        weight = self.weight.detach().contiguous()
        bias = self.bias.detach().contiguous()
        out = torch.empty_like(x)
        if x.numel() == 0:
            return out
        rows, cols = x.shape
        key = (rows, cols, float(self.eps), x.dtype)
        if key not in _KERNELS:
            _KERNELS[key] = layernorm_kernel(rows, cols, float(self.eps), DTYPES[x.dtype])
        _KERNELS[key](x, weight, bias, out)
        return out
