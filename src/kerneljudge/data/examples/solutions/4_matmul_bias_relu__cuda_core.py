# expect: correct
# needs: cuda,cuda_core
# problem: 4_matmul_bias_relu.py
# why: cuda.core (NVRTC to a cubin, launch on the caller's torch stream), 16x16 shared-memory tiles of x and weight, bias and ReLU fused into the store; full fp32; pointers as data_ptr() ints, sizes as numpy scalars
import math

import numpy
import torch
import torch.nn as nn

try:
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
except ImportError:  # cuda.core before 0.4 kept these under .experimental
    from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, launch

# 16x16 output tiles, operands staged through shared memory 16 columns of K at a time; full fp32
MATMUL_BIAS_RELU_SRC = r"""
#define TILE 16
extern "C" __global__ void matmul_bias_relu(const float* __restrict__ x, const float* __restrict__ w,
                                            const float* __restrict__ bias, float* __restrict__ out,
                                            int M, int N, int K) {
  __shared__ float xs[TILE][TILE + 1];
  __shared__ float ws[TILE][TILE + 1];
  const int row = blockIdx.y * TILE + threadIdx.y;   // of x and out
  const int col = blockIdx.x * TILE + threadIdx.x;   // of out (a row of w)
  const int w_row = blockIdx.x * TILE + threadIdx.y;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    const int k = k0 + threadIdx.x;
    xs[threadIdx.y][threadIdx.x] = (row < M && k < K) ? x[(long long)row * K + k] : 0.0f;
    ws[threadIdx.y][threadIdx.x] = (w_row < N && k < K) ? w[(long long)w_row * K + k] : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < TILE; ++kk) acc += xs[threadIdx.y][kk] * ws[threadIdx.x][kk];
    __syncthreads();
  }
  if (row < M && col < N) {
    const float v = acc + bias[col];
    out[(long long)row * N + col] = v > 0.0f ? v : 0.0f;
  }
}
"""

_KERNELS = {}


def kernel(name, device_index):
    """The NVRTC-compiled kernel `name` (a cubin for this GPU's architecture), compiled once per device."""
    if device_index not in _KERNELS:
        device = Device(device_index)
        device.set_current()
        arch = "".join(str(part) for part in device.compute_capability)
        options = ProgramOptions(std="c++17", arch=f"sm_{arch}")
        _KERNELS[device_index] = Program(MATMUL_BIAS_RELU_SRC, code_type="c++", options=options).compile("cubin")
    return _KERNELS[device_index].get_kernel(name)


class TorchStream:
    """The caller's torch stream in cuda.core's stream protocol (version 0, the cudaStream_t as an int)."""

    def __init__(self, stream):
        self.handle = stream.cuda_stream

    def __cuda_stream__(self):
        return (0, self.handle)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        x = x.contiguous()
        weight = self.weight.detach().contiguous()
        bias = self.bias.detach().contiguous()
        M, K = x.shape
        N = weight.shape[0]
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out
        config = LaunchConfig(grid=((N + 15) // 16, (M + 15) // 16), block=(16, 16))
        launch(TorchStream(torch.cuda.current_stream(x.device)), config, kernel("matmul_bias_relu", x.device.index),
               x.data_ptr(), weight.data_ptr(), bias.data_ptr(), out.data_ptr(), numpy.int32(M), numpy.int32(N),
               numpy.int32(K))
        return out
