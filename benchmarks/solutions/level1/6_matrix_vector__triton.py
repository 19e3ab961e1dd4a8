# problem: level1/6_matrix_vector.py
# kind: matmul (matrix-vector, memory-bound)
# why: each program owns BLOCK_M rows of A and streams them in [BLOCK_M, BLOCK_K] tiles, multiplying by the
#      matching slice of x and keeping per-lane fp32 partial sums until one reduction at the end (A is read
#      once, coalesced along K); masked on the M and K edges, int64 row offsets
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _matvec_kernel(a_ptr, x_ptr, out_ptr, M, K, stride_am, stride_xk, BLOCK_M: tl.constexpr,
                   BLOCK_K: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)
    for start in range(0, K, BLOCK_K):
        k = start + ks
        a = tl.load(a_ptr + rows[:, None] * stride_am + k[None, :], mask=(rows[:, None] < M) & (k[None, :] < K),
                    other=0.0).to(tl.float32)
        x = tl.load(x_ptr + k * stride_xk, mask=k < K, other=0.0).to(tl.float32)
        acc += a * x[None, :]
    tl.store(out_ptr + rows, tl.sum(acc, axis=1).to(out_ptr.dtype.element_ty), mask=rows < M)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, x):
        A = A.contiguous()
        M, K = A.shape
        out = torch.empty((M, 1), dtype=A.dtype, device=A.device)
        if M == 0:
            return out
        if K == 0:
            return out.zero_()
        block_m = 8
        block_k = min(triton.next_power_of_2(K), 512)
        _matvec_kernel[(triton.cdiv(M, block_m),)](A, x, out, M, K, A.stride(0), x.stride(0), BLOCK_M=block_m,
                                                   BLOCK_K=block_k, num_warps=4)
        return out
