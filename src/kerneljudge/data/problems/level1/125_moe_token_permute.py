"""MoE dispatch: stable-sort tokens by their int64 expert id and gather the hidden states into expert-contiguous order."""
import torch
import torch.nn as nn

num_tokens = 65536
hidden = 4096
num_experts = 64  # x/out 1.07 GB each; sort of 64K ids + row gather, ~0.6 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, expert_ids):
        # x: (tokens, hidden); expert_ids: (tokens,) int64; ties keep token order (stable sort)
        order = torch.sort(expert_ids, stable=True).indices
        return x[order]


def get_inputs():
    return [torch.randn(num_tokens, hidden), torch.randint(0, num_experts, (num_tokens,))]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "moe"
TAGS = ["llm", "moe", "permute", "sort", "gather"]
SMALL = {"num_tokens": 1024, "hidden": 64, "num_experts": 8}
HELD_OUT = [{"num_tokens": 65519, "hidden": 4100, "num_experts": 60}]
HELD_OUT_SMALL = [{"num_tokens": 301, "hidden": 37, "num_experts": 7}]
