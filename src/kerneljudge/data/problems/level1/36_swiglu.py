"""SwiGLU gating from a fused up/gate projection: split x into halves (a, gate) and return a * silu(gate)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

tokens = 16384
hidden = 11008  # x (tokens, 2*hidden) 1.34 GiB; silu temp + output 0.67 GiB each: ~3.6 GB moved, ~1.3 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        a, gate = x.chunk(2, dim=-1)
        return a * F.silu(gate)


def get_inputs():
    return [torch.randn(tokens, 2 * hidden)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "activation"
TAGS = ["llm"]
SMALL = {"tokens": 32, "hidden": 1024}
HELD_OUT = [{"tokens": 12289, "hidden": 14336}, {"tokens": 16001, "hidden": 13824}]
HELD_OUT_SMALL = [{"tokens": 7, "hidden": 1003}]
