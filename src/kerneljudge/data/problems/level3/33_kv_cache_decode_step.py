"""One decode step of a Llama-style layer with a KV cache: project the new token, apply RoPE at position L, append its
key/value to the cache, attend over all L+1 positions (grouped-query, no head expansion), then the SwiGLU MLP."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
cache_len = 4096
hidden = 2048
num_heads = 16
num_kv_heads = 4
intermediate = 5632  # memory bound: ~4.0 GFLOP; ~2.0 ms on an H200 (eager fp32, no TF32); ~4.0 GB peak


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(d))

    def forward(self, x):
        xf = x.float()
        return self.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)


def rope_at(x, pos, theta=10000.0):
    hd = x.shape[-1]
    inv = 1.0 / theta ** (torch.arange(0, hd, 2, device=x.device, dtype=torch.float32) / hd)
    ang = float(pos) * inv
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class Model(nn.Module):
    def __init__(self, hidden, num_heads, num_kv_heads, intermediate):
        super().__init__()
        self.h, self.kvh, self.hd = num_heads, num_kv_heads, hidden // num_heads
        self.attn_norm = RMSNorm(hidden)
        self.q_proj = nn.Linear(hidden, num_heads * self.hd, bias=False)
        self.k_proj = nn.Linear(hidden, num_kv_heads * self.hd, bias=False)
        self.v_proj = nn.Linear(hidden, num_kv_heads * self.hd, bias=False)
        self.o_proj = nn.Linear(num_heads * self.hd, hidden, bias=False)
        self.mlp_norm = RMSNorm(hidden)
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)
        for lin in (self.gate_proj, self.up_proj, self.down_proj):   # unit-scale MLP branch
            nn.init.normal_(lin.weight, 0.0, lin.in_features ** -0.5)
        for lin in (self.q_proj, self.k_proj, self.v_proj):
            nn.init.normal_(lin.weight, 0.0, (2.0 / hidden) ** 0.5)

    def forward(self, x, k_cache, v_cache):
        # x: (B, 1, hidden); caches: (B, kv_heads, L, head_dim) holding positions 0..L-1
        b, pos = x.shape[0], k_cache.shape[2]
        g = self.h // self.kvh
        h = self.attn_norm(x)
        q = rope_at(self.q_proj(h).view(b, self.kvh, g, self.hd), pos)          # (B, kvh, g, hd)
        k_new = rope_at(self.k_proj(h).view(b, self.kvh, 1, self.hd), pos)
        v_new = self.v_proj(h).view(b, self.kvh, 1, self.hd)
        k = torch.cat([k_cache, k_new], dim=2)
        v = torch.cat([v_cache, v_new], dim=2)
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.hd), dim=-1)   # (B, kvh, g, L+1)
        x = x + self.o_proj((att @ v).reshape(b, 1, -1))
        h = self.mlp_norm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


def get_inputs():
    hd = hidden // num_heads
    return [torch.randn(batch_size, 1, hidden),
            torch.randn(batch_size, num_kv_heads, cache_len, hd),
            torch.randn(batch_size, num_kv_heads, cache_len, hd)]


def get_init_inputs():
    return [hidden, num_heads, num_kv_heads, intermediate]


CATEGORY = "transformer"
TAGS = ["llm", "llama", "decode", "kv-cache", "attention", "gqa", "rope", "rmsnorm", "swiglu", "memory-bound"]
SMALL = {"batch_size": 2, "cache_len": 40, "hidden": 64, "num_heads": 4, "num_kv_heads": 2, "intermediate": 160}
HELD_OUT = [{"batch_size": 27, "cache_len": 3071}]
HELD_OUT_SMALL = [{"batch_size": 3, "cache_len": 29, "hidden": 96, "num_heads": 6, "num_kv_heads": 3, "intermediate": 200}]
# low precision: the reference itself is off fp32 by fp16 0.002 rel_l2, 0.007 elementwise
TOLERANCE = {"fp16": {"atol": 0.015, "rtol": 0.015, "rel_l2": 0.005}}
