"""Swin-style window attention: QKV projection, scaled scores plus a gathered relative-position bias, softmax, values, output projection."""
import torch
import torch.nn as nn

num_windows = 2048
window = 8
dim = 128
num_heads = 4  # 64-token windows: ~17 GFLOP GEMMs + 134 MB score tensors, ~1.5 ms


class Model(nn.Module):
    def __init__(self, dim, num_heads, window):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.bias_table = nn.Parameter(0.5 * torch.randn((2 * window - 1) ** 2, num_heads))
        ys, xs = torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij")
        coords = torch.stack([ys.flatten(), xs.flatten()])            # (2, T)
        rel = coords[:, :, None] - coords[:, None, :] + (window - 1)  # (2, T, T)
        self.register_buffer("rel_index", rel[0] * (2 * window - 1) + rel[1])

    def forward(self, x):
        b, t, c = x.shape
        h = self.num_heads
        q, k, v = self.qkv(x).view(b, t, 3, h, c // h).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) * (c // h) ** -0.5
        bias = self.bias_table[self.rel_index.view(-1)].view(t, t, h).permute(2, 0, 1)
        attn = torch.softmax(scores + bias, dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, t, c))


def get_inputs():
    return [torch.randn(num_windows, window * window, dim)]


def get_init_inputs():
    return [dim, num_heads, window]


# kerneljudge metadata
CATEGORY = "fusion-attention"
TAGS = ["vision"]
SMALL = {"num_windows": 4, "window": 4, "dim": 32, "num_heads": 2}
HELD_OUT = [{"num_windows": 2999, "window": 7, "dim": 96, "num_heads": 3}]
HELD_OUT_SMALL = [{"num_windows": 3, "window": 3, "dim": 24, "num_heads": 3}]
