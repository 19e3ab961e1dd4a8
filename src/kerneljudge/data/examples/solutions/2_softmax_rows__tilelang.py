# expect: correct
# needs: cuda,tilelang
# problem: 2_softmax_rows.py
# why: TileLang kernel (a @tilelang.jit factory returning a @T.prim_func, compiled once per shape and dtype), one block per row: an online pass over 1024-column tiles (T.reduce_max and T.reduce_sum over a fragment, the running sum rescaled when the maximum grows; columns past the row's end read as -inf), then the normalised write; float32 arithmetic; torch tensors passed in and out without copies, launched on the caller's torch stream
import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

TILE, THREADS = 1024, 256   # one row per block, 1024 columns at a time (4 per thread)
DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}


@tilelang.jit
def softmax_rows_kernel(rows, cols, dtype):
    acc = "float32"
    tiles = (cols + TILE - 1) // TILE

    @T.prim_func
    def main(X: T.Tensor((rows, cols), dtype), Y: T.Tensor((rows, cols), dtype)):
        with T.Kernel(rows, threads=THREADS) as r:
            tile = T.alloc_fragment((1, TILE), acc)
            tile_max = T.alloc_fragment((1,), acc)
            tile_sum = T.alloc_fragment((1,), acc)
            new_max = T.alloc_fragment((1,), acc)
            row_max = T.alloc_fragment((1,), acc)
            row_sum = T.alloc_fragment((1,), acc)
            T.fill(row_max, -T.infinity(acc))
            T.fill(row_sum, 0.0)
            # pass 1: the row's maximum and its sum of exp(x - max), one tile at a time
            for t in T.serial(tiles):
                for i, j in T.Parallel(1, TILE):
                    c = t * TILE + j
                    tile[i, j] = T.if_then_else(c < cols, T.Cast(acc, X[r, c]), -T.infinity(acc))
                T.reduce_max(tile, tile_max, dim=1, clear=True)
                for i in T.Parallel(1):
                    new_max[i] = T.max(row_max[i], tile_max[i])
                for i, j in T.Parallel(1, TILE):
                    tile[i, j] = T.exp(tile[i, j] - new_max[i])   # exp(-inf) = 0 past the row's end
                T.reduce_sum(tile, tile_sum, dim=1, clear=True)
                for i in T.Parallel(1):
                    row_sum[i] = row_sum[i] * T.exp(row_max[i] - new_max[i]) + tile_sum[i]
                    row_max[i] = new_max[i]
            # pass 2: the normalised values
            for t in T.serial(tiles):
                for i, j in T.Parallel(1, TILE):
                    c = t * TILE + j
                    if c < cols:
                        Y[r, c] = T.Cast(dtype, T.exp(T.Cast(acc, X[r, c]) - row_max[i]) / row_sum[i])

    return main


_KERNELS = {}   # (rows, cols, dtype) -> compiled kernel


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        if x.numel() == 0:
            return out
        rows, cols = x.shape
        key = (rows, cols, x.dtype)
        if key not in _KERNELS:
            _KERNELS[key] = softmax_rows_kernel(rows, cols, DTYPES[x.dtype])
        _KERNELS[key](x, out)
        return out
