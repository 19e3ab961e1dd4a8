"""4D tensor times matrix over the last axis: C[b,i,j,k] = sum_l A[b,i,j,l] * B[l,k] (einsum "bijl,lk->bijk")."""
import torch
import torch.nn as nn

b = 8
i = 256
j = 64
l = 256
k = 768  # 131072 rows x 256 x 768: ~52 GFLOP, ~1.2 ms; 512 MiB


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.einsum("bijl,lk->bijk", A, B)


def get_inputs():
    return [torch.randn(b, i, j, l), torch.randn(l, k)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "matmul"
TAGS = []
SMALL = {"b": 2, "i": 16, "j": 8, "l": 64, "k": 96}
HELD_OUT = [{"b": 7, "i": 251, "j": 67, "l": 253, "k": 771}]
HELD_OUT_SMALL = [{"b": 3, "i": 11, "j": 7, "l": 37, "k": 53}]
