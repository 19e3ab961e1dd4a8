# expect: correct
# needs: cuda,cupy
# problem: 2_softmax_rows.py
# why: CuPy RawModule (NVRTC), one block per row: max, sum of exp, write, with shared-memory tree reductions; any width; zero-copy through DLPack, launched on the caller's torch stream (cupy.cuda.ExternalStream)
import cupy
import numpy
import torch
import torch.nn as nn

# one block of 256 threads per row: the row's max, the sum of exp(x - max), then the write
SOFTMAX_ROWS_SRC = r"""
extern "C" __global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ out, int cols) {
  __shared__ float red[256];
  const long long base = (long long)blockIdx.x * cols;
  float m = __int_as_float(0xff800000);  // -inf
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, x[base + c]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(x[base + c] - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  const float inv = 1.0f / red[0];
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[base + c] = expf(x[base + c] - m) * inv;
}
"""

_MODULE = cupy.RawModule(code=SOFTMAX_ROWS_SRC)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        rows, cols = x.shape
        if x.numel() == 0:
            return out
        with cupy.cuda.ExternalStream(torch.cuda.current_stream(x.device).cuda_stream):
            args = (cupy.from_dlpack(x), cupy.from_dlpack(out), numpy.int32(cols))
            kernel = _MODULE.get_function("softmax_rows")
            kernel((rows,), (256,), args)
        return out
