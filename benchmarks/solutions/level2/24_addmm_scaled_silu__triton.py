# problem: level2/24_addmm_scaled_silu.py
# kind: fused gemm epilogue (fp32 exact)
# fp32: tl.dot(..., input_precision="ieee"): full fp32 products, no TF32
# why: y = beta * c + alpha * (a @ W), out = silu(y) * c in one kernel: grouped 128x128 tl.dot tiles, c is
#      loaded once in the epilogue for both uses; masks on the M, N and K edges
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _addmm_scaled_silu_kernel(a_ptr, w_ptr, c_ptr, out_ptr, M, N, K, alpha, beta, stride_am, stride_ak,
                              stride_wk, stride_wn, stride_cm, stride_cn, stride_om, stride_on,
                              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    per_group = GROUP_M * grid_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows
    rm = pid_m.to(tl.int64) * BM + tl.arange(0, BM)
    rn = pid_n.to(tl.int64) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    w_ptrs = w_ptr + rk[:, None] * stride_wk + rn[None, :] * stride_wn
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k0), other=0.0)
        w = tl.load(w_ptrs, mask=(rk[:, None] < K - k0) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, w, acc, input_precision="ieee")
        a_ptrs += BK * stride_ak
        w_ptrs += BK * stride_wk
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    c = tl.load(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, mask=mask, other=0.0).to(tl.float32)
    y = beta * c + alpha * acc
    out = y / (1.0 + tl.exp(-y)) * c
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on, out.to(out_ptr.dtype.element_ty),
             mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, alpha, beta):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features ** 0.5)
        self.alpha = alpha
        self.beta = beta

    def forward(self, a, c):
        M, K = a.shape
        w = self.weight
        N = w.shape[1]
        out = torch.empty((M, N), dtype=a.dtype, device=a.device)
        if out.numel() == 0:
            return out
        bm = bn = 128
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        _addmm_scaled_silu_kernel[grid](a, w, c, out, M, N, K, float(self.alpha), float(self.beta), a.stride(0),
                                        a.stride(1), w.stride(0), w.stride(1), c.stride(0), c.stride(1),
                                        out.stride(0), out.stride(1), BM=bm, BN=bn, BK=32, GROUP_M=8, num_warps=8,
                                        num_stages=3)
        return out
