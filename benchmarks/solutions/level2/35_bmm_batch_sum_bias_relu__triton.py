# problem: level2/35_bmm_batch_sum_bias_relu.py
# kind: fused bmm + batch reduction (fp32 exact)
# fp32: tl.dot(..., input_precision="ieee"): full fp32 products, no TF32
# why: sum over the batch of a[i] @ b[i] is one long contraction over (batch, K): each program accumulates all
#      batch entries of one 64x128 output tile in registers (no per-batch products in memory), then adds the
#      bias and applies ReLU; int64 batch offsets, masks on the M, N and K edges
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bmm_batch_sum_bias_relu_kernel(a_ptr, b_ptr, bias_ptr, out_ptr, n_batch, M, N, K, stride_ab, stride_am,
                                    stride_ak, stride_bb, stride_bk, stride_bn, stride_om, stride_on,
                                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    grid_n = tl.cdiv(N, BN)
    pid_m = tl.program_id(0) // grid_n
    pid_n = tl.program_id(0) % grid_n
    rm = pid_m.to(tl.int64) * BM + tl.arange(0, BM)
    rn = pid_n.to(tl.int64) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    a_batch = a_ptr  # pointers step from one batch entry to the next (64-bit, no index overflow)
    b_batch = b_ptr
    for i in range(0, n_batch):
        a_ptrs = a_batch + rm[:, None] * stride_am + rk[None, :] * stride_ak
        b_ptrs = b_batch + rk[:, None] * stride_bk + rn[None, :] * stride_bn
        a_batch += stride_ab
        b_batch += stride_bb
        for k0 in range(0, K, BK):
            a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k0), other=0.0)
            b = tl.load(b_ptrs, mask=(rk[:, None] < K - k0) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc, input_precision="ieee")
            a_ptrs += BK * stride_ak
            b_ptrs += BK * stride_bk
    bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
    y = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on, y.to(out_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(0.5 * torch.randn(n))

    def forward(self, a, b):
        n_batch, M, K = a.shape
        N = b.shape[2]
        out = torch.empty((M, N), dtype=a.dtype, device=a.device)
        if out.numel() == 0:
            return out
        bm, bn = 64, 128
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        _bmm_batch_sum_bias_relu_kernel[grid](a, b, self.bias, out, n_batch, M, N, K, a.stride(0), a.stride(1),
                                              a.stride(2), b.stride(0), b.stride(1), b.stride(2), out.stride(0),
                                              out.stride(1), BM=bm, BN=bn, BK=32, num_warps=8, num_stages=3)
        return out
