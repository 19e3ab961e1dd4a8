import numpy
import torch
import torch.nn as nn

try:
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
except ImportError:  # cuda.core releases before 0.4 keep the same API under cuda.core.experimental
    from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, launch

THREADS = 256

SOURCE = r"""
constexpr int kThreads = 256;

// One block per row: each thread sums the squares of a strided slice of the row, the block adds the partial
// sums (warp shuffles, then one value per warp through shared memory), and each thread scales its slice.
extern "C" __global__ void rms_norm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                           float* __restrict__ out, long long cols, float eps) {
  __shared__ float warp_sums[kThreads / 32];
  const float* row = x + static_cast<long long>(blockIdx.x) * cols;
  float* out_row = out + static_cast<long long>(blockIdx.x) * cols;
  float acc = 0.0f;
  for (long long c = threadIdx.x; c < cols; c += kThreads) {
    const float v = row[c];
    acc += v * v;
  }
  for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    float total = threadIdx.x < kThreads / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) total += __shfl_down_sync(0xffffffffu, total, offset);
    if (threadIdx.x == 0) warp_sums[0] = total;
  }
  __syncthreads();
  const float scale = rsqrtf(warp_sums[0] / static_cast<float>(cols) + eps);
  for (long long c = threadIdx.x; c < cols; c += kThreads) out_row[c] = row[c] * scale * w[c];
}
"""

# compiled once, when the module is imported, for the GPU PyTorch uses (its primary context is made current)
device = Device(torch.cuda.current_device())
device.set_current()
program = Program(SOURCE, code_type="c++", options=ProgramOptions(arch=f"sm_{device.arch}", std="c++17"))
rms_norm_kernel = program.compile("cubin").get_kernel("rms_norm_kernel")


class ModelNew(nn.Module):
    def __init__(self, features, eps):
        super().__init__()
        # same name and shape as Model's parameter, so it receives the reference's values
        self.weight = nn.Parameter(torch.randn(features))
        self.eps = eps

    def forward(self, x):
        if x.dtype != torch.float32 or self.weight.dtype != torch.float32:
            raise TypeError("inputs must be float32")
        cols = x.shape[-1]
        rows = x.reshape(-1, cols).contiguous()
        weight = self.weight.contiguous()
        out = torch.empty_like(rows)
        if rows.shape[0] == 0 or cols == 0:
            return out.reshape(x.shape)
        if rows.shape[0] >= 2**31:
            raise ValueError("too many rows for one grid")
        stream = device.create_stream(torch.cuda.current_stream())
        launch(stream, LaunchConfig(grid=rows.shape[0], block=THREADS), rms_norm_kernel,
               rows.data_ptr(), weight.data_ptr(), out.data_ptr(), numpy.int64(cols), numpy.float32(self.eps))
        return out.reshape(x.shape)
