"""addmm with alpha and beta (beta*C + alpha*A@W), then SiLU, then multiply by the original C."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
in_features = 4096
out_features = 4096  # ~137 GFLOP, ~3 ms
alpha = 2.0
beta = 0.5


class Model(nn.Module):
    def __init__(self, in_features, out_features, alpha, beta):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features ** 0.5)
        self.alpha = alpha
        self.beta = beta

    def forward(self, a, c):
        y = torch.addmm(c, a, self.weight, beta=self.beta, alpha=self.alpha)
        return F.silu(y) * c


def get_inputs():
    return [torch.randn(batch_size, in_features), torch.randn(batch_size, out_features)]


def get_init_inputs():
    return [in_features, out_features, alpha, beta]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "in_features": 96, "out_features": 64}
HELD_OUT = [{"batch_size": 3001, "in_features": 4099, "out_features": 2999}]
HELD_OUT_SMALL = [{"batch_size": 5, "in_features": 39, "out_features": 27}]
