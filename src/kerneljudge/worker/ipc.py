"""Hand a CUDA output from the solution's process to the trusted reference process without copying it out.

The solution's process exports each output tensor with a CUDA IPC handle (`share`); the reference process
opens the handle, copies the tensor into its own memory at once, and lets go of the mapping (`receive`).
A gigabyte output then costs one device-to-device copy instead of a trip through host memory and a file.

Nothing from the solution is trusted here: every field is type- and range-checked, the view must fit the
shared allocation, the total size is bounded by what the expected output needs, and a handle that cannot
be opened is reported as `IpcUnavailable` so the judge can ask for the same output as a file instead.
Only plain data crosses the channel (hex strings and integers); nothing is unpickled.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from kerneljudge.core.channel import ProtocolError

# tensors exported by the solution's process: kept alive until the reference process has copied them
_exported: list[torch.Tensor] = []

_HEX = re.compile(r"^[0-9a-f]*$")
# torch names its IPC reference counters as one shared-memory object ("/torch_<pid>_<n>_<n>"): a single
# path component, so a forged name cannot point the reference process at a file elsewhere
_SHM_NAME = re.compile(rb"^/[A-Za-z0-9_.-]{1,200}$")


class IpcUnavailable(Exception):
    """The handle could not be opened (no IPC on this machine, or a handle that is not one)."""


def release() -> None:
    """Solution side: drop the last exported output (the reference process copied it before the next command)."""
    _exported.clear()


def share(tensors: list[torch.Tensor]) -> list[dict[str, Any]]:
    """Solution side: export CUDA tensors; raises if one cannot be shared (the caller falls back to a file)."""
    release()
    metas = []
    for t in tensors:
        t = t.detach().contiguous()
        if t.device.type != "cuda":
            raise ValueError("only CUDA tensors travel by IPC")
        meta: dict[str, Any] = {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
                                "offset": t.storage_offset(), "nbytes": t.numel() * t.element_size()}
        if t.numel():
            device, handle, size, offset, counter, counter_offset, event, event_sync = \
                t.untyped_storage()._share_cuda_()
            meta.update(device=int(device), handle=bytes(handle).hex(), storage_bytes=int(size),
                        storage_offset_bytes=int(offset), counter=bytes(counter).hex(),
                        counter_offset=int(counter_offset), event=bytes(event or b"").hex(),
                        event_sync=bool(event_sync))
        _exported.append(t)
        metas.append(meta)
    return metas


def receive(metas: Any, max_bytes: int) -> list[torch.Tensor]:
    """Reference side: private copies of the tensors the solution's process exported."""
    if not isinstance(metas, list) or not all(isinstance(m, dict) for m in metas):
        raise ProtocolError("IPC metadata is not a list of objects")
    total = 0
    copies = []
    for meta in metas:
        dtype, shape, offset = _dtype(meta.get("dtype")), _ints(meta.get("shape"), "shape"), meta.get("offset")
        if not isinstance(offset, int) or offset < 0:
            raise ProtocolError("IPC tensor offset is not a non-negative integer")
        numel = 1
        for s in shape:
            numel *= s
        nbytes = numel * torch.empty((), dtype=dtype).element_size()
        total += nbytes
        if total > max_bytes:
            raise ProtocolError(f"output of over {total} bytes is over the limit of {max_bytes}")
        if numel == 0:
            copies.append(torch.empty(shape, dtype=dtype, device="cuda"))
            continue
        copies.append(_open_and_copy(meta, dtype, shape, offset, nbytes))
    return copies


def _open_and_copy(meta: dict[str, Any], dtype: torch.dtype, shape: list[int], offset: int,
                   nbytes: int) -> torch.Tensor:
    fields = {k: meta.get(k) for k in ("device", "storage_bytes", "storage_offset_bytes", "counter_offset")}
    if not all(isinstance(v, int) and v >= 0 for v in fields.values()):
        raise ProtocolError("IPC sizes and offsets must be non-negative integers")
    itemsize = torch.empty((), dtype=dtype).element_size()
    if offset * itemsize + nbytes > fields["storage_bytes"]:
        raise ProtocolError("the output does not fit the memory it was shared in")
    handle, counter, event = (_hex(meta.get(k), k) for k in ("handle", "counter", "event"))
    # torch's own formats: a mismatch means another torch build or a forged handle, and either way the
    # output can still come as a file
    if not handle or not _SHM_NAME.match(counter) or fields["device"] != torch.cuda.current_device():
        raise IpcUnavailable("the IPC handle is not one this process can open")
    try:
        storage = torch.UntypedStorage._new_shared_cuda(
            fields["device"], handle, fields["storage_bytes"], fields["storage_offset_bytes"], counter,
            fields["counter_offset"], event or None, bool(meta.get("event_sync")))
    except Exception as exc:  # the driver refused the handle
        raise IpcUnavailable(f"{type(exc).__name__}: {exc}") from None
    try:
        typed = torch.storage.TypedStorage(wrap_storage=storage, dtype=dtype, _internal=True)
        view = torch._utils._rebuild_tensor(typed, offset, tuple(shape), _contiguous_strides(shape))
        copy = view.clone()
        torch.cuda.current_stream().synchronize()
    finally:
        del storage  # closes the mapping; the solution's process may free its memory now
    return copy


def _contiguous_strides(shape: list[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return tuple(reversed(strides))


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
