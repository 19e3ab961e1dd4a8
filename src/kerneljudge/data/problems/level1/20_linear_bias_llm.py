"""Linear layer with bias at LLM shapes: y = x @ W.T + b, 4096 tokens, 4096 -> 11008 (MLP up-projection)."""
import torch
import torch.nn as nn

tokens = 4096
in_features = 4096
out_features = 11008  # ~369 GFLOP, ~7.1 ms; W 172 MiB, x + y 236 MiB


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=True)
        with torch.no_grad():
            self.linear.bias.normal_(0.0, 0.2)  # large enough that dropping the bias is clearly wrong

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [torch.randn(tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features]


# kerneljudge metadata
CATEGORY = "matmul"
TAGS = ["llm"]
SMALL = {"tokens": 32, "in_features": 256, "out_features": 512}
HELD_OUT = [{"tokens": 1001, "in_features": 4096, "out_features": 11008}, {"tokens": 333, "in_features": 5120, "out_features": 13824}]
HELD_OUT_SMALL = [{"tokens": 13, "in_features": 200, "out_features": 333}]
