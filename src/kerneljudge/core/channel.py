"""Private framed channel between the judge and its child processes.

A frame is an 8-byte length, a JSON header, then the raw bytes of any tensors the header lists. Nothing
is unpickled: a child's bytes can only ever become JSON values and plain tensors in the parent. Children
get the two pipe ends as inherited file descriptors; their stdout/stderr are separate pipes that the
parent captures but never parses.
"""

from __future__ import annotations

import json
import os
import select
import stat
import struct
import time
from typing import Any

_LEN = struct.Struct(">Q")
MAX_HEADER_BYTES = 16 << 20


class ChannelClosed(Exception):
    """The other side closed the channel (usually: the child died)."""


class ChannelTimeout(Exception):
    """No complete frame arrived before the deadline."""


class ProtocolError(Exception):
    """The other side sent something that is not a valid frame."""


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data).cast("B")
    while view:
        n = os.write(fd, view[: 1 << 20])
        view = view[n:]


def _read_exact(fd: int, n: int, deadline: float | None) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelTimeout()
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                raise ChannelTimeout()
        chunk = os.readv(fd, [view[got:]])  # reads straight into the buffer: no copy of big outputs
        if chunk == 0:
            raise ChannelClosed()
        got += chunk
    return buf


def _raw(tensors: list[Any]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Each tensor as (metadata, a uint8 view of its CPU bytes or None when empty)."""
    metas, payloads = [], []
    for t in tensors:
        t = t.detach().to("cpu").contiguous()
        flat = t.reshape(-1)
        metas.append({"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
                      "nbytes": flat.numel() * flat.element_size()})
        payloads.append(flat.view(_byte_dtype()) if flat.numel() else None)
    return metas, payloads


def write_tensors(path: str, tensors: list[Any]) -> list[dict[str, Any]]:
    """Write tensors' raw bytes one after another to a file; return the metadata to read them back.

    Used for large outputs: the solution writes its output to a file in shared memory and the trusted
    reference process reads it, so gigabytes never pass through the orchestrator.
    """
    metas, payloads = _raw(tensors)
    with open(path, "wb") as f:
        for raw in payloads:
            if raw is not None:
                f.write(raw.numpy().data)
    return metas


def read_tensors(path: str, metas: list[dict[str, Any]], max_payload: int) -> list[Any]:
    """Rebuild tensors written by write_tensors, checking the metadata against the file's real size."""
    if not isinstance(metas, list) or not all(isinstance(m, dict) for m in metas):
        raise ProtocolError("tensor metadata is not a list of objects")
    total = sum(int(m.get("nbytes", 0)) for m in metas)
    if total > max_payload:
        raise ProtocolError(f"output of {total} bytes is over the limit of {max_payload}")
    # the solution wrote this file: refuse links, FIFOs and devices (a FIFO would hang the reader)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise ProtocolError(f"output file cannot be opened: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ProtocolError("output file is not a regular file")
        data = bytearray(total)  # read once, straight into place: tensors below are views of it
        got = f.readinto(data)
        extra = f.read(1)
    if got != total or extra:
        raise ProtocolError(f"output file holds {'more than ' if extra else ''}{got} bytes, its metadata says {total}")
    view = memoryview(data)
    tensors, offset = [], 0
    for m in metas:
        n = int(m["nbytes"])
        tensors.append(_decode_tensor(m, view[offset:offset + n]))
        offset += n
    return tensors


def send(fd: int, header: dict[str, Any], tensors: list[Any] = ()) -> None:
    """Send a JSON header and optional tensors (moved to CPU, made contiguous)."""
    metas, payloads = _raw(tensors)
    head = dict(header)
    head["tensors"] = metas
    encoded = json.dumps(head).encode()
    _write_all(fd, _LEN.pack(len(encoded)) + encoded)
    for raw in payloads:
        if raw is not None:
            _write_all(fd, raw.numpy().data)


def recv(fd: int, timeout: float | None = None, max_payload: int = 64 << 30) -> tuple[dict[str, Any], list[Any]]:
    """Receive one frame. Tensors are rebuilt with torch.frombuffer: no code from the sender runs."""
    deadline = None if timeout is None else time.monotonic() + timeout
    (length,) = _LEN.unpack(bytes(_read_exact(fd, _LEN.size, deadline)))
    if length > MAX_HEADER_BYTES:
        raise ProtocolError(f"header of {length} bytes is over the limit")
    try:
        header = json.loads(bytes(_read_exact(fd, length, deadline)))
    except ValueError as exc:
        raise ProtocolError(f"header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError("header is not a JSON object")
    metas = header.pop("tensors", [])
    total = sum(int(m.get("nbytes", 0)) for m in metas) if isinstance(metas, list) else -1
    if total < 0 or total > max_payload:
        raise ProtocolError(f"payload of {total} bytes is over the limit of {max_payload}")
    tensors = [_decode_tensor(m, _read_exact(fd, int(m["nbytes"]), deadline)) for m in metas]
    return header, tensors


def _byte_dtype():
    import torch

    return torch.uint8


def _decode_tensor(meta: dict[str, Any], raw: bytearray | memoryview):
    import torch

    dtype = getattr(torch, str(meta.get("dtype")), None)
    if not isinstance(dtype, torch.dtype):
        raise ProtocolError(f"unknown dtype {meta.get('dtype')!r}")
    shape = [int(s) for s in meta.get("shape", [])]
    count = 1
    for s in shape:
        count *= s
    itemsize = torch.empty((), dtype=dtype).element_size()
    if count * itemsize != len(raw):
        raise ProtocolError("tensor byte count does not match its shape")
    if count == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(raw, dtype=torch.uint8).view(dtype).reshape(shape)
