"""Decode-step attention: one new query token per sequence against a long GQA KV cache with per-sequence valid lengths."""
import torch
import torch.nn as nn

batch_size = 32
num_heads = 32
num_kv_heads = 8
cache_len = 8192
head_dim = 128  # K and V caches 1.07 GB each; memory-bound, ~0.6 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k_cache, v_cache, cache_lens):
        # q: (batch, heads, head_dim); k_cache, v_cache: (batch, kv_heads, cache_len, head_dim)
        # cache_lens: (batch,) int64, number of valid cache entries of each sequence (>= 1)
        b, h, d = q.shape
        kv_heads, length = k_cache.shape[1], k_cache.shape[2]
        qg = q.view(b, kv_heads, h // kv_heads, d)
        scores = torch.matmul(qg, k_cache.transpose(-1, -2)) * d ** -0.5  # (b, kv_heads, group, length)
        valid = torch.arange(length, device=q.device)[None, :] < cache_lens[:, None]
        scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
        out = torch.matmul(torch.softmax(scores, dim=-1), v_cache)  # (b, kv_heads, group, d)
        return out.reshape(b, h, d)


def get_inputs():
    # queries scaled by 2: peakier attention, as in trained models (outputs are not a near-uniform average)
    q = 2.0 * torch.randn(batch_size, num_heads, head_dim)
    k_cache = torch.randn(batch_size, num_kv_heads, cache_len, head_dim)
    v_cache = torch.randn(batch_size, num_kv_heads, cache_len, head_dim)
    cache_lens = torch.randint(cache_len // 4, cache_len + 1, (batch_size,))
    return [q, k_cache, v_cache, cache_lens]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "attention"
TAGS = ["llm", "decode", "kv-cache", "gqa"]
SMALL = {"batch_size": 4, "num_heads": 8, "num_kv_heads": 2, "cache_len": 512, "head_dim": 64}
HELD_OUT = [{"batch_size": 29, "num_heads": 32, "num_kv_heads": 8, "cache_len": 8191, "head_dim": 128}]
HELD_OUT_SMALL = [{"batch_size": 3, "num_heads": 6, "num_kv_heads": 2, "cache_len": 301, "head_dim": 40}]
