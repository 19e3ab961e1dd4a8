# problem: level1/36_swiglu.py
# kind: elementwise activation (gated)
# why: out[r, c] = x[r, c] * silu(x[r, hidden + c]) for the two halves of each row; 2-D grid over rows and
#      column blocks, masked on the column edge, row offsets in int64
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swiglu_kernel(x_ptr, out_ptr, hidden, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < hidden
    a = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    gate = tl.load(x_ptr + row * stride_x + hidden + cols, mask=mask, other=0.0).to(tl.float32)
    y = a * (gate / (1.0 + tl.exp(-gate)))
    tl.store(out_ptr + row * stride_out + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        hidden = x.shape[-1] // 2
        out = torch.empty(x.shape[:-1] + (hidden,), dtype=x.dtype, device=x.device)
        rows = out.numel() // hidden if hidden else 0
        if out.numel() == 0:
            return out
        block = min(triton.next_power_of_2(hidden), 2048)
        grid = (rows, triton.cdiv(hidden, block))
        _swiglu_kernel[grid](x, out, hidden, x.shape[-1], hidden, BLOCK=block, num_warps=4)
        return out
