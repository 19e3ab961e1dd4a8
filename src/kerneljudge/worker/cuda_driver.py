"""The CUDA driver calls that hand device memory from one process to another (legacy CUDA IPC), bound with
ctypes from the libcuda every CUDA process has loaded.

torch's own `_share_cuda_` also creates a reference-counter file in /dev/shm, so a solution's process needed
/dev/shm writable (and therefore a CUDA context before its box was narrowed). The judge keeps an exported
output alive until the reference process has copied it, which is all the counter was for, so the plain driver
calls serve: no file, no /dev/shm, and the solution's process creates its CUDA context only when it first
uses the device (judging/device/turns.py: once its judgement is admitted).

Every call needs the CUDA context current on the calling thread, which torch's first device call makes it.
"""

from __future__ import annotations

import ctypes
from typing import Any

IPC_HANDLE_BYTES = 64                  # CU_IPC_HANDLE_SIZE
IPC_LAZY_ENABLE_PEER_ACCESS = 0x1      # CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS


class DriverError(RuntimeError):
    """A driver call failed (its CUresult is in the message), or the driver is not there."""


class _IpcHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * IPC_HANDLE_BYTES)]


_lib: list[Any] = []


def _driver() -> Any:
    if not _lib:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
            lib.cuMemGetAddressRange_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_size_t),
                                                   ctypes.c_uint64]
            lib.cuIpcGetMemHandle.argtypes = [ctypes.POINTER(_IpcHandle), ctypes.c_uint64]
            lib.cuIpcOpenMemHandle_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), _IpcHandle, ctypes.c_uint]
            lib.cuIpcCloseMemHandle.argtypes = [ctypes.c_uint64]
        except (OSError, AttributeError) as exc:
            raise DriverError(f"the CUDA driver's IPC calls are not available: {exc}") from None
        _lib.append(lib)
    return _lib[0]


def _check(result: int, call: str) -> None:
    if result != 0:
        raise DriverError(f"{call} failed with CUresult {result}")


def allocation_of(pointer: int) -> tuple[int, int]:
    """(base, bytes) of the device allocation that holds `pointer` (an IPC handle names a whole allocation)."""
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    _check(_driver().cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(pointer)),
           "cuMemGetAddressRange")
    return int(base.value), int(size.value)


def export_handle(base: int) -> bytes:
    """The IPC handle of the allocation starting at `base`."""
    handle = _IpcHandle()
    _check(_driver().cuIpcGetMemHandle(ctypes.byref(handle), ctypes.c_uint64(base)), "cuIpcGetMemHandle")
    return ctypes.string_at(ctypes.addressof(handle), IPC_HANDLE_BYTES)   # every byte: a handle may hold NULs


def open_handle(handle: bytes) -> int:
    """Map another process's allocation into this one; its base address here."""
    if len(handle) != IPC_HANDLE_BYTES:
        raise DriverError(f"an IPC handle has {IPC_HANDLE_BYTES} bytes, not {len(handle)}")
    raw = _IpcHandle()
    ctypes.memmove(ctypes.addressof(raw), handle, IPC_HANDLE_BYTES)
    pointer = ctypes.c_uint64()
    _check(_driver().cuIpcOpenMemHandle_v2(ctypes.byref(pointer), raw, IPC_LAZY_ENABLE_PEER_ACCESS),
           "cuIpcOpenMemHandle")
    return int(pointer.value)


def close_handle(pointer: int) -> None:
    _check(_driver().cuIpcCloseMemHandle(ctypes.c_uint64(pointer)), "cuIpcCloseMemHandle")
