import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

BLOCK, THREADS = 1024, 256   # 1024 elements per block, 4 per thread
DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}


# The factory takes the sizes and the dtype (Python values) and returns the kernel; calling it compiles once per
# distinct argument tuple.
@tilelang.jit
def swish_residual_kernel(n, dtype):
    @T.prim_func
    def main(X: T.Tensor((n,), dtype), R: T.Tensor((n,), dtype), Out: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, BLOCK), threads=THREADS) as bx:
            for i in T.Parallel(BLOCK):
                idx = bx * BLOCK + i
                if idx < n:   # the last block is ragged
                    v = T.Cast("float32", X[idx])
                    swish = v / (T.float32(1.0) + T.exp(-v))
                    Out[idx] = T.Cast(dtype, swish + T.Cast("float32", R[idx]))

    return main


kernels = {}   # (n, dtype) -> compiled kernel


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, residual):
        if x.shape != residual.shape or x.dtype != residual.dtype:
            raise ValueError("x and residual must have the same shape and dtype")
        flat_x = x.contiguous().view(-1)
        flat_r = residual.contiguous().view(-1)
        out = torch.empty_like(flat_x)
        n = flat_x.numel()
        if n == 0:
            return out.view(x.shape)
        key = (n, x.dtype)
        if key not in kernels:
            kernels[key] = swish_residual_kernel(n, DTYPES[x.dtype])
        # torch tensors go straight in (no copies); the kernel runs on PyTorch's current stream
        kernels[key](flat_x, flat_r, out)
        return out.view(x.shape)
