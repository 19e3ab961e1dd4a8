import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swish_residual_kernel(x_ptr, r_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    # one program per BLOCK consecutive elements; the mask guards the ragged tail
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    y = x / (1.0 + tl.exp(-x)) + r
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, residual):
        x = x.contiguous()
        residual = residual.contiguous()
        out = torch.empty_like(x)
        n_elements = x.numel()
        if n_elements > 0:
            block = 1024
            grid = (triton.cdiv(n_elements, block),)
            swish_residual_kernel[grid](x, residual, out, n_elements, BLOCK=block)
        return out
