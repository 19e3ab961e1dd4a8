"""Models are built as upstream KernelBench builds them: seeded, on the CPU, then moved (issue 9, part 3).

A solution that rebuilds the reference's layers as bare parameters, initialised in the same order, must get
the same weights, on any device: under `torch.device("cuda")` the legacy `torch.Tensor(...)` constructor
allocates on the CPU while `nn.Linear` draws from the GPU's generator, which is why construction happens on
the CPU.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn

from kerneljudge.worker import loading


class Reference(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))


class BareParameters(nn.Module):
    """The same layers as plain parameters under other names, initialised the way nn.Linear does it."""

    def __init__(self, sizes):
        super().__init__()
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for a, b in zip(sizes, sizes[1:]):
            w = nn.Parameter(torch.Tensor(b, a))
            bias = nn.Parameter(torch.Tensor(b))
            nn.init.kaiming_uniform_(w, a=math.sqrt(5))
            bound = 1 / math.sqrt(a)
            nn.init.uniform_(bias, -bound, bound)
            self.weights.append(w)
            self.biases.append(bias)


def _devices():
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", _devices())
def test_bare_parameters_get_the_reference_weights(device):
    sizes = [16, 32, 8]
    ref = loading.build_model(Reference, [sizes], 1234, device, "fp32")
    sol = loading.build_model(BareParameters, [sizes], 1234, device, "fp32")
    assert loading.copy_matching_weights(ref, sol) == []  # no name matches: only the seed can make them agree
    for layer, w, b in zip(ref.layers, sol.weights, sol.biases):
        assert w.device.type == device and torch.equal(layer.weight, w) and torch.equal(layer.bias, b)


def test_models_are_moved_cast_and_in_eval_mode():
    model = loading.build_model(Reference, [[4, 4]], 7, "cpu", "bf16")
    assert not model.training and model.layers[0].weight.dtype == torch.bfloat16
    other = loading.build_model(Reference, [[4, 4]], 8, "cpu", "fp32")
    assert not torch.equal(model.layers[0].weight.float(), other.layers[0].weight)  # the seed matters
