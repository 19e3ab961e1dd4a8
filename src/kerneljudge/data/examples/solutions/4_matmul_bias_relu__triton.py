# expect: correct
# problem: 4_matmul_bias_relu.py
# why: tiled tl.dot in full fp32 (input_precision="ieee": no TF32), masked on every edge, bias and ReLU fused in the epilogue
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _matmul_bias_relu_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K,
                             stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
                             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * stride_xm + ks[None, :] * stride_xk,
                    mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        # weight is (N, K): read it as the (K, N) operand through its strides
        b = tl.load(w_ptr + ks[:, None] * stride_wk + rn[None, :] * stride_wn,
                    mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))

    def forward(self, x):
        M, K = x.shape
        N = self.weight.shape[0]
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out
        w = self.weight
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        _matmul_bias_relu_kernel[grid](x, w, self.bias, out, M, N, K,
                                       x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                                       out.stride(0), out.stride(1), BM=64, BN=64, BK=32, num_warps=4)
        return out
