"""Select elementwise between two tensors with a bool mask input: torch.where(mask, x, y)."""
import torch
import torch.nn as nn

rows = 12288
cols = 16384  # x, y, out 805 MB each, mask 201 MB; memory-bound, ~0.6 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, mask, x, y):
        return torch.where(mask, x, y)


def get_inputs():
    mask = torch.rand(rows, cols) < 0.5
    return [mask, torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "indexing"
TAGS = ["where", "mask", "bool-input"]
SMALL = {"rows": 128, "cols": 1024}
HELD_OUT = [{"rows": 12281, "cols": 16389}]
HELD_OUT_SMALL = [{"rows": 37, "cols": 1001}]
