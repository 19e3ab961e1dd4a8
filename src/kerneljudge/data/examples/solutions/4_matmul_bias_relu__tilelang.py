# expect: correct
# needs: cuda,tilelang
# problem: 4_matmul_bias_relu.py
# why: TileLang kernel (a @tilelang.jit factory returning a @T.prim_func, compiled once per shape and dtype): 64x64 output tiles, x and weight staged through shared memory 16 columns of K at a time (out-of-range elements read as 0; the weight tile padded against bank conflicts), each thread accumulating 16 outputs with a T.serial loop, bias and ReLU fused into the store; full fp32 (no T.gemm, whose float32 path uses TF32 tensor cores); torch tensors passed in and out without copies, launched on the caller's torch stream
import math

import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

BM, BN, BK, THREADS = 64, 64, 16, 256
DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}


@tilelang.jit
def matmul_bias_relu_kernel(m, n, k, dtype):
    acc = "float32"

    @T.prim_func
    def main(X: T.Tensor((m, k), dtype), W: T.Tensor((n, k), dtype), Bias: T.Tensor((n,), dtype),
             Out: T.Tensor((m, n), dtype)):
        with T.Kernel(T.ceildiv(n, BN), T.ceildiv(m, BM), threads=THREADS) as (bx, by):
            xs = T.alloc_shared((BM, BK), acc)
            ws = T.alloc_shared((BN, BK + 1), acc)   # one spare column: lanes read 17 floats apart
            out_tile = T.alloc_fragment((BM, BN), acc)
            T.clear(out_tile)
            for ko in T.serial(T.ceildiv(k, BK)):
                for i, kk in T.Parallel(BM, BK):
                    row = by * BM + i
                    col = ko * BK + kk
                    xs[i, kk] = T.if_then_else(row < m and col < k, T.Cast(acc, X[row, col]), T.float32(0.0))
                for j, kk in T.Parallel(BN, BK):
                    row = bx * BN + j   # a row of weight is a column of the output
                    col = ko * BK + kk
                    ws[j, kk] = T.if_then_else(row < n and col < k, T.Cast(acc, W[row, col]), T.float32(0.0))
                for i, j in T.Parallel(BM, BN):
                    for kk in T.serial(BK):
                        out_tile[i, j] += xs[i, kk] * ws[j, kk]
            for i, j in T.Parallel(BM, BN):
                row = by * BM + i
                col = bx * BN + j
                if row < m and col < n:
                    Out[row, col] = T.Cast(dtype, T.max(out_tile[i, j] + T.Cast(acc, Bias[col]), T.float32(0.0)))

    return main


_KERNELS = {}   # (m, n, k, dtype) -> compiled kernel


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        x = x.contiguous()
        weight = self.weight.detach().contiguous()   # (N, K): read as is, no transpose copy
        bias = self.bias.detach().contiguous()
        m, k = x.shape
        n = weight.shape[0]
        out = torch.empty((m, n), dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out
        key = (m, n, k, x.dtype)
        if key not in _KERNELS:
            _KERNELS[key] = matmul_bias_relu_kernel(m, n, k, DTYPES[x.dtype])
        _KERNELS[key](x, weight, bias, out)
        return out
