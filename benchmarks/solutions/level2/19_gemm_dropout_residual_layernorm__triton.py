# problem: level2/19_gemm_dropout_residual_layernorm.py
# kind: gemm + residual + layernorm (fp32 exact)
# fp32: tl.dot(..., input_precision="ieee"): full fp32 products, no TF32
# why: kernel 1 writes h @ W.T + bias + residual (dropout is the identity in eval mode) with grouped 128x128
#      tl.dot tiles; kernel 2 layer-normalises each row of that buffer in place (a row up to 16384 wide is
#      read once, a wider one in three masked passes, every element read before it is written); masks on
#      every edge; nn.Linear and nn.LayerNorm only hold the weights
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _dense_bias_residual_kernel(h_ptr, w_ptr, b_ptr, r_ptr, out_ptr, M, N, K, stride_hm, stride_hk, stride_wn,
                                stride_wk, stride_rm, stride_rn, stride_om, stride_on, BM: tl.constexpr,
                                BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
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
    h_ptrs = h_ptr + rm[:, None] * stride_hm + rk[None, :] * stride_hk
    w_ptrs = w_ptr + rk[:, None] * stride_wk + rn[None, :] * stride_wn
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        h = tl.load(h_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k0), other=0.0)
        w = tl.load(w_ptrs, mask=(rk[:, None] < K - k0) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(h, w, acc, input_precision="ieee")
        h_ptrs += BK * stride_hk
        w_ptrs += BK * stride_wk
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
    res = tl.load(r_ptr + rm[:, None] * stride_rm + rn[None, :] * stride_rn, mask=mask, other=0.0).to(tl.float32)
    y = acc + bias[None, :] + res
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _layernorm_inplace_kernel(y_ptr, w_ptr, b_ptr, n_cols, eps, BLOCK: tl.constexpr, SINGLE: tl.constexpr):
    row_ptr = y_ptr + tl.program_id(0).to(tl.int64) * n_cols
    cols = tl.arange(0, BLOCK)
    if SINGLE:
        mask = cols < n_cols
        v = tl.load(row_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(v, axis=0) / n_cols
        d = tl.where(mask, v - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n_cols + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(row_ptr + cols, (d * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            c = start + cols
            acc += tl.load(row_ptr + c, mask=c < n_cols, other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=0) / n_cols
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            c = start + cols
            mask = c < n_cols
            d = tl.where(mask, tl.load(row_ptr + c, mask=mask, other=0.0).to(tl.float32) - mean, 0.0)
            acc += d * d
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for start in range(0, n_cols, BLOCK):
            c = start + cols
            mask = c < n_cols
            v = tl.load(row_ptr + c, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + c, mask=mask, other=0.0).to(tl.float32)
            b = tl.load(b_ptr + c, mask=mask, other=0.0).to(tl.float32)
            tl.store(row_ptr + c, ((v - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, features):
        super().__init__()
        self.dense = nn.Linear(hidden, features)
        self.norm = nn.LayerNorm(features, eps=1e-12)

    def forward(self, h, residual):
        K = h.shape[-1]
        h2 = h.reshape(-1, K)
        M = h2.shape[0]
        w = self.dense.weight
        N = w.shape[0]
        r2 = residual.reshape(M, N)
        out = torch.empty((M, N), dtype=h.dtype, device=h.device)
        if out.numel() == 0:
            return out.reshape(h.shape[:-1] + (N,))
        bm = bn = 128
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        _dense_bias_residual_kernel[grid](h2, w, self.dense.bias, r2, out, M, N, K, h2.stride(0), h2.stride(1),
                                          w.stride(0), w.stride(1), r2.stride(0), r2.stride(1), out.stride(0),
                                          out.stride(1), BM=bm, BN=bn, BK=32, GROUP_M=8, num_warps=8, num_stages=3)
        single = N <= 16384
        block = triton.next_power_of_2(N) if single else 4096
        warps = 4 if block <= 2048 else 8 if block <= 8192 else 16
        _layernorm_inplace_kernel[(M,)](out, self.norm.weight, self.norm.bias, N, float(self.norm.eps), BLOCK=block,
                                        SINGLE=single, num_warps=warps)
        return out.reshape(h.shape[:-1] + (N,))
