"""Decode attention over an int8 KV cache: dequantise k and v with per-token scales, grouped-query scores, softmax, values."""
import torch
import torch.nn as nn

batch_size = 16
num_heads = 32
num_kv_heads = 8
cache_len = 8192
head_dim = 128  # memory bound: 2 x 134 MB int8 caches dequantised to 2 x 537 MB, ~1.5 ms


class Model(nn.Module):
    def __init__(self, num_heads, num_kv_heads):
        super().__init__()
        self.groups = num_heads // num_kv_heads

    def forward(self, q, k_q, v_q, k_scale, v_scale):
        b, h, d = q.shape
        k = k_q.to(q.dtype) * k_scale  # (batch, kv_heads, cache_len, head_dim)
        v = v_q.to(q.dtype) * v_scale
        qg = q.view(b, k.shape[1], self.groups, d)
        scores = torch.matmul(qg, k.transpose(-2, -1)) * (d ** -0.5)
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        return out.reshape(b, h, d)


def get_inputs():
    cache = (batch_size, num_kv_heads, cache_len, head_dim)
    scale = (batch_size, num_kv_heads, cache_len, 1)
    return [torch.randn(batch_size, num_heads, head_dim),
            torch.randint(-127, 128, cache, dtype=torch.int8),
            torch.randint(-127, 128, cache, dtype=torch.int8),
            (0.5 + torch.rand(scale)) * 0.02,
            (0.5 + torch.rand(scale)) * 0.02]


def get_init_inputs():
    return [num_heads, num_kv_heads]


# kerneljudge metadata
CATEGORY = "fusion-attention"
TAGS = ["llm", "quantization", "decode"]
SMALL = {"batch_size": 2, "num_heads": 4, "num_kv_heads": 2, "cache_len": 64, "head_dim": 16}
HELD_OUT = [{"batch_size": 13, "num_heads": 24, "num_kv_heads": 8, "cache_len": 8001, "head_dim": 112}]
HELD_OUT_SMALL = [{"batch_size": 3, "num_heads": 6, "num_kv_heads": 2, "cache_len": 37, "head_dim": 12}]
