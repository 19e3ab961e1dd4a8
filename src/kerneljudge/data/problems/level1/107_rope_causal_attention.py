"""RoPE on queries and keys (positions 0..seq-1), then causal scaled dot-product attention."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
num_heads = 16
seq_len = 2048
head_dim = 128  # ~137 GFLOP dense (half needed under the mask), ~4 ms; q/k/v/out 67 MB each
base = 10000.0


def apply_rope(x, cos, sin):
    d = x.shape[-1]
    rotated = torch.cat([-x[..., d // 2 :], x[..., : d // 2]], dim=-1)
    return x * cos + rotated * sin


class Model(nn.Module):
    def __init__(self, base):
        super().__init__()
        self.base = base

    def forward(self, q, k, v):
        # q, k, v: (batch, heads, seq, head_dim)
        s, d = q.shape[2], q.shape[3]
        inv_freq = 1.0 / (self.base ** (torch.arange(0, d, 2, device=q.device, dtype=torch.float32) / d))
        angles = torch.arange(s, device=q.device, dtype=torch.float32)[:, None] * inv_freq
        emb = torch.cat([angles, angles], dim=-1)  # (seq, head_dim)
        cos, sin = emb.cos().to(q.dtype), emb.sin().to(q.dtype)
        q = apply_rope(q, cos, sin)
        k = apply_rope(k, cos, sin)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [base]


# kerneljudge metadata
CATEGORY = "attention"
TAGS = ["llm", "rope", "causal", "fused"]
SMALL = {"batch_size": 2, "num_heads": 4, "seq_len": 128, "head_dim": 32}
HELD_OUT = [{"batch_size": 3, "num_heads": 12, "seq_len": 2043, "head_dim": 128}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 3, "seq_len": 83, "head_dim": 40}]
