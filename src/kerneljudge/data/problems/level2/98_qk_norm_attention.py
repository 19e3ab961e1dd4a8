"""Causal attention with per-head QK-norm: RMSNorm over head_dim on q and k (learned weights), scores, mask, softmax, values."""
import torch
import torch.nn as nn

batch_size = 4
num_heads = 16
seq_len = 1024
head_dim = 128  # ~34 GFLOP, 268 MB score tensors, ~2 ms
eps = 1e-6


class Model(nn.Module):
    def __init__(self, head_dim, eps):
        super().__init__()
        self.q_weight = nn.Parameter(1.0 + 0.2 * torch.randn(head_dim))
        self.k_weight = nn.Parameter(1.0 + 0.2 * torch.randn(head_dim))
        self.eps = eps

    def _rms(self, t, w):
        return t * torch.rsqrt(t.pow(2).mean(dim=-1, keepdim=True) + self.eps) * w

    def forward(self, q, k, v):
        q = self._rms(q, self.q_weight)
        k = self._rms(k, self.k_weight)
        s, d = q.shape[2], q.shape[3]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (d ** -0.5)
        mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape) * 3.0, torch.randn(shape) * 0.5, torch.randn(shape)]


def get_init_inputs():
    return [head_dim, eps]


# kerneljudge metadata
CATEGORY = "fusion-attention"
TAGS = ["llm"]
SMALL = {"batch_size": 2, "num_heads": 2, "seq_len": 16, "head_dim": 16}
HELD_OUT = [{"batch_size": 3, "num_heads": 12, "seq_len": 1021, "head_dim": 80}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 3, "seq_len": 13, "head_dim": 12}]
