"""Mean over the last dimension of a 2D tensor."""
import torch
import torch.nn as nn

batch_size = 163840
dim = 4096  # 2.5 GiB read once, tiny output: ~2.7 GB moved, ~0.68 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(x, dim=-1)


def get_inputs():
    # rows with different means
    return [torch.randn(batch_size, dim).add_(torch.randn(batch_size, 1))]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "reduction"
TAGS = []
SMALL = {"batch_size": 256, "dim": 512}
HELD_OUT = [{"batch_size": 130001, "dim": 4099}, {"batch_size": 6007, "dim": 100003}]
HELD_OUT_SMALL = [{"batch_size": 37, "dim": 1001}]
