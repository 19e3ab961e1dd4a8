"""DLRM-style recommender: bottom MLP on dense features, sum-pooled multi-hot embedding bags for categorical features,
pairwise dot-product feature interaction (upper triangle), top MLP to a click logit."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16384
num_dense = 13
num_tables = 26
rows_per_table = 100000
bag_size = 4
embed_dim = 64       # ~18 GFLOP; ~1.6 ms on an H200 (eager fp32, no TF32); ~1.4 GB peak


class Model(nn.Module):
    def __init__(self, num_dense, num_tables, rows_per_table, embed_dim):
        super().__init__()
        self.tables = nn.Parameter(0.3 * torch.randn(num_tables, rows_per_table, embed_dim))
        self.bottom = nn.Sequential(nn.Linear(num_dense, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                                    nn.Linear(256, embed_dim), nn.ReLU())
        n = num_tables + 1
        self.top = nn.Sequential(nn.Linear(embed_dim + n * (n - 1) // 2, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                                 nn.Linear(256, 1))
        for lin in list(self.bottom) + list(self.top)[:-1]:
            if isinstance(lin, nn.Linear):
                nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")

    def forward(self, dense, sparse):
        # dense: (B, num_dense) floats; sparse: (B, num_tables, bag_size) row indices into each table
        z = self.bottom(dense)
        t = torch.arange(self.tables.shape[0], device=sparse.device)[None, :, None]
        bags = self.tables[t, sparse].sum(dim=2)                      # (B, num_tables, embed_dim)
        feats = torch.cat([z.unsqueeze(1), bags], dim=1)              # (B, n, embed_dim)
        inter = feats @ feats.transpose(1, 2)
        i, j = torch.triu_indices(feats.shape[1], feats.shape[1], 1, device=feats.device)
        return self.top(torch.cat([z, inter[:, i, j]], dim=1))


def get_inputs():
    return [torch.randn(batch_size, num_dense), torch.randint(0, rows_per_table, (batch_size, num_tables, bag_size))]


def get_init_inputs():
    return [num_dense, num_tables, rows_per_table, embed_dim]


CATEGORY = "mlp"
TAGS = ["recsys", "dlrm", "embedding-bag", "gather", "feature-interaction"]
SMALL = {"batch_size": 32, "num_tables": 4, "rows_per_table": 100, "bag_size": 3, "embed_dim": 16}
HELD_OUT = [{"batch_size": 12007, "rows_per_table": 99991, "bag_size": 3}]
HELD_OUT_SMALL = [{"batch_size": 13, "num_tables": 3, "rows_per_table": 77, "bag_size": 5, "embed_dim": 12}]
# low precision: the reference itself is off fp32 by fp16 0.002 rel_l2, 0.007 elementwise
TOLERANCE = {"fp16": {"atol": 0.015, "rtol": 0.015, "rel_l2": 0.005}}
