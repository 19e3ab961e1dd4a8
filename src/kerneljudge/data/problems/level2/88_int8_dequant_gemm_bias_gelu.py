"""Weight-only int8 linear layer: dequantise with per-output-channel scales, GEMM, bias, then GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 4096
in_features = 4096
out_features = 4096  # ~137 GFLOP + dequantising a 16 MB int8 weight, ~3 ms


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.register_buffer("weight_q", torch.randint(-127, 128, (out_features, in_features), dtype=torch.int8))
        self.scale = nn.Parameter((0.5 + torch.rand(out_features, 1)) / (127.0 * in_features ** 0.5))
        self.bias = nn.Parameter(0.1 * torch.randn(out_features))

    def forward(self, x):
        w = self.weight_q.to(x.dtype) * self.scale
        return F.gelu(F.linear(x, w, self.bias))


def get_inputs():
    return [torch.randn(num_tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm", "quantization"]
SMALL = {"num_tokens": 32, "in_features": 64, "out_features": 96}
HELD_OUT = [{"num_tokens": 3001, "in_features": 4093, "out_features": 3001}]
HELD_OUT_SMALL = [{"num_tokens": 7, "in_features": 37, "out_features": 23}]
