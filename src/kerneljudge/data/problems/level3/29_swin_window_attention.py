"""Two Swin Transformer blocks: window multi-head attention with relative position bias, then the shifted-window variant
(cyclic shift + region mask), each followed by a GELU MLP; pre-norm with residuals on a (B, H, W, C) feature map."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
height = 56
width = 56
channels = 96
num_heads = 3
window = 7           # ~48 GFLOP; ~3.6 ms on an H200 (eager fp32, no TF32); ~0.7 GB peak


class SwinBlock(nn.Module):
    def __init__(self, dim, heads, window, shift):
        super().__init__()
        self.h, self.w, self.shift = heads, window, shift
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.bias_table = nn.Parameter(0.5 * torch.randn((2 * window - 1) ** 2, heads))
        r = torch.arange(window)
        coords = torch.stack(torch.meshgrid(r, r, indexing="ij")).flatten(1)      # (2, w*w)
        rel = coords[:, :, None] - coords[:, None, :] + window - 1
        self.register_buffer("rel_index", rel[0] * (2 * window - 1) + rel[1], persistent=False)

    def _windows(self, t, b, hh, ww, c):
        w = self.w
        return t.view(b, hh // w, w, ww // w, w, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, w * w, c)

    def forward(self, x):
        b, hh, ww, c = x.shape
        w, s, n = self.w, self.shift, self.w * self.w
        y = self.norm1(x)
        if s:
            y = torch.roll(y, (-s, -s), dims=(1, 2))
        y = self._windows(y, b, hh, ww, c)
        q, k, v = self.qkv(y).view(-1, n, 3, self.h, c // self.h).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) * (c // self.h) ** -0.5
        att = att + self.bias_table[self.rel_index].permute(2, 0, 1)
        if s:  # tokens from different regions of the rolled map must not attend to each other
            region = torch.zeros(hh, ww, device=x.device)
            cnt = 0
            for hs in (slice(0, -w), slice(-w, -s), slice(-s, None)):
                for ws in (slice(0, -w), slice(-w, -s), slice(-s, None)):
                    region[hs, ws] = cnt
                    cnt += 1
            region = self._windows(region.view(1, hh, ww, 1), 1, hh, ww, 1).squeeze(-1)   # (nW, n)
            blocked = region[:, :, None] != region[:, None, :]
            att = att.view(b, -1, self.h, n, n).masked_fill(blocked[None, :, None], float("-inf")).view(-1, self.h, n, n)
        y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(-1, n, c)
        y = self.proj(y).view(b, hh // w, ww // w, w, w, c).permute(0, 1, 3, 2, 4, 5).reshape(b, hh, ww, c)
        if s:
            y = torch.roll(y, (s, s), dims=(1, 2))
        x = x + y
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class Model(nn.Module):
    def __init__(self, channels, num_heads, window):
        super().__init__()
        self.blocks = nn.Sequential(SwinBlock(channels, num_heads, window, 0),
                                    SwinBlock(channels, num_heads, window, window // 2))

    def forward(self, x):
        return self.blocks(x)


def get_inputs():
    return [torch.randn(batch_size, height, width, channels)]


def get_init_inputs():
    return [channels, num_heads, window]


CATEGORY = "transformer"
TAGS = ["swin", "window-attention", "vision", "relative-position-bias", "layernorm"]
SMALL = {"batch_size": 2, "height": 8, "width": 12, "channels": 32, "num_heads": 2, "window": 4}
HELD_OUT = [{"batch_size": 19, "height": 63, "width": 49}]
HELD_OUT_SMALL = [{"batch_size": 3, "height": 15, "width": 10, "channels": 24, "num_heads": 3, "window": 5}]
