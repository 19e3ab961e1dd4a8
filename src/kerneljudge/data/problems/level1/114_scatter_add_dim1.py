"""scatter_add along dim 1 into zeros: out[b, index[b, j]] += src[b, j], with colliding int64 indices."""
import torch
import torch.nn as nn

batch_size = 8192
src_dim = 16384
out_dim = 4096  # src 537 MB, index 1.07 GB, out 134 MB; ~4 hits per output slot; ~0.6 ms


class Model(nn.Module):
    def __init__(self, out_dim):
        super().__init__()
        self.out_dim = out_dim

    def forward(self, src, index):
        out = torch.zeros(src.shape[0], self.out_dim, dtype=src.dtype, device=src.device)
        return out.scatter_add(1, index, src)


def get_inputs():
    src = torch.randn(batch_size, src_dim)
    index = torch.randint(0, out_dim, (batch_size, src_dim))
    return [src, index]


def get_init_inputs():
    return [out_dim]


# kerneljudge metadata
CATEGORY = "indexing"
TAGS = ["scatter", "scatter-add", "atomics"]
SMALL = {"batch_size": 64, "src_dim": 1024, "out_dim": 256}
HELD_OUT = [{"batch_size": 8189, "src_dim": 16383, "out_dim": 4093}]
HELD_OUT_SMALL = [{"batch_size": 37, "src_dim": 1001, "out_dim": 253}]
