"""W4A16-style linear layer: unpack two int4 values per byte, subtract the zero point, apply per-group scales, GEMM, SiLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 4096
in_features = 4096
out_features = 4096
group_size = 128  # ~137 GFLOP + unpacking an 8 MB packed weight, ~3 ms


class Model(nn.Module):
    def __init__(self, in_features, out_features, group_size):
        super().__init__()
        self.group_size = group_size
        # byte j of a row holds columns 2j (low nibble) and 2j+1 (high nibble), zero point 8
        self.register_buffer("packed", torch.randint(0, 256, (out_features, in_features // 2), dtype=torch.uint8))
        scales = 0.5 + torch.rand(out_features, in_features // group_size)
        self.scales = nn.Parameter(scales * 0.2 / in_features ** 0.5)

    def forward(self, x):
        low = (self.packed & 0xF).to(torch.int16)
        high = (self.packed >> 4).to(torch.int16)
        q = torch.stack([low, high], dim=-1).flatten(1) - 8  # (out, in) values in [-8, 7]
        w = q.to(x.dtype) * self.scales.repeat_interleave(self.group_size, dim=1)
        return F.silu(F.linear(x, w))


def get_inputs():
    return [torch.randn(num_tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features, group_size]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm", "quantization"]
SMALL = {"num_tokens": 16, "in_features": 64, "out_features": 48, "group_size": 16}
HELD_OUT = [{"num_tokens": 3001, "in_features": 2944, "out_features": 4001, "group_size": 128}]
HELD_OUT_SMALL = [{"num_tokens": 5, "in_features": 48, "out_features": 21, "group_size": 8}]
