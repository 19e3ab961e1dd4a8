# problem: level1/54_std_dim.py
# kind: reduction (standard deviation)
# why: one program per row: unbiased std (divide by n - 1, as torch.std) from the mean and the centred sum of
#      squares (two-pass, no cancellation); a row up to 16384 wide is read once, a wider one twice; masked
#      lanes are zeroed
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _std_rows_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr, SINGLE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)
    if SINGLE:
        mask = cols < n_cols
        v = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(v, axis=0) / n_cols
        d = tl.where(mask, v - mean, 0.0)
        ss = tl.sum(d * d, axis=0)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            c = start + cols
            acc += tl.load(x_row + c, mask=c < n_cols, other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=0) / n_cols
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            c = start + cols
            mask = c < n_cols
            d = tl.where(mask, tl.load(x_row + c, mask=mask, other=0.0).to(tl.float32) - mean, 0.0)
            acc += d * d
        ss = tl.sum(acc, axis=0)
    tl.store(out_ptr + row, tl.sqrt(ss / (n_cols - 1)).to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n_cols = x.shape[-1]
        out = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out
        single = n_cols <= 16384
        block = triton.next_power_of_2(n_cols) if single else 4096
        warps = 4 if block <= 2048 else 8 if block <= 8192 else 16
        _std_rows_kernel[(out.numel(),)](x, out, n_cols, BLOCK=block, SINGLE=single, num_warps=warps)
        return out
