import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mean_pool_tanh_kernel(x_ptr, out_ptr, steps, channels, BLOCK_C: tl.constexpr):
    # grid: (batch, channel tiles); each program walks the time axis for BLOCK_C adjacent channels,
    # so every load is a contiguous run of channels
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = cols < channels
    ptrs = x_ptr + b * steps * channels + cols
    acc = tl.zeros([BLOCK_C], dtype=tl.float32)
    for _ in range(0, steps):
        acc += tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
        ptrs += channels
    m = acc / steps
    # tanh(m) = sign(m) * (1 - e) / (1 + e) with e = exp(-2|m|), which never overflows
    e = tl.exp(-2.0 * tl.abs(m))
    t = (1.0 - e) / (1.0 + e)
    y = tl.where(m < 0, -t, t)
    tl.store(out_ptr + b * channels + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        batch, steps, channels = x.shape
        out = torch.empty((batch, channels), dtype=x.dtype, device=x.device)
        if batch > 0 and channels > 0:
            block_c = min(triton.next_power_of_2(channels), 128)
            grid = (batch, triton.cdiv(channels, block_c))
            mean_pool_tanh_kernel[grid](x, out, steps, channels, BLOCK_C=block_c)
        return out
