"""Weight-only int8 linear: dequantise an int8 weight with per-output-channel scales, then y = x @ W.T."""
import math

import torch
import torch.nn as nn

tokens = 4096
in_features = 4096
out_features = 11008  # ~369 GFLOP, ~7.7 ms; int8 W 43 MiB + dequantised W 172 MiB + x, y 236 MiB


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.register_buffer("weight_int8", torch.randint(-127, 128, (out_features, in_features), dtype=torch.int8))
        # per-output-channel scales: dequantised weights have std ~ 1/sqrt(in_features)
        self.register_buffer("scale", (1.0 + torch.rand(out_features)) / (127.0 * math.sqrt(in_features)))

    def forward(self, x):
        w = self.weight_int8.to(x.dtype) * self.scale.unsqueeze(1)
        return torch.matmul(x, w.t())


def get_inputs():
    return [torch.randn(tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features]


# kerneljudge metadata
CATEGORY = "matmul"
TAGS = ["llm", "quantization"]
SMALL = {"tokens": 32, "in_features": 256, "out_features": 512}
HELD_OUT = [{"tokens": 1001, "in_features": 4096, "out_features": 14336}, {"tokens": 257, "in_features": 5120, "out_features": 13824}]
HELD_OUT_SMALL = [{"tokens": 13, "in_features": 200, "out_features": 333}]
