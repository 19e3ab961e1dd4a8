"""Deep multilayer perceptron: an input layer, six hidden Linear+ReLU layers of equal width, and an output layer."""
import torch
import torch.nn as nn

batch_size = 2048
input_dim = 1024
hidden = 4096
num_hidden = 6
output_dim = 512     # ~438 GFLOP; ~8.9 ms on an H200 (eager fp32, no TF32); ~0.6 GB peak


class Model(nn.Module):
    def __init__(self, input_dim, hidden, num_hidden, output_dim):
        super().__init__()
        layers, d = [], input_dim
        for _ in range(num_hidden + 1):
            lin = nn.Linear(d, hidden)
            nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
            nn.init.uniform_(lin.bias, -0.1, 0.1)
            layers += [lin, nn.ReLU()]
            d = hidden
        layers.append(nn.Linear(d, output_dim))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(batch_size, input_dim)]


def get_init_inputs():
    return [input_dim, hidden, num_hidden, output_dim]


CATEGORY = "mlp"
TAGS = ["mlp", "relu", "gemm-chain"]
SMALL = {"batch_size": 16, "input_dim": 64, "hidden": 128, "num_hidden": 3, "output_dim": 32}
HELD_OUT = [{"batch_size": 1999, "input_dim": 1000, "hidden": 4001, "output_dim": 509}]
HELD_OUT_SMALL = [{"batch_size": 7, "input_dim": 37, "hidden": 101, "num_hidden": 2, "output_dim": 13}]
# low precision: the reference itself is off fp32 by bf16 0.007 rel_l2, 0.03 elementwise; fp16 0.005 rel_l2, 0.02 elementwise
TOLERANCE = {"bf16": {"atol": 0.06, "rtol": 0.06, "rel_l2": 0.02}, "fp16": {"atol": 0.05, "rtol": 0.05, "rel_l2": 0.01}}
