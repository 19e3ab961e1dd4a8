"""Fused QKV projection for grouped-query attention, split into heads, rotary embedding on q and k from given cos/sin tables."""
import torch
import torch.nn as nn

batch_size = 4
seq_len = 2048
hidden = 2048
num_heads = 16
num_kv_heads = 4
head_dim = 128  # QKV GEMM to 3072 features: ~103 GFLOP, ~2.5 ms


def _rotate_half(t):
    a, b = t.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Model(nn.Module):
    def __init__(self, hidden, num_heads, num_kv_heads, head_dim):
        super().__init__()
        self.h, self.hkv, self.d = num_heads, num_kv_heads, head_dim
        self.qkv_proj = nn.Linear(hidden, (num_heads + 2 * num_kv_heads) * head_dim, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        qkv = self.qkv_proj(x).view(b, s, self.h + 2 * self.hkv, self.d).transpose(1, 2)
        q, k, v = qkv.split([self.h, self.hkv, self.hkv], dim=1)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        return torch.cat([q, k, v], dim=1)  # (batch, heads + 2 * kv_heads, seq, head_dim)


def get_inputs():
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(seq_len).float(), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)
    return [torch.randn(batch_size, seq_len, hidden), angles.cos(), angles.sin()]


def get_init_inputs():
    return [hidden, num_heads, num_kv_heads, head_dim]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm"]
SMALL = {"batch_size": 2, "seq_len": 16, "hidden": 64, "num_heads": 4, "num_kv_heads": 2, "head_dim": 16}
HELD_OUT = [{"batch_size": 3, "seq_len": 2001, "hidden": 2050, "num_heads": 12, "num_kv_heads": 3, "head_dim": 96}]
HELD_OUT_SMALL = [{"batch_size": 1, "seq_len": 11, "hidden": 37, "num_heads": 3, "num_kv_heads": 1, "head_dim": 10}]
