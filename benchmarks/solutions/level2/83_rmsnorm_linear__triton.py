# problem: level2/83_rmsnorm_linear.py
# kind: rmsnorm + linear (fp32 exact)
# fp32: tl.dot(..., input_precision="ieee"): full fp32 products, no TF32
# why: kernel 1 computes each row's 1 / rms (one float per row); kernel 2 is the projection with the norm
#      folded in: each x tile is multiplied by the norm weight along K before tl.dot, and the accumulator by
#      the row's 1 / rms in the epilogue, so the normalised activations never reach memory; W (N, K) is read
#      as the (K, N) operand through its strides; masks on every edge
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _inv_rms_kernel(x_ptr, inv_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        v = tl.load(x_ptr + row * n_cols + c, mask=c < n_cols, other=0.0).to(tl.float32)
        acc += v * v
    tl.store(inv_ptr + row, 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps))


@triton.jit
def _norm_linear_kernel(x_ptr, g_ptr, inv_ptr, w_ptr, out_ptr, M, N, K, stride_wn, stride_wk, stride_om,
                        stride_on, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
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
    x_ptrs = x_ptr + rm[:, None] * K + rk[None, :]
    w_ptrs = w_ptr + rk[:, None] * stride_wk + rn[None, :] * stride_wn
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        k_ok = rk < K - k0
        x = tl.load(x_ptrs, mask=(rm[:, None] < M) & k_ok[None, :], other=0.0).to(tl.float32)
        g = tl.load(g_ptr + k0 + rk, mask=k_ok, other=0.0).to(tl.float32)
        w = tl.load(w_ptrs, mask=k_ok[:, None] & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x * g[None, :], w, acc, input_precision="ieee")
        x_ptrs += BK
        w_ptrs += BK * stride_wk
    inv = tl.load(inv_ptr + rm, mask=rm < M, other=0.0)
    y = acc * inv[:, None]
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on, y.to(out_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, hidden, out_features, eps):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.2 * torch.randn(hidden))
        self.proj = nn.Linear(hidden, out_features, bias=False)
        self.eps = eps

    def forward(self, x):
        K = x.shape[-1]
        x2 = x.contiguous().reshape(-1, K)
        M = x2.shape[0]
        w = self.proj.weight
        N = w.shape[0]
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out.reshape(x.shape[:-1] + (N,))
        inv_rms = torch.empty(M, dtype=torch.float32, device=x.device)
        _inv_rms_kernel[(M,)](x2, inv_rms, K, float(self.eps), BLOCK=min(triton.next_power_of_2(max(K, 1)), 4096),
                              num_warps=4)
        bm = bn = 128
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        _norm_linear_kernel[grid](x2, self.weight, inv_rms, w, out, M, N, K, w.stride(0), w.stride(1),
                                  out.stride(0), out.stride(1), BM=bm, BN=bn, BK=32, GROUP_M=8, num_warps=8,
                                  num_stages=3)
        return out.reshape(x.shape[:-1] + (N,))
