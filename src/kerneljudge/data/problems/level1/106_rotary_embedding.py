"""Rotary position embedding (RoPE, rotate-half form) applied to a (batch, seq, heads, head_dim) tensor at given int64 positions."""
import torch
import torch.nn as nn

batch_size = 8
seq_len = 2048
num_heads = 32
head_dim = 128  # x/out 1.07 GB each; memory-bound, eager ~5 passes, ~2 ms
base = 10000.0


class Model(nn.Module):
    def __init__(self, base):
        super().__init__()
        self.base = base

    def forward(self, x, position_ids):
        # x: (batch, seq, heads, head_dim); position_ids: (batch, seq) int64
        d = x.shape[-1]
        inv_freq = 1.0 / (self.base ** (torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d))
        angles = position_ids.float()[..., None] * inv_freq  # (batch, seq, d/2), in fp32
        emb = torch.cat([angles, angles], dim=-1)
        cos = emb.cos().to(x.dtype)[:, :, None, :]
        sin = emb.sin().to(x.dtype)[:, :, None, :]
        x1, x2 = x[..., : d // 2], x[..., d // 2 :]
        rotated = torch.cat([-x2, x1], dim=-1)
        return x * cos + rotated * sin


def get_inputs():
    x = torch.randn(batch_size, seq_len, num_heads, head_dim)
    # each sequence continues from its own offset (e.g. chunked prefill)
    position_ids = torch.randint(0, 2048, (batch_size, 1)) + torch.arange(seq_len)[None, :]
    return [x, position_ids]


def get_init_inputs():
    return [base]


# kerneljudge metadata
CATEGORY = "attention"
TAGS = ["llm", "rope", "positional"]
SMALL = {"batch_size": 2, "seq_len": 128, "num_heads": 4, "head_dim": 64}
HELD_OUT = [{"batch_size": 7, "seq_len": 2047, "num_heads": 28, "head_dim": 128}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 77, "num_heads": 3, "head_dim": 40}]
