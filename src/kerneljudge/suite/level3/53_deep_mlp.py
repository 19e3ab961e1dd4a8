"""Deep multilayer perceptron: an input layer, six hidden Linear+ReLU layers of equal width, and an output layer."""
import torch
import torch.nn as nn

batch_size = 2048
input_dim = 1024
hidden = 4096
num_hidden = 6
output_dim = 512     # ~0.44 TFLOP; ~0.4 GB weights; ~9-15 ms


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
