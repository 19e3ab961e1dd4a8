"""Sliding-window causal attention (window 512, Mistral-style) given as an explicit boolean mask."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
num_heads = 16
seq_len = 4096
head_dim = 64  # ~275 GFLOP if computed densely (~1/8 needed inside the window), ~10 ms; q/k/v/out 67 MB each, mask 17 MB
window = 512


class Model(nn.Module):
    def __init__(self, window):
        super().__init__()
        self.window = window

    def forward(self, q, k, v):
        # q, k, v: (batch, heads, seq, head_dim); query i sees keys j with i - window < j <= i
        pos = torch.arange(q.shape[2], device=q.device)
        dist = pos[:, None] - pos[None, :]
        mask = (dist >= 0) & (dist < self.window)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [window]


# kerneljudge metadata
CATEGORY = "attention"
TAGS = ["llm", "sliding-window", "causal", "mask"]
SMALL = {"batch_size": 2, "num_heads": 4, "seq_len": 256, "head_dim": 32, "window": 64}
HELD_OUT = [{"batch_size": 3, "num_heads": 16, "seq_len": 4093, "head_dim": 64, "window": 509}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 3, "seq_len": 201, "head_dim": 24, "window": 37}]
