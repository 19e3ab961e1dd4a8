# expect: correct
# problem: 1_gelu_scale.py
# why: flat elementwise Triton kernel with a tail mask; exact-erf GELU; runs on a GPU and in the CPU interpreter
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu_scale_kernel(x_ptr, scale_ptr, out_ptr, n_elements, n_cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(scale_ptr + offs % n_cols, mask=mask, other=0.0).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476)) * s
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n == 0:
            return out
        block = 1024
        _gelu_scale_kernel[(triton.cdiv(n, block),)](x, self.scale, out, n, x.shape[-1], BLOCK=block)
        return out
