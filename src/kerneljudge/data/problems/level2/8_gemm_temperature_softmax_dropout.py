"""Linear layer, divide by a temperature, softmax over features, then dropout (identity in eval)."""
import torch
import torch.nn as nn

batch_size = 4096
in_features = 4096
out_features = 8192  # ~275 GFLOP, ~6 ms
temperature = 0.5


class Model(nn.Module):
    def __init__(self, in_features, out_features, temperature):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.temperature = temperature
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        y = torch.softmax(self.linear(x) / self.temperature, dim=-1)
        return self.dropout(y)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, temperature]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "in_features": 96, "out_features": 128}
HELD_OUT = [{"batch_size": 3001, "in_features": 4095, "out_features": 5003}]
HELD_OUT_SMALL = [{"batch_size": 6, "in_features": 47, "out_features": 101}]
