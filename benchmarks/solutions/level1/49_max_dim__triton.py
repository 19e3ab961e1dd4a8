# problem: level1/49_max_dim.py
# kind: reduction
# why: any reduce_dim: x is viewed as (outer, reduced, inner); each program takes the running maximum of a
#      [BLOCK_R, BLOCK_I] tile stream down the reduced axis for one outer index and a block of inner columns
#      (coalesced along inner); masked lanes read -inf; int64 offsets
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _max_dim_kernel(x_ptr, out_ptr, n_reduced, n_inner, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    # one flat grid axis (outer and inner blocks can each exceed the 65535 limit of the other axes)
    pid = tl.program_id(0).to(tl.int64)
    n_inner_blocks = tl.cdiv(n_inner, BLOCK_I)
    outer = pid // n_inner_blocks
    inner = (pid % n_inner_blocks) * BLOCK_I + tl.arange(0, BLOCK_I)
    rs = tl.arange(0, BLOCK_R)
    base = x_ptr + outer * n_reduced * n_inner
    best = tl.full([BLOCK_R, BLOCK_I], float("-inf"), tl.float32)
    for start in range(0, n_reduced, BLOCK_R):
        r = start + rs
        mask = (r[:, None] < n_reduced) & (inner[None, :] < n_inner)
        v = tl.load(base + r[:, None].to(tl.int64) * n_inner + inner[None, :], mask=mask, other=float("-inf"))
        best = tl.maximum(best, v.to(tl.float32))
    result = tl.max(best, axis=0)
    tl.store(out_ptr + outer * n_inner + inner, result.to(out_ptr.dtype.element_ty), mask=inner < n_inner)


class ModelNew(nn.Module):
    def __init__(self, reduce_dim):
        super().__init__()
        self.reduce_dim = reduce_dim

    def forward(self, x):
        x = x.contiguous()
        dim = self.reduce_dim % x.dim()
        n_reduced = x.shape[dim]
        n_outer = x.shape[:dim].numel()
        n_inner = x.shape[dim + 1:].numel()
        out = torch.empty(x.shape[:dim] + x.shape[dim + 1:], dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out
        block_i = min(max(triton.next_power_of_2(n_inner), 16), 128)
        block_r = min(max(triton.next_power_of_2(n_reduced), 1), max(4096 // block_i, 1))
        grid = (n_outer * triton.cdiv(n_inner, block_i),)
        _max_dim_kernel[grid](x, out, n_reduced, n_inner, BLOCK_R=block_r, BLOCK_I=block_i, num_warps=8)
        return out
