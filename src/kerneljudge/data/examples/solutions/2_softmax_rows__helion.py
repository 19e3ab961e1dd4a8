# expect: correct
# needs: cuda,helion
# problem: 2_softmax_rows.py
# why: Helion kernel (hl.tile over rows, compiled to Triton), one row per tile: an online pass over column tiles (running max and rescaled sum of exp), then the write pass; any width; one fixed helion.Config, so nothing is autotuned inside the judgement
import helion
import helion.language as hl
import torch
import torch.nn as nn


# block sizes in the order the tiled loops appear: rows, then the column tiles of the two passes
@helion.kernel(config=helion.Config(block_sizes=[1, 2048, 2048], num_warps=8, num_stages=1))
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.size()
    out = torch.empty_like(x)
    for tile_r in hl.tile(rows):
        running_max = hl.full([tile_r], float("-inf"), dtype=torch.float32)
        running_sum = hl.zeros([tile_r], dtype=torch.float32)
        for tile_c in hl.tile(cols):
            v = x[tile_r, tile_c].to(torch.float32)
            new_max = torch.maximum(running_max, torch.amax(v, dim=1))
            running_sum = running_sum * torch.exp(running_max - new_max) + torch.sum(
                torch.exp(v - new_max[:, None]), dim=1)
            running_max = new_max
        for tile_c in hl.tile(cols):
            v = x[tile_r, tile_c].to(torch.float32)
            out[tile_r, tile_c] = (torch.exp(v - running_max[:, None]) / running_sum[:, None]).to(out.dtype)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        if x.numel() == 0:
            return torch.empty_like(x)
        return softmax_rows(x)
