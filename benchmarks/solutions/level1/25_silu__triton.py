# problem: level1/25_silu.py
# kind: elementwise activation
# why: flat SiLU: x * sigmoid(x) as x / (1 + exp(-x)) (exp(-x) = inf gives -0);
#      int64 offsets and a tail mask (any element count); fp32 math, stored in the output dtype
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _silu_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = x / (1.0 + tl.exp(-x))
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n == 0:
            return out
        block = 4096
        _silu_kernel[(triton.cdiv(n, block),)](x, out, n, BLOCK=block, num_warps=8)
        return out
