"""Mean over the time axis of a (batch, steps, channels) tensor, followed by tanh."""
import torch
import torch.nn as nn

batch_size = 32
steps = 128
channels = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.tanh(x.mean(dim=1))


def get_inputs():
    return [torch.randn(batch_size, steps, channels)]


def get_init_inputs():
    return []
