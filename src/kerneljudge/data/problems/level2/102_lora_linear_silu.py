"""LoRA-adapted linear layer: base projection plus scaled low-rank update B(A x), then SiLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 4096
in_features = 4096
out_features = 4096
rank = 16  # base GEMM ~137 GFLOP + thin rank-16 GEMMs, ~3 ms
lora_alpha = 32.0


class Model(nn.Module):
    def __init__(self, in_features, out_features, rank, lora_alpha):
        super().__init__()
        self.base = nn.Linear(in_features, out_features, bias=False)
        self.lora_a = nn.Linear(in_features, rank, bias=False)
        self.lora_b = nn.Linear(rank, out_features, bias=False)
        with torch.no_grad():
            self.lora_b.weight.normal_(0.0, 0.1 / rank ** 0.5)
        self.scaling = lora_alpha / rank

    def forward(self, x):
        return F.silu(self.base(x) + self.scaling * self.lora_b(self.lora_a(x)))


def get_inputs():
    return [torch.randn(num_tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features, rank, lora_alpha]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm"]
SMALL = {"num_tokens": 32, "in_features": 64, "out_features": 96, "rank": 4}
HELD_OUT = [{"num_tokens": 3001, "in_features": 4093, "out_features": 3001, "rank": 12}]
HELD_OUT_SMALL = [{"num_tokens": 7, "in_features": 37, "out_features": 29, "rank": 3}]
