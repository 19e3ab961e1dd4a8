"""Paged-KV-cache decode attention: gather each sequence's cache pages through an int64 block table, then one-token GQA attention over its valid length."""
import torch
import torch.nn as nn

batch_size = 32
num_heads = 32
num_kv_heads = 8
head_dim = 128
page_size = 16
pages_per_seq = 256  # 4096 tokens per sequence; page pools 671 MB each, gathered K/V 537 MB each; ~1.5 ms
spare_pages = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k_pages, v_pages, block_table, seq_lens):
        # q: (batch, heads, head_dim); k_pages, v_pages: (num_pages, page_size, kv_heads, head_dim)
        # block_table: (batch, pages_per_seq) int64 page ids; seq_lens: (batch,) int64 valid tokens (>= 1)
        b, h, d = q.shape
        kv_heads = k_pages.shape[2]
        length = block_table.shape[1] * k_pages.shape[1]
        k = k_pages[block_table].reshape(b, length, kv_heads, d).transpose(1, 2)  # (b, kv_heads, length, d)
        v = v_pages[block_table].reshape(b, length, kv_heads, d).transpose(1, 2)
        qg = q.view(b, kv_heads, h // kv_heads, d)
        scores = torch.matmul(qg, k.transpose(-1, -2)) * d ** -0.5  # (b, kv_heads, group, length)
        valid = torch.arange(length, device=q.device)[None, :] < seq_lens[:, None]
        scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        return out.reshape(b, h, d)


def get_inputs():
    num_pages = batch_size * pages_per_seq + spare_pages
    # queries scaled by 2: peakier attention, as in trained models (outputs are not a near-uniform average)
    q = 2.0 * torch.randn(batch_size, num_heads, head_dim)
    k_pages = torch.randn(num_pages, page_size, num_kv_heads, head_dim)
    v_pages = torch.randn(num_pages, page_size, num_kv_heads, head_dim)
    block_table = torch.randperm(num_pages)[: batch_size * pages_per_seq].view(batch_size, pages_per_seq)
    max_len = pages_per_seq * page_size
    seq_lens = torch.randint(max_len // 4, max_len + 1, (batch_size,))
    return [q, k_pages, v_pages, block_table, seq_lens]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "attention"
TAGS = ["llm", "decode", "kv-cache", "paged", "gqa", "gather"]
SMALL = {"batch_size": 4, "num_heads": 8, "num_kv_heads": 2, "head_dim": 64, "page_size": 16, "pages_per_seq": 16, "spare_pages": 16}
HELD_OUT = [{"batch_size": 29, "num_heads": 32, "num_kv_heads": 8, "head_dim": 128, "page_size": 16, "pages_per_seq": 253, "spare_pages": 1001}]
HELD_OUT_SMALL = [{"batch_size": 3, "num_heads": 6, "num_kv_heads": 3, "head_dim": 40, "page_size": 8, "pages_per_seq": 13, "spare_pages": 7}]
