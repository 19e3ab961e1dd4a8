"""Softmax over the last dimension of a 2-D tensor."""
import torch
import torch.nn as nn

batch_size = 16384
dim = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


# kerneljudge metadata: never shown to a model
CATEGORY = "softmax"
SMALL = {"batch_size": 8, "dim": 100}
HELD_OUT = [{"batch_size": 1021, "dim": 5003}]
HELD_OUT_SMALL = [{"batch_size": 3, "dim": 77}]
