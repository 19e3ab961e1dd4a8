"""Layer normalisation over the last dimension with a learned (random) weight and bias."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16384
hidden = 16384
eps = 1e-5


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(hidden))
        self.bias = nn.Parameter(torch.randn(hidden))

    def forward(self, x):
        return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden, eps]


# kerneljudge metadata: never shown to a model
CATEGORY = "normalization"
SMALL = {"batch_size": 6, "hidden": 100}
HELD_OUT = [{"batch_size": 1021, "hidden": 5003}]
HELD_OUT_SMALL = [{"batch_size": 3, "hidden": 77}]
