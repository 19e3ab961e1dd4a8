"""Hand a CUDA output from the solution's process to the trusted reference process without copying it out.

The solution's process exports the device allocation holding each output with a CUDA IPC handle (`share`,
through the driver: worker/cuda_driver.py); the reference process maps it, copies the tensor into its own memory
at once, and unmaps it (`receive`). A gigabyte output then costs one device-to-device copy instead of a trip
through host memory and a file. The solution's process keeps its outputs alive until the reference process has
copied them (the next command), so no reference counter is shared, and nothing is written to /dev/shm.

Nothing from the solution is trusted here: every field is type- and range-checked, the view must fit the
allocation as this process maps it (the driver says how large it is, not the solution), the total size is
bounded by what the expected output needs, and a handle that cannot be opened is reported as `IpcUnavailable`
so the judge can ask for the same output as a file instead. Only plain data crosses the channel (hex strings
and integers); nothing is unpickled.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from kerneljudge.core.channel import ProtocolError
from kerneljudge.worker import cuda_driver

# tensors exported by the solution's process: kept alive until the reference process has copied them
_exported: list[torch.Tensor] = []

_HEX = re.compile(r"^[0-9a-f]*$")


class IpcUnavailable(Exception):
    """The handle could not be opened (no IPC on this machine, or a handle that is not one)."""


def release() -> None:
    """Solution side: drop the last exported output (the reference process copied it before the next command)."""
    _exported.clear()


def share(tensors: list[torch.Tensor]) -> list[dict[str, Any]]:
    """Solution side: export CUDA tensors; raises if one cannot be shared (the caller falls back to a file)."""
    release()
    torch.cuda.synchronize()   # the reference process reads the memory without waiting on this process's streams
    metas = []
    handles: dict[int, str] = {}   # allocation base -> its handle (outputs may share one allocation)
    for t in tensors:
        t = t.detach().contiguous()
        if t.device.type != "cuda":
            raise ValueError("only CUDA tensors travel by IPC")
        meta: dict[str, Any] = {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
                                "nbytes": t.numel() * t.element_size()}
        if t.numel():
            base, size = cuda_driver.allocation_of(t.data_ptr())
            if base not in handles:
                handles[base] = cuda_driver.export_handle(base).hex()
            meta.update(device=t.device.index or 0, handle=handles[base], allocation_bytes=size,
                        offset_bytes=t.data_ptr() - base)
        _exported.append(t)
        metas.append(meta)
    return metas


def receive(metas: Any, max_bytes: int) -> list[torch.Tensor]:
    """Reference side: private copies of the tensors the solution's process exported."""
    if not isinstance(metas, list) or not all(isinstance(m, dict) for m in metas):
        raise ProtocolError("IPC metadata is not a list of objects")
    total = 0
    planned: list[tuple[torch.dtype, list[int], int, dict[str, Any]]] = []
    for meta in metas:
        dtype, shape = _dtype(meta.get("dtype")), _ints(meta.get("shape"), "shape")
        numel = 1
        for s in shape:
            numel *= s
        nbytes = numel * torch.empty((), dtype=dtype).element_size()
        total += nbytes
        if total > max_bytes:
            raise ProtocolError(f"output of over {total} bytes is over the limit of {max_bytes}")
        planned.append((dtype, shape, nbytes, meta))
    places = [_place(meta, nbytes) if nbytes else None for _, _, nbytes, meta in planned]
    if any(places):
        torch.cuda.synchronize()   # the driver's calls need this thread's CUDA context current
    opened: dict[bytes, tuple[int, int]] = {}   # handle -> (base here, bytes mapped): each opened once
    copies = []
    try:
        for (dtype, shape, nbytes, _), place in zip(planned, places):
            if place is None:
                copies.append(torch.empty(shape, dtype=dtype, device="cuda"))
                continue
            handle, offset = place
            if handle not in opened:
                opened[handle] = _open(handle)
            base, mapped = opened[handle]
            if offset + nbytes > mapped:
                raise ProtocolError("the output does not fit the memory it was shared in")
            copies.append(_copy(base + offset, nbytes, dtype, shape))
        torch.cuda.current_stream().synchronize()
    finally:
        for base, _ in opened.values():
            try:
                cuda_driver.close_handle(base)
            except cuda_driver.DriverError:
                pass
    return copies


def _place(meta: dict[str, Any], nbytes: int) -> tuple[bytes, int]:
    """(handle, byte offset in its allocation) of one exported tensor, checked before anything is opened."""
    fields = {k: meta.get(k) for k in ("device", "allocation_bytes", "offset_bytes")}
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in fields.values()):
        raise ProtocolError("IPC sizes and offsets must be non-negative integers")
    if fields["offset_bytes"] + nbytes > fields["allocation_bytes"]:
        raise ProtocolError("the output does not fit the memory it was shared in")
    handle = _hex(meta.get("handle"), "handle")
    # the driver's own format and this process's device: anything else means another build or a forged handle,
    # and either way the output can still come as a file
    if len(handle) != cuda_driver.IPC_HANDLE_BYTES or fields["device"] != torch.cuda.current_device():
        raise IpcUnavailable("the IPC handle is not one this process can open")
    return handle, fields["offset_bytes"]


def _open(handle: bytes) -> tuple[int, int]:
    """Map the allocation; its base here and its size as the driver maps it (not as the solution said)."""
    try:
        base = cuda_driver.open_handle(handle)
    except cuda_driver.DriverError as exc:   # the driver refused the handle
        raise IpcUnavailable(str(exc)) from None
    try:
        mapped_base, mapped = cuda_driver.allocation_of(base)
    except cuda_driver.DriverError as exc:
        cuda_driver.close_handle(base)
        raise IpcUnavailable(str(exc)) from None
    return base, mapped - (base - mapped_base)


class _DeviceBytes:
    """`nbytes` of device memory at an address, as a CUDA array (torch wraps it without copying)."""

    def __init__(self, address: int, nbytes: int):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (address, False),
                                         "version": 3, "strides": None}


def _copy(address: int, nbytes: int, dtype: torch.dtype, shape: list[int]) -> torch.Tensor:
    view = torch.as_tensor(_DeviceBytes(address, nbytes), device="cuda")
    return view.view(dtype).reshape(shape).clone()


def _dtype(name: Any) -> torch.dtype:
    dtype = getattr(torch, str(name), None)
    if not isinstance(dtype, torch.dtype):
        raise ProtocolError(f"unknown dtype {name!r}")
    return dtype


def _ints(values: Any, what: str) -> list[int]:
    if not isinstance(values, list) or not all(isinstance(v, int) and v >= 0 for v in values):
        raise ProtocolError(f"IPC tensor {what} is not a list of non-negative integers")
    return values


def _hex(value: Any, what: str) -> bytes:
    if not isinstance(value, str) or len(value) > 1024 or len(value) % 2 or not _HEX.match(value):
        raise ProtocolError(f"IPC field {what} is not a hex string")
    return bytes.fromhex(value)
