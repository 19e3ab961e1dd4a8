"""How much device memory a reference process's problems take, and giving it back between judgements.

The orchestrator admits judgements to a device by the memory their problems need (judging/device/turns.py). It
learns a problem's need here: an estimate when the model is prepared on the CPU (its weights, its inputs and the
largest tensor its forward makes, found on the meta device, which costs nothing), then the peak the reference's
own expect measured on the device.
Between judgements a reference process parks its models in host memory, so that the problems it is not
serving now hold no device memory another process may need.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kerneljudge.worker import loading

# host memory a process may keep parked models in; older ones beyond it are dropped (built again when needed)
PARKED_HOST_BYTES = 8 << 30


def tensor_bytes(values: Any) -> int:
    """Bytes of the tensors among `values` (nested lists and tuples included)."""
    if isinstance(values, torch.Tensor):
        return values.numel() * values.element_size()
    if isinstance(values, (list, tuple)):
        return sum(tensor_bytes(v) for v in values)
    return 0


def model_bytes(model: torch.nn.Module) -> int:
    return sum(tensor_bytes(p) for p in model.parameters()) + sum(tensor_bytes(b) for b in model.buffers())


def input_bytes(problem: Any, precision: str) -> int:
    """Bytes of the problem's inputs at the run precision, made on the meta device (no memory, no time); 0 when
    get_inputs cannot run there."""
    try:
        inputs = loading.make_inputs(problem, 0, "meta", precision)
    except Exception:
        return 0
    return tensor_bytes(inputs)


class _LargestOutput(TorchDispatchMode):
    """Remembers the largest output any op made while it was entered."""

    def __init__(self) -> None:
        super().__init__()
        self.largest = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        self.largest = max(self.largest, tensor_bytes(out))
        return out


def largest_activation_bytes(problem: Any, init_inputs: list[Any], precision: str) -> int:
    """Bytes of the largest tensor one op of the forward makes, found by running it on the meta device (no memory,
    shapes only): a convolution's output may be many times its input. 0 where the model cannot run there."""
    try:
        with torch.device("meta"):
            model = problem.Model(*init_inputs)
        if precision != "fp32":
            model = model.to(loading.DTYPES[precision])
        inputs = loading.make_inputs(problem, 0, "meta", precision)
        with torch.no_grad(), _LargestOutput() as seen:
            model(*inputs)
        return seen.largest
    except Exception:
        return 0


def estimate(problem: Any, model: torch.nn.Module, precision: str, init_inputs: list[Any]) -> dict[str, int]:
    """What a prepared (CPU-built) model tells of its device memory before it has run there."""
    return {"model_bytes": model_bytes(model), "input_bytes": input_bytes(problem, precision),
            "activation_bytes": largest_activation_bytes(problem, init_inputs, precision)}


def start_peak(device: str) -> None:
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()


def peak(device: str) -> int:
    """The most device memory this process held since start_peak (its other models included: an upper bound)."""
    return int(torch.cuda.max_memory_allocated()) if device == "cuda" else 0


def release_cached(device: str) -> None:
    """Hand the device memory this process no longer uses back to the driver: several reference processes share
    a GPU (one per problem), and memory one keeps cached after its floors (a float64 copy of 4 GB inputs) is
    memory another cannot allocate. cuBLAS's workspaces go too (torch makes them again at the next gemm): kept
    for the process's life, one cut from a freed block of gigabytes would keep that whole block, as the timer's
    flush buffer did (worker/reference_timing.release)."""
    if device == "cuda":
        clear_workspaces = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
        if clear_workspaces is not None:
            clear_workspaces()
        torch.cuda.empty_cache()


def park(models: OrderedDict, parked: dict, keep: frozenset[str] = frozenset()) -> int:
    """Move the models in `models` (key -> (problem, model), the key's first item the problem's path) to host
    memory, into `parked`, but those of the problems in `keep` (judgements of them still use this process on the
    device), keeping at most PARKED_HOST_BYTES parked (the oldest are dropped); free the device's cached memory.
    Returns how many moved. A parked model goes back to the device on its next use: parameters and buffers move
    both ways, and tensors a constructor kept as plain attributes never leave the device, so the model computes the
    same."""
    moved = 0
    for key in [k for k in models if k[0] not in keep]:
        problem, model = models.pop(key)
        parked[key] = (problem, model.to("cpu"))
        moved += 1
    while len(parked) > 1 and sum(model_bytes(m) for _, m in parked.values()) > PARKED_HOST_BYTES:
        parked.pop(next(iter(parked)))
    release_cached("cuda")
    return moved


def still_held(device: str, describe: bool = False) -> dict[str, Any]:
    """What this process still holds on the device, after it gave back what it could: torch's allocated and
    reserved bytes, and, with `describe` where anything is allocated, the largest tensors still alive there (so
    that the judge can say what a process kept when it closes it for keeping it)."""
    if device != "cuda" or not torch.cuda.is_available():
        return {}
    found: dict[str, Any] = {"allocated_bytes": int(torch.cuda.memory_allocated()),
                             "reserved_bytes": int(torch.cuda.memory_reserved())}
    if describe and found["allocated_bytes"]:
        found["largest_tensors"] = largest_live_tensors()
    return found


def largest_live_tensors(count: int = 3) -> list[str]:
    """The `count` largest device tensors the garbage collector can reach, as "shape dtype size" lines."""
    import gc

    seen: dict[int, torch.Tensor] = {}
    for obj in gc.get_objects():
        try:
            if isinstance(obj, torch.Tensor) and obj.is_cuda:
                seen[id(obj)] = obj
        except Exception:
            continue
    largest = sorted(seen.values(), key=tensor_bytes, reverse=True)[:count]
    return [f"{tuple(t.shape)} {str(t.dtype).replace('torch.', '')} {tensor_bytes(t) / 2**20:.0f} MiB" for t in largest]
