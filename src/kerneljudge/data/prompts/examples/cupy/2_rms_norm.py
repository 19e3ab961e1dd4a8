import cupy
import numpy
import torch
import torch.nn as nn

THREADS = 256

RMS_NORM_SOURCE = r"""
// One block per row: each thread sums the squares of a strided slice of the row, the block adds the partial
// sums (warp shuffles, then one value per warp through shared memory), and each thread scales its slice.
extern "C" __global__ void rms_norm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                           float* __restrict__ out, long long cols, float eps) {
  constexpr int kThreads = 256;
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

# compiled with NVRTC on the first launch, then reused
rms_norm_kernel = cupy.RawKernel(RMS_NORM_SOURCE, "rms_norm_kernel", options=("-std=c++17",))


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
        weight = self.weight.detach().contiguous()   # tensors that require grad are not exported
        out = torch.empty_like(rows)
        if rows.shape[0] == 0 or cols == 0:
            return out.reshape(x.shape)
        if rows.shape[0] >= 2**31:
            raise ValueError("too many rows for one grid")
        with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            rms_norm_kernel((rows.shape[0],), (THREADS,),
                            (cupy.asarray(rows), cupy.asarray(weight), cupy.asarray(out),
                             numpy.int64(cols), numpy.float32(self.eps)))
        return out.reshape(x.shape)
