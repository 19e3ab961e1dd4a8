"""Transformer output sublayer (post-norm): dense projection, dropout (eval), residual add, LayerNorm."""
import torch
import torch.nn as nn

batch_size = 16
seq_len = 512
hidden = 3072
features = 1024  # ~51 GFLOP + norm pass, ~1.2 ms


class Model(nn.Module):
    def __init__(self, hidden, features):
        super().__init__()
        self.dense = nn.Linear(hidden, features)
        self.dropout = nn.Dropout(0.1)
        self.norm = nn.LayerNorm(features, eps=1e-12)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(features))
            self.norm.bias.copy_(0.1 * torch.randn(features))

    def forward(self, h, residual):
        return self.norm(self.dropout(self.dense(h)) + residual)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden), torch.randn(batch_size, seq_len, features)]


def get_init_inputs():
    return [hidden, features]


# kerneljudge metadata
CATEGORY = "fusion-norm"
TAGS = ["transformer"]
SMALL = {"batch_size": 2, "seq_len": 16, "hidden": 128, "features": 64}
HELD_OUT = [{"batch_size": 5, "seq_len": 1021, "hidden": 3070, "features": 1000}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 7, "hidden": 45, "features": 27}]
