import cupy
import torch
import torch.nn as nn

# An elementwise kernel: CuPy writes the index loop and the bounds check around this body, compiles it on
# the first launch and keeps the binary.
swish_residual_kernel = cupy.ElementwiseKernel(
    "float32 x, float32 r",
    "float32 out",
    "out = x / (1.0f + expf(-x)) + r",
    "kj_shot_swish_residual",
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, residual):
        if x.dtype != torch.float32 or residual.dtype != torch.float32:
            raise TypeError("inputs must be float32")
        if x.shape != residual.shape:
            raise ValueError("x and residual must have the same shape")
        x = x.contiguous()
        residual = residual.contiguous()
        out = torch.empty_like(x)
        if out.numel() == 0:
            return out
        # launch on PyTorch's current stream; cupy.asarray wraps the tensors' memory (__cuda_array_interface__), no copy
        with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            swish_residual_kernel(cupy.asarray(x), cupy.asarray(residual), cupy.asarray(out))
        return out
