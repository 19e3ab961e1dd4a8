# problem: level1/47_sum_dim.py
# kind: reduction
# why: any reduce_dim: x is viewed as (outer, reduced, inner); each program sums a [BLOCK_R, BLOCK_I] tile
#      stream down the reduced axis for one outer index and a block of inner columns (coalesced along inner),
#      masked on both edges, fp32 accumulation, int64 offsets
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sum_dim_kernel(x_ptr, out_ptr, n_reduced, n_inner, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    # one flat grid axis (outer and inner blocks can each exceed the 65535 limit of the other axes)
    pid = tl.program_id(0).to(tl.int64)
    n_inner_blocks = tl.cdiv(n_inner, BLOCK_I)
    outer = pid // n_inner_blocks
    inner = (pid % n_inner_blocks) * BLOCK_I + tl.arange(0, BLOCK_I)
    rs = tl.arange(0, BLOCK_R)
    base = x_ptr + outer * n_reduced * n_inner
    acc = tl.zeros([BLOCK_R, BLOCK_I], dtype=tl.float32)
    for start in range(0, n_reduced, BLOCK_R):
        r = start + rs
        mask = (r[:, None] < n_reduced) & (inner[None, :] < n_inner)
        acc += tl.load(base + r[:, None].to(tl.int64) * n_inner + inner[None, :], mask=mask, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + outer * n_inner + inner, total.to(out_ptr.dtype.element_ty), mask=inner < n_inner)


class ModelNew(nn.Module):
    def __init__(self, reduce_dim):
        super().__init__()
        self.reduce_dim = reduce_dim

    def forward(self, x):
        x = x.contiguous()
        dim = self.reduce_dim % x.dim()
        out_shape = x.shape[:dim] + (1,) + x.shape[dim + 1:]
        n_reduced = x.shape[dim]
        n_outer = x.shape[:dim].numel()
        n_inner = x.shape[dim + 1:].numel()
        out = torch.empty(out_shape, dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out
        if n_reduced == 0:
            out.zero_()
            return out
        block_i = min(max(triton.next_power_of_2(n_inner), 16), 128)
        block_r = min(max(triton.next_power_of_2(n_reduced), 1), max(4096 // block_i, 1))
        grid = (n_outer * triton.cdiv(n_inner, block_i),)
        _sum_dim_kernel[grid](x, out, n_reduced, n_inner, BLOCK_R=block_r, BLOCK_I=block_i, num_warps=8)
        return out
