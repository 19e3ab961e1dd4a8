"""Retention (parallel form): q k^T scaled, times a causal per-head exponential decay mask, normalised by the clamped absolute row sum, times v."""
import torch
import torch.nn as nn

batch_size = 4
num_heads = 16
seq_len = 1024
head_dim = 128  # ~34 GFLOP, 268 MB score tensors, ~2 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        h, s, d = q.shape[1], q.shape[2], q.shape[3]
        log_gamma = torch.log1p(-torch.exp2(-5.0 - torch.arange(h, device=q.device, dtype=torch.float32)))
        pos = torch.arange(s, device=q.device, dtype=torch.float32)
        dist = pos[:, None] - pos[None, :]  # i - j
        decay = torch.exp(log_gamma[:, None, None] * dist.clamp(min=0)) * (dist >= 0)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (d ** -0.5) * decay.to(q.dtype)
        scores = scores / scores.abs().sum(dim=-1, keepdim=True).clamp(min=1.0)
        return torch.matmul(scores, v)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "fusion-attention"
TAGS = ["llm"]
SMALL = {"batch_size": 2, "num_heads": 4, "seq_len": 32, "head_dim": 16}
HELD_OUT = [{"batch_size": 3, "num_heads": 12, "seq_len": 1021, "head_dim": 80}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 3, "seq_len": 13, "head_dim": 12}]
