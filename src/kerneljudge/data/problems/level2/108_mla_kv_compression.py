"""Multi-head latent attention KV path: down-projection to a latent plus a shared rope key, RMSNorm on the latent, up-projection to per-head keys and values."""
import torch
import torch.nn as nn

num_tokens = 8192
hidden = 2048
kv_rank = 512
rope_dim = 64
num_heads = 16
nope_dim = 128
v_dim = 128  # GEMMs 2048->576 and 512->4096: ~54 GFLOP, ~1.5 ms
eps = 1e-6


class Model(nn.Module):
    def __init__(self, hidden, kv_rank, rope_dim, num_heads, nope_dim, v_dim, eps):
        super().__init__()
        self.kv_rank, self.rope_dim = kv_rank, rope_dim
        self.h, self.nope_dim, self.v_dim = num_heads, nope_dim, v_dim
        self.kv_a_proj = nn.Linear(hidden, kv_rank + rope_dim, bias=False)
        self.kv_norm_weight = nn.Parameter(1.0 + 0.2 * torch.randn(kv_rank))
        self.kv_b_proj = nn.Linear(kv_rank, num_heads * (nope_dim + v_dim), bias=False)
        self.eps = eps

    def forward(self, x):
        t = x.shape[0]
        c, k_rope = self.kv_a_proj(x).split([self.kv_rank, self.rope_dim], dim=-1)
        c = c * torch.rsqrt(c.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.kv_norm_weight
        kv = self.kv_b_proj(c).view(t, self.h, self.nope_dim + self.v_dim)
        k_nope, v = kv.split([self.nope_dim, self.v_dim], dim=-1)
        k = torch.cat([k_nope, k_rope[:, None, :].expand(t, self.h, self.rope_dim)], dim=-1)
        return torch.cat([k, v], dim=-1)  # (tokens, heads, nope_dim + rope_dim + v_dim)


def get_inputs():
    return [torch.randn(num_tokens, hidden)]


def get_init_inputs():
    return [hidden, kv_rank, rope_dim, num_heads, nope_dim, v_dim, eps]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm"]
SMALL = {"num_tokens": 16, "hidden": 64, "kv_rank": 32, "rope_dim": 8, "num_heads": 2, "nope_dim": 16, "v_dim": 16}
HELD_OUT = [{"num_tokens": 6001, "hidden": 2047, "kv_rank": 500, "rope_dim": 48, "num_heads": 12, "nope_dim": 120, "v_dim": 100}]
HELD_OUT_SMALL = [{"num_tokens": 7, "hidden": 29, "kv_rank": 19, "rope_dim": 6, "num_heads": 3, "nope_dim": 10, "v_dim": 7}]
