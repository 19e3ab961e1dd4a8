"""EmbeddingBag (mean) over variable-length bags given by int64 ids and bag start offsets (recommender feature pooling)."""
import torch
import torch.nn as nn

num_embeddings = 1048576
dim = 256
num_bags = 65536
mean_bag_size = 40  # table 1.07 GB; ~2.6M rows gathered (2.7 GB read); ~1 ms


class Model(nn.Module):
    def __init__(self, num_embeddings, dim):
        super().__init__()
        self.bag = nn.EmbeddingBag(num_embeddings, dim, mode="mean")

    def forward(self, ids, offsets):
        # ids: (total,) int64; offsets: (num_bags,) int64 start of each bag in ids (bags are never empty)
        return self.bag(ids, offsets)


def get_inputs():
    bag_sizes = torch.randint(1, 2 * mean_bag_size, (num_bags,))
    offsets = torch.cumsum(bag_sizes, 0) - bag_sizes
    ids = torch.randint(0, num_embeddings, (int(bag_sizes.sum()),))
    return [ids, offsets]


def get_init_inputs():
    return [num_embeddings, dim]


# kerneljudge metadata
CATEGORY = "indexing"
TAGS = ["embedding-bag", "gather", "segment-reduce"]
SMALL = {"num_embeddings": 4096, "dim": 64, "num_bags": 256, "mean_bag_size": 8}
HELD_OUT = [{"num_embeddings": 1000003, "dim": 257, "num_bags": 65521, "mean_bag_size": 37}]
HELD_OUT_SMALL = [{"num_embeddings": 1001, "dim": 37, "num_bags": 97, "mean_bag_size": 5}]
