"""Multi-query attention decode step: one query token per sequence against a single shared KV head with ragged int64 lengths, then the output projection."""
import torch
import torch.nn as nn

batch_size = 64
num_heads = 32
head_dim = 128
cache_len = 16384  # memory bound: reads a 1.07 GB K/V cache, ~1 ms


class Model(nn.Module):
    def __init__(self, num_heads, head_dim):
        super().__init__()
        self.o_proj = nn.Linear(num_heads * head_dim, num_heads * head_dim, bias=False)

    def forward(self, q, k_cache, v_cache, lengths):
        b, h, d = q.shape
        scores = torch.einsum("bhd,bsd->bhs", q, k_cache) * (d ** -0.5)
        valid = torch.arange(k_cache.shape[1], device=q.device)[None, :] < lengths[:, None]
        scores = scores.masked_fill(~valid[:, None, :], float("-inf"))
        out = torch.einsum("bhs,bsd->bhd", torch.softmax(scores, dim=-1), v_cache)
        return self.o_proj(out.reshape(b, h * d))


def get_inputs():
    return [torch.randn(batch_size, num_heads, head_dim),
            torch.randn(batch_size, cache_len, head_dim),
            torch.randn(batch_size, cache_len, head_dim),
            torch.randint(1, cache_len + 1, (batch_size,))]


def get_init_inputs():
    return [num_heads, head_dim]


# kerneljudge metadata
CATEGORY = "fusion-attention"
TAGS = ["llm", "decode"]
SMALL = {"batch_size": 3, "num_heads": 4, "head_dim": 16, "cache_len": 64}
HELD_OUT = [{"batch_size": 61, "num_heads": 28, "head_dim": 96, "cache_len": 16001}]
HELD_OUT_SMALL = [{"batch_size": 2, "num_heads": 3, "head_dim": 12, "cache_len": 37}]
