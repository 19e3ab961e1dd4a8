# problem: level1/39_rmsnorm.py
# kind: rmsnorm
# why: one program per row: x * rsqrt(mean(x^2) + eps) * weight; a row up to 16384 wide is read once, a wider
#      one takes a sum-of-squares pass and a write pass; masked lanes load 0
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rmsnorm_kernel(x_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr, SINGLE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    out_row = out_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)
    if SINGLE:
        mask = cols < n_cols
        v = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        inv = 1.0 / tl.sqrt(tl.sum(v * v, axis=0) / n_cols + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_row + cols, (w * (v * inv)).to(out_ptr.dtype.element_ty), mask=mask)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            c = start + cols
            v = tl.load(x_row + c, mask=c < n_cols, other=0.0).to(tl.float32)
            acc += v * v
        inv = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for start in range(0, n_cols, BLOCK):
            c = start + cols
            mask = c < n_cols
            v = tl.load(x_row + c, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + c, mask=mask, other=0.0).to(tl.float32)
            tl.store(out_row + c, (w * (v * inv)).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.eps = 1e-6
        self.weight = nn.Parameter(torch.ones(hidden))

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n_cols = x.shape[-1]
        if out.numel() == 0:
            return out
        rows = x.numel() // n_cols
        single = n_cols <= 16384
        block = triton.next_power_of_2(n_cols) if single else 4096
        warps = 4 if block <= 2048 else 8 if block <= 8192 else 16
        _rmsnorm_kernel[(rows,)](x, self.weight, out, n_cols, self.eps, BLOCK=block, SINGLE=single,
                                 num_warps=warps)
        return out
