import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, out_ptr, n_cols, stride_x, stride_out, eps, BLOCK: tl.constexpr):
    # one program per row: first pass sums squares tile by tile, second pass scales and stores
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    sum_sq = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        sum_sq += v * v
    scale = 1.0 / tl.sqrt(tl.sum(sum_sq, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        v = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_row + cols, (v * scale * w).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features, eps):
        super().__init__()
        # same name and shape as Model's parameter, so it receives the reference's values
        self.weight = nn.Parameter(torch.randn(features))
        self.eps = eps

    def forward(self, x):
        n_cols = x.shape[-1]
        rows = x.reshape(-1, n_cols).contiguous()
        out = torch.empty_like(rows)
        weight = self.weight.contiguous()
        if rows.shape[0] > 0 and n_cols > 0:
            block = min(triton.next_power_of_2(n_cols), 2048)
            rms_norm_kernel[(rows.shape[0],)](rows, weight, out, n_cols, rows.stride(0), out.stride(0),
                                              self.eps, BLOCK=block)
        return out.reshape(x.shape)
