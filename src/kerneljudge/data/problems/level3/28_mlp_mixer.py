"""MLP-Mixer: patch embedding, then layers of token-mixing and channel-mixing GELU MLPs with LayerNorm, pooled head."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
image_size = 224
patch_size = 16
d_model = 512
token_dim = 256
channel_dim = 2048
depth = 8
num_classes = 1000   # ~242 GFLOP; ~7.8 ms on an H200 (eager fp32, no TF32); ~0.3 GB peak


class MixerLayer(nn.Module):
    def __init__(self, n, d, dt, dc):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.tok1 = nn.Linear(n, dt)
        self.tok2 = nn.Linear(dt, n)
        self.ln2 = nn.LayerNorm(d)
        self.ch1 = nn.Linear(d, dc)
        self.ch2 = nn.Linear(dc, d)

    def forward(self, x):
        y = self.ln1(x).transpose(1, 2)                      # mix along the token axis
        x = x + self.tok2(F.gelu(self.tok1(y))).transpose(1, 2)
        return x + self.ch2(F.gelu(self.ch1(self.ln2(x))))


class Model(nn.Module):
    def __init__(self, image_size, patch_size, d_model, token_dim, channel_dim, depth, num_classes):
        super().__init__()
        n = (image_size // patch_size) ** 2
        self.patch = nn.Conv2d(3, d_model, patch_size, stride=patch_size)
        self.layers = nn.Sequential(*[MixerLayer(n, d_model, token_dim, channel_dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, img):
        x = self.patch(img).flatten(2).transpose(1, 2)
        x = self.norm(self.layers(x))
        return self.head(x.mean(dim=1))


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [image_size, patch_size, d_model, token_dim, channel_dim, depth, num_classes]


CATEGORY = "transformer"
TAGS = ["mlp-mixer", "vision", "layernorm", "gelu"]
SMALL = {"batch_size": 2, "image_size": 32, "patch_size": 8, "d_model": 64, "token_dim": 32, "channel_dim": 128,
         "depth": 2, "num_classes": 10}
HELD_OUT = [{"batch_size": 29, "image_size": 240, "num_classes": 997}]
HELD_OUT_SMALL = [{"batch_size": 3, "image_size": 40, "patch_size": 8, "d_model": 48, "token_dim": 24,
                   "channel_dim": 96, "depth": 2, "num_classes": 7}]
# low precision: the reference itself is off fp32 by fp16 0.003 rel_l2, 0.01 elementwise
TOLERANCE = {"fp16": {"atol": 0.03, "rtol": 0.03, "rel_l2": 0.006}}
