"""Grouped-query causal attention with rotary embeddings gathered at int64 position ids from cached cos/sin tables."""
import torch
import torch.nn as nn

batch_size = 4
num_heads = 32
num_kv_heads = 8
seq_len = 1024
head_dim = 128
max_positions = 8192  # ~69 GFLOP attention, 537 MB score tensors, ~3.5 ms


def _rotate_half(t):
    a, b = t.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Model(nn.Module):
    def __init__(self, num_heads, num_kv_heads, head_dim, max_positions):
        super().__init__()
        self.groups = num_heads // num_kv_heads
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        angles = torch.outer(torch.arange(max_positions).float(), inv_freq)
        angles = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos_cached", angles.cos())
        self.register_buffer("sin_cached", angles.sin())

    def forward(self, q, k, v, position_ids):
        cos = self.cos_cached[position_ids].unsqueeze(1)  # (batch, 1, seq, head_dim)
        sin = self.sin_cached[position_ids].unsqueeze(1)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        k = k.repeat_interleave(self.groups, dim=1)
        v = v.repeat_interleave(self.groups, dim=1)
        s = q.shape[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
        mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    # distinct, increasing positions with uneven gaps: a uniform shift would cancel out of RoPE attention
    positions = torch.rand(batch_size, max_positions).argsort(dim=-1)[:, :seq_len].sort(dim=-1).values
    return [torch.randn(batch_size, num_heads, seq_len, head_dim),
            torch.randn(batch_size, num_kv_heads, seq_len, head_dim),
            torch.randn(batch_size, num_kv_heads, seq_len, head_dim),
            positions]


def get_init_inputs():
    return [num_heads, num_kv_heads, head_dim, max_positions]


# kerneljudge metadata
CATEGORY = "fusion-attention"
TAGS = ["llm"]
SMALL = {"batch_size": 2, "num_heads": 4, "num_kv_heads": 2, "seq_len": 16, "head_dim": 16, "max_positions": 64}
HELD_OUT = [{"batch_size": 3, "num_heads": 28, "num_kv_heads": 4, "seq_len": 1001, "head_dim": 96, "max_positions": 4099}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 6, "num_kv_heads": 2, "seq_len": 11, "head_dim": 10, "max_positions": 37}]
