"""Decode with a KV cache: index_copy new k/v into the caches at int64 positions, then grouped-query attention over the cache with a position mask."""
import torch
import torch.nn as nn

batch_size = 16
num_heads = 32
num_kv_heads = 8
new_tokens = 16
max_len = 4096
head_dim = 128  # memory bound: copies/reads of two 268 MB caches, ~1 ms


class Model(nn.Module):
    def __init__(self, num_heads, num_kv_heads):
        super().__init__()
        self.groups = num_heads // num_kv_heads

    def forward(self, q, k_new, v_new, k_cache, v_cache, positions):
        k = k_cache.index_copy(2, positions, k_new)
        v = v_cache.index_copy(2, positions, v_new)
        b, h, t, d = q.shape
        hkv = k.shape[1]
        qg = q.reshape(b, hkv, self.groups * t, d)  # query heads sharing a kv head, stacked
        scores = torch.matmul(qg, k.transpose(-2, -1)) * (d ** -0.5)
        key_pos = torch.arange(k.shape[2], device=q.device)
        visible = key_pos[None, :] <= positions.repeat(self.groups)[:, None]  # causal w.r.t. absolute position
        scores = scores.masked_fill(~visible, float("-inf"))
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        return out.reshape(b, h, t, d)


def get_inputs():
    start = torch.randint(0, max_len - new_tokens + 1, (1,))
    return [torch.randn(batch_size, num_heads, new_tokens, head_dim),
            torch.randn(batch_size, num_kv_heads, new_tokens, head_dim),
            torch.randn(batch_size, num_kv_heads, new_tokens, head_dim),
            torch.randn(batch_size, num_kv_heads, max_len, head_dim),
            torch.randn(batch_size, num_kv_heads, max_len, head_dim),
            start + torch.arange(new_tokens)]


def get_init_inputs():
    return [num_heads, num_kv_heads]


# kerneljudge metadata
CATEGORY = "fusion-attention"
TAGS = ["llm", "kv-cache"]
SMALL = {"batch_size": 2, "num_heads": 4, "num_kv_heads": 2, "new_tokens": 4, "max_len": 32, "head_dim": 16}
HELD_OUT = [{"batch_size": 13, "num_heads": 24, "num_kv_heads": 8, "new_tokens": 7, "max_len": 5001, "head_dim": 112}]
HELD_OUT_SMALL = [{"batch_size": 3, "num_heads": 6, "num_kv_heads": 2, "new_tokens": 3, "max_len": 21, "head_dim": 12}]
