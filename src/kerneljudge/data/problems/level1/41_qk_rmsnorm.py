"""Per-head RMSNorm on query/key heads (QK-norm): normalise each head_dim vector of (batch, seq, heads, head_dim)."""
import torch
import torch.nn as nn

batch_size = 8
seq_len = 4096
num_heads = 32
head_dim = 128  # q 0.5 GiB; eager RMSNorm: ~3.2 GB moved, ~1.3 ms, peak 2 GiB


class Model(nn.Module):
    def __init__(self, head_dim):
        super().__init__()
        self.eps = 1e-6
        self.weight = nn.Parameter(1.0 + 0.3 * torch.randn(head_dim))

    def forward(self, q):
        h = q.float()
        h = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return self.weight * h.to(q.dtype)


def get_inputs():
    # each head vector gets its own scale
    scale = 0.25 + 3.0 * torch.rand(batch_size, seq_len, num_heads, 1)
    return [torch.randn(batch_size, seq_len, num_heads, head_dim).mul_(scale)]


def get_init_inputs():
    return [head_dim]


# kerneljudge metadata
CATEGORY = "norm"
TAGS = ["llm"]
SMALL = {"batch_size": 2, "seq_len": 16, "num_heads": 4, "head_dim": 64}
HELD_OUT = [{"batch_size": 3, "seq_len": 7001, "num_heads": 40, "head_dim": 128}, {"batch_size": 9, "seq_len": 3001, "num_heads": 28, "head_dim": 96}]
HELD_OUT_SMALL = [{"batch_size": 1, "seq_len": 13, "num_heads": 3, "head_dim": 80}]
