"""Token-wise linear layer on a sequence, InstanceNorm over the sequence per feature, then ReLU."""
import torch
import torch.nn as nn

batch_size = 16
seq_len = 1024
in_features = 1536
out_features = 1536  # ~77 GFLOP + transposed norm passes over 100 MB, ~1.9 ms


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.InstanceNorm1d(out_features, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(out_features))
            self.norm.bias.copy_(0.2 * torch.randn(out_features))

    def forward(self, x):
        y = self.linear(x).transpose(1, 2)  # (batch, features, seq)
        return torch.relu(self.norm(y))


def get_inputs():
    return [torch.randn(batch_size, seq_len, in_features)]


def get_init_inputs():
    return [in_features, out_features]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 2, "seq_len": 32, "in_features": 48, "out_features": 64}
HELD_OUT = [{"batch_size": 7, "seq_len": 1999, "in_features": 1531, "out_features": 1500}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 19, "in_features": 29, "out_features": 23}]
