"""ELU activation: y = x if x > 0 else alpha * (exp(x) - 1)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 81920  # 1.25 GiB in + 1.25 GiB out: ~2.7 GB moved, ~0.86 ms
alpha = 0.8


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return F.elu(x, alpha=self.alpha)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [alpha]


# kerneljudge metadata
CATEGORY = "activation"
TAGS = []
SMALL = {"batch_size": 16, "dim": 4096}
HELD_OUT = [{"batch_size": 3001, "dim": 100003}]
HELD_OUT_SMALL = [{"batch_size": 7, "dim": 1531}]
