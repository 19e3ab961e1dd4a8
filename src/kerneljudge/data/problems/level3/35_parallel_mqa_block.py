"""Falcon-style parallel decoder block: one LayerNorm feeds both causal multi-query attention (single shared K/V head,
rotary embeddings) and a GELU MLP; x + attn + mlp."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
seq_len = 1024
hidden = 2048
num_heads = 32       # ~380 GFLOP; ~10.0 ms on an H200 (eager fp32, no TF32); ~2.3 GB peak


def rope(x, theta=10000.0):
    t, hd = x.shape[-2], x.shape[-1]
    inv = 1.0 / theta ** (torch.arange(0, hd, 2, device=x.device, dtype=torch.float32) / hd)
    ang = torch.arange(t, device=x.device, dtype=torch.float32)[:, None] * inv
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class Model(nn.Module):
    def __init__(self, hidden, num_heads):
        super().__init__()
        self.h, self.hd = num_heads, hidden // num_heads
        self.ln = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, hidden + 2 * self.hd, bias=False)   # all query heads + one K and one V head
        self.dense = nn.Linear(hidden, hidden, bias=False)
        self.fc1 = nn.Linear(hidden, 4 * hidden, bias=False)
        self.fc2 = nn.Linear(4 * hidden, hidden, bias=False)
        nn.init.normal_(self.qkv.weight, 0.0, (2.0 / hidden) ** 0.5)
        for lin in (self.fc1, self.fc2):   # unit-scale MLP branch
            nn.init.normal_(lin.weight, 0.0, lin.in_features ** -0.5)

    def forward(self, x):
        b, t, d = x.shape
        h = self.ln(x)
        q, k, v = self.qkv(h).split([d, self.hd, self.hd], dim=-1)
        q = rope(q.view(b, t, self.h, self.hd).transpose(1, 2))     # (B, H, T, hd)
        k = rope(k.unsqueeze(1))                                     # (B, 1, T, hd) shared by all heads
        s = q @ k.transpose(-2, -1) / math.sqrt(self.hd)
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        att = torch.softmax(s.masked_fill(causal, float("-inf")), dim=-1)
        a = (att @ v.unsqueeze(1)).transpose(1, 2).reshape(b, t, d)
        return x + self.dense(a) + self.fc2(F.gelu(self.fc1(h)))


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden, num_heads]


CATEGORY = "transformer"
TAGS = ["llm", "falcon", "parallel-block", "mqa", "attention", "causal", "rope", "layernorm", "gelu"]
SMALL = {"batch_size": 2, "seq_len": 32, "hidden": 64, "num_heads": 4}
HELD_OUT = [{"batch_size": 3, "seq_len": 999}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 27, "hidden": 96, "num_heads": 6}]
# low precision: the reference itself is off fp32 by bf16 0.004 rel_l2, 0.02 elementwise; fp16 0.002 rel_l2, 0.008 elementwise
TOLERANCE = {"bf16": {"atol": 0.05, "rtol": 0.05, "rel_l2": 0.02}, "fp16": {"atol": 0.02, "rtol": 0.02, "rel_l2": 0.004}}
