# problem: level1/90_cross_entropy.py
# kind: loss (per-sample cross-entropy)
# why: one program per token: a single online max/sum pass over the logits gives logsumexp, minus the logit of
#      the target (one gathered load, guarded to the row); targets equal to -100 (torch's ignore_index) give 0
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _cross_entropy_kernel(x_ptr, target_ptr, out_ptr, n_classes, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_classes
    cols = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_classes, BLOCK):
        c = start + cols
        v = tl.load(x_row + c, mask=c < n_classes, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, v)
        s = tl.where(m_new > float("-inf"), s * tl.exp(m - m_new) + tl.exp(v - m_new), 0.0)
        m = m_new
    row_max = tl.max(m, axis=0)
    lse = row_max + tl.log(tl.sum(s * tl.exp(m - row_max), axis=0))
    target = tl.load(target_ptr + row)
    valid = (target >= 0) & (target < n_classes)
    picked = tl.load(x_row + tl.where(valid, target, 0)).to(tl.float32)
    loss = tl.where(target == -100, 0.0, lse - picked)
    tl.store(out_ptr + row, loss.to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        x = logits.contiguous()
        targets = targets.contiguous()
        n_classes = x.shape[-1]
        out = torch.empty(x.shape[0], dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out
        block = min(triton.next_power_of_2(n_classes), 4096)
        _cross_entropy_kernel[(out.numel(),)](x, targets, out, n_classes, BLOCK=block, num_warps=8)
        return out
