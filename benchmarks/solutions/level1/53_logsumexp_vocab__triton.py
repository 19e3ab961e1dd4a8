# problem: level1/53_logsumexp_vocab.py
# kind: reduction (logsumexp)
# why: one program per row, a single online pass: per-lane running max and rescaled sum over 4096-wide masked
#      chunks, combined at the end as max + log(sum); the logits are read exactly once
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _logsumexp_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        v = tl.load(x_row + c, mask=c < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, v)
        s = tl.where(m_new > float("-inf"), s * tl.exp(m - m_new) + tl.exp(v - m_new), 0.0)
        m = m_new
    row_max = tl.max(m, axis=0)
    lse = row_max + tl.log(tl.sum(s * tl.exp(m - row_max), axis=0))
    tl.store(out_ptr + row, lse.to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits):
        x = logits.contiguous()
        n_cols = x.shape[-1]
        out = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
        if out.numel() == 0 or n_cols == 0:
            return out.fill_(float("-inf"))
        block = min(triton.next_power_of_2(n_cols), 4096)
        _logsumexp_kernel[(out.numel(),)](x, out, n_cols, BLOCK=block, num_warps=8)
        return out
