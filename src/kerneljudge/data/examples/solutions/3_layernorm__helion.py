# expect: correct
# needs: cuda,helion
# problem: 3_layernorm.py
# why: Helion kernel (hl.tile over rows, compiled to Triton), one row per tile: passes over column tiles for the mean and the centred variance, then the affine write; one fixed helion.Config, so nothing is autotuned inside the judgement
import helion
import helion.language as hl
import torch
import torch.nn as nn


# block sizes in the order the tiled loops appear: rows, then the column tiles of the three passes
@helion.kernel(config=helion.Config(block_sizes=[1, 2048, 2048, 2048], num_warps=8, num_stages=1))
def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    rows, cols = x.size()
    out = torch.empty_like(x)
    for tile_r in hl.tile(rows):
        total = hl.zeros([tile_r], dtype=torch.float32)
        for tile_c in hl.tile(cols):
            total = total + torch.sum(x[tile_r, tile_c].to(torch.float32), dim=1)
        mean = total / cols
        sq = hl.zeros([tile_r], dtype=torch.float32)
        for tile_c in hl.tile(cols):
            # the lanes of a ragged last tile past the row's end are zeroed explicitly: loaded as 0, they would
            # otherwise add mean**2 each to the sum of squares
            d = torch.where((tile_c.index < cols)[None, :], x[tile_r, tile_c].to(torch.float32) - mean[:, None], 0.0)
            sq = sq + torch.sum(d * d, dim=1)
        rstd = torch.rsqrt(sq / cols + eps)
        for tile_c in hl.tile(cols):
            d = x[tile_r, tile_c].to(torch.float32) - mean[:, None]
            w = weight[tile_c].to(torch.float32)
            b = bias[tile_c].to(torch.float32)
            out[tile_r, tile_c] = (d * rstd[:, None] * w[None, :] + b[None, :]).to(out.dtype)
    return out


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(hidden))
        self.bias = nn.Parameter(torch.randn(hidden))

    def forward(self, x):
        x = x.contiguous()
        if x.numel() == 0:
            return torch.empty_like(x)
        return layer_norm(x, self.weight.detach(), self.bias.detach(), self.eps)
