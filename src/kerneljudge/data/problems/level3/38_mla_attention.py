"""DeepSeek-V2-style multi-head latent attention (MLA) block: low-rank query and key/value compression with RMSNorm,
decoupled rotary key shared by all heads, causal attention, output projection and residual (pre-RMSNorm)."""
import math
import torch
import torch.nn as nn

batch_size = 4
seq_len = 1024
hidden = 2048
num_heads = 16
q_rank = 768
kv_rank = 512
nope_dim = 128
rope_dim = 64
v_dim = 128          # ~136 GFLOP; ~4.3 ms on an H200 (eager fp32, no TF32); ~1.3 GB peak


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(d))

    def forward(self, x):
        xf = x.float()
        return self.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)


def rope(x, theta=10000.0):
    t, hd = x.shape[-2], x.shape[-1]
    inv = 1.0 / theta ** (torch.arange(0, hd, 2, device=x.device, dtype=torch.float32) / hd)
    ang = torch.arange(t, device=x.device, dtype=torch.float32)[:, None] * inv
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class Model(nn.Module):
    def __init__(self, hidden, num_heads, q_rank, kv_rank, nope_dim, rope_dim, v_dim):
        super().__init__()
        self.h, self.nope, self.rope, self.vd, self.kv_rank = num_heads, nope_dim, rope_dim, v_dim, kv_rank
        self.norm = RMSNorm(hidden)
        self.q_down = nn.Linear(hidden, q_rank, bias=False)
        self.q_norm = RMSNorm(q_rank)
        self.q_up = nn.Linear(q_rank, num_heads * (nope_dim + rope_dim), bias=False)
        self.kv_down = nn.Linear(hidden, kv_rank + rope_dim, bias=False)
        self.kv_norm = RMSNorm(kv_rank)
        self.kv_up = nn.Linear(kv_rank, num_heads * (nope_dim + v_dim), bias=False)
        self.o_proj = nn.Linear(num_heads * v_dim, hidden, bias=False)
        nn.init.normal_(self.o_proj.weight, 0.0, (num_heads * v_dim) ** -0.5)
        for lin in (self.q_down, self.q_up, self.kv_down, self.kv_up):   # peaky, non-uniform attention
            nn.init.normal_(lin.weight, 0.0, (2.0 / lin.in_features) ** 0.5)

    def forward(self, x):
        b, t, _ = x.shape
        h = self.norm(x)
        q = self.q_up(self.q_norm(self.q_down(h))).view(b, t, self.h, -1).transpose(1, 2)
        q_nope, q_pe = q.split([self.nope, self.rope], dim=-1)
        c_kv, k_pe = self.kv_down(h).split([self.kv_rank, self.rope], dim=-1)
        kv = self.kv_up(self.kv_norm(c_kv)).view(b, t, self.h, -1).transpose(1, 2)
        k_nope, v = kv.split([self.nope, self.vd], dim=-1)
        k_pe = rope(k_pe.unsqueeze(1)).expand(b, self.h, t, self.rope)
        q = torch.cat([q_nope, rope(q_pe)], dim=-1)
        k = torch.cat([k_nope, k_pe], dim=-1)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.nope + self.rope)
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        att = torch.softmax(s.masked_fill(causal, float("-inf")), dim=-1)
        return x + self.o_proj((att @ v).transpose(1, 2).reshape(b, t, -1))


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden, num_heads, q_rank, kv_rank, nope_dim, rope_dim, v_dim]


CATEGORY = "transformer"
TAGS = ["llm", "deepseek", "mla", "attention", "causal", "rope", "rmsnorm", "low-rank"]
SMALL = {"batch_size": 2, "seq_len": 32, "hidden": 64, "num_heads": 4, "q_rank": 32, "kv_rank": 24, "nope_dim": 16,
         "rope_dim": 8, "v_dim": 16}
HELD_OUT = [{"batch_size": 3, "seq_len": 1001, "num_heads": 12}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 27, "hidden": 48, "num_heads": 3, "q_rank": 20, "kv_rank": 18,
                   "nope_dim": 12, "rope_dim": 6, "v_dim": 10}]
# low precision: the reference itself is off fp32 by bf16 0.006 rel_l2, 0.04 elementwise; fp16 0.003 rel_l2, 0.02 elementwise
TOLERANCE = {"bf16": {"atol": 0.08, "rtol": 0.08, "rel_l2": 0.02}, "fp16": {"atol": 0.05, "rtol": 0.05, "rel_l2": 0.008}}
