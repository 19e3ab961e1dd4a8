"""Graph message aggregation with index_add: node features plus the sum of incoming edge messages (int64 destination ids)."""
import torch
import torch.nn as nn

num_nodes = 65536
num_edges = 2097152
dim = 128  # messages 1.07 GB, dst ids 17 MB, nodes 34 MB; ~32 edges per node; ~0.6 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, node_feats, messages, dst):
        # node_feats: (nodes, dim); messages: (edges, dim); dst: (edges,) int64 destination node of each edge
        return node_feats.index_add(0, dst, messages)


def get_inputs():
    node_feats = torch.randn(num_nodes, dim)
    messages = torch.randn(num_edges, dim)
    dst = torch.randint(0, num_nodes, (num_edges,))
    return [node_feats, messages, dst]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "indexing"
TAGS = ["index-add", "scatter", "graph", "atomics"]
SMALL = {"num_nodes": 512, "num_edges": 8192, "dim": 64}
HELD_OUT = [{"num_nodes": 65521, "num_edges": 2000003, "dim": 129}]
HELD_OUT_SMALL = [{"num_nodes": 301, "num_edges": 5003, "dim": 37}]
