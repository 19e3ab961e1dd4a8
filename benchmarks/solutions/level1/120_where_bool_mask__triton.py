# problem: level1/120_where_bool_mask.py
# kind: elementwise select
# why: flat select; the bool mask is read through a uint8 view of its bytes (torch.bool is one byte, 0 or 1);
#      int64 offsets and a tail mask (any element count)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _where_kernel(mask_ptr, x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n_elements
    m = tl.load(mask_ptr + offs, mask=inside, other=0)
    x = tl.load(x_ptr + offs, mask=inside, other=0.0)
    y = tl.load(y_ptr + offs, mask=inside, other=0.0)
    tl.store(out_ptr + offs, tl.where(m != 0, x, y), mask=inside)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, mask, x, y):
        mask = mask.contiguous()
        x = x.contiguous()
        y = y.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n == 0:
            return out
        block = 4096
        _where_kernel[(triton.cdiv(n, block),)](mask.view(torch.uint8), x, y, out, n, BLOCK=block, num_warps=8)
        return out
