"""Weight-only FP8 linear: decode an e4m3 weight (stored as raw uint8 bits), apply per-channel scales, y = x @ W.T."""
import math

import torch
import torch.nn as nn

tokens = 4096
in_features = 4096
out_features = 14336  # ~481 GFLOP, ~9.8 ms; fp8 W 56 MiB + decoded W 224 MiB + x, y 288 MiB


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        w = torch.randn(out_features, in_features) / math.sqrt(in_features)
        scale = w.abs().amax(dim=1) / 448.0  # 448 is the largest finite float8_e4m3fn value
        w_fp8 = (w / scale.unsqueeze(1)).to(torch.float8_e4m3fn)
        # raw e4m3 bit patterns, kept as uint8 so casting the model never touches them
        self.register_buffer("weight_fp8", w_fp8.view(torch.uint8))
        self.register_buffer("scale", scale)

    def forward(self, x):
        w = self.weight_fp8.view(torch.float8_e4m3fn).to(x.dtype) * self.scale.unsqueeze(1)
        return torch.matmul(x, w.t())


def get_inputs():
    return [torch.randn(tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features]


# kerneljudge metadata
CATEGORY = "matmul"
TAGS = ["llm", "quantization"]
SMALL = {"tokens": 32, "in_features": 256, "out_features": 512}
HELD_OUT = [{"tokens": 1001, "in_features": 4096, "out_features": 11008}, {"tokens": 509, "in_features": 8192, "out_features": 5003}]
HELD_OUT_SMALL = [{"tokens": 13, "in_features": 200, "out_features": 333}]
