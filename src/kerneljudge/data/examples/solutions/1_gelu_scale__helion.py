# expect: correct
# needs: cuda,helion
# problem: 1_gelu_scale.py
# why: Helion kernel (hl.tile over rows and columns, compiled to Triton) with exact erf GELU times the per-column scale; one fixed helion.Config, so nothing is autotuned inside the judgement
import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[16, 128], num_warps=4))
def gelu_scale(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    rows, cols = x.size()
    out = torch.empty_like(x)
    for tile_r, tile_c in hl.tile([rows, cols]):
        v = x[tile_r, tile_c]
        out[tile_r, tile_c] = 0.5 * v * (1.0 + torch.erf(v * 0.7071067811865476)) * scale[tile_c]
    return out


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return gelu_scale(x.contiguous(), self.scale.detach())
