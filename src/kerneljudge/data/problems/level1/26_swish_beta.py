"""Swish with a fixed slope beta: y = x * sigmoid(beta * x) (beta = 1.702 gives the 'quick GELU')."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 81920  # 1.25 GiB in + out, temporaries beta*x and sigmoid: ~9.4 GB moved, ~2.5 ms, peak 3.75 GiB
beta = 1.702


class Model(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, x):
        return x * torch.sigmoid(self.beta * x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [beta]


# kerneljudge metadata
CATEGORY = "activation"
TAGS = []
SMALL = {"batch_size": 16, "dim": 4096}
HELD_OUT = [{"batch_size": 3001, "dim": 100003}]
HELD_OUT_SMALL = [{"batch_size": 7, "dim": 1531}]
