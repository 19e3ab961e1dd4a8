# expect: correct
# needs: cuda,helion
# problem: 4_matmul_bias_relu.py
# why: Helion kernel (hl.tile over output tiles, an inner hl.tile over K with hl.dot into a float32 accumulator, compiled to Triton), bias and ReLU fused into the store; dot_precision="ieee" keeps full fp32 (no TF32); one fixed helion.Config, so nothing is autotuned inside the judgement
import math

import helion
import helion.language as hl
import torch
import torch.nn as nn


# block sizes in the order the tiled dimensions appear: M, N, then K
@helion.kernel(config=helion.Config(block_sizes=[64, 64, 32], num_warps=4, num_stages=3), dot_precision="ieee")
def matmul_bias_relu(x: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = weight_t.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = hl.dot(x[tile_m, tile_k], weight_t[tile_k, tile_n], acc=acc)
        out[tile_m, tile_n] = torch.relu(acc + bias[tile_n][None, :].to(torch.float32)).to(out.dtype)
    return out


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        x = x.contiguous()
        if x.shape[0] == 0 or self.weight.shape[0] == 0:
            return torch.empty((x.shape[0], self.weight.shape[0]), dtype=x.dtype, device=x.device)
        # weight is (N, K); its transpose is a (K, N) view of the same memory, read through strides
        return matmul_bias_relu(x, self.weight.detach().t(), self.bias.detach())
