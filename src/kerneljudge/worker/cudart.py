"""The few CUDA runtime calls torch does not expose: persisting-L2 reset (threat A10), and clearing the
runtime's last error and ending a stream's capture after a failed graph capture (worker/capture_state.py).

Since Ampere a program can set aside part of L2 for "persisting" lines (cudaLimitPersistingL2CacheSize) and
mark a window of memory as persisting through a stream or kernel access-policy window. Lines marked so
survive ordinary traffic, so a flush by writing a large buffer would leave a solution's inputs or weights in
L2 and its timed call would start warm. Before each flush the timer calls `reset_persisting_l2()`, which
turns every persisting line back into a normal one (cudaCtxResetPersistingL2Cache) and sets the set-aside
size to zero (cudaDeviceSetLimit), so the flush evicts everything.

The functions are looked up in the libcudart that torch has already loaded, when the timing module is
imported: before any solution code runs, so a solution cannot swap them afterwards without the timer's
identity check noticing (timing.clock_identities).
"""

from __future__ import annotations

import ctypes
from typing import Any

CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06  # cudaLimitPersistingL2CacheSize (cuda_runtime_api.h)


def _loaded_cudart() -> Any | None:
    """The libcudart mapped into this process (torch's own copy), or None on the CPU."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "libcudart" in line and "/" in line}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


class Runtime:
    """Bound once; every call is a no-op (with `available` False) where the runtime or the call is missing."""

    def __init__(self) -> None:
        self.available = False
        self.error = ""
        self._reset = self._set_limit = self._last_error = None
        self._end_capture = self._graph_destroy = None
        lib = _loaded_cudart()
        if lib is None:
            self.error = "libcudart is not loaded in this process"
            return
        try:
            self._reset = lib.cudaCtxResetPersistingL2Cache
            self._set_limit = lib.cudaDeviceSetLimit
            self._set_limit.argtypes = [ctypes.c_int, ctypes.c_size_t]
            self._last_error = lib.cudaGetLastError
            # optional: only the clean-up after a failed capture needs them
            self._end_capture = getattr(lib, "cudaStreamEndCapture", None)
            self._graph_destroy = getattr(lib, "cudaGraphDestroy", None)
            if self._end_capture is not None and self._graph_destroy is not None:
                self._end_capture.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
                self._graph_destroy.argtypes = [ctypes.c_void_p]
        except AttributeError as exc:
            self.error = f"the CUDA runtime lacks a call: {exc}"
            return
        self.available = True

    def reset_persisting_l2(self) -> int:
        """Reset persisting lines and the set-aside; the CUDA error code of the first failing call (0 = fine).

        Devices without persisting L2 (before compute capability 8.0) answer with an error that is harmless:
        they have nothing to reset."""
        if not self.available:
            return 0
        status = int(self._set_limit(CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE, 0))
        return int(self._reset()) or status

    def clear_last_error(self) -> int:
        """Read and clear the runtime's last error (a failed capture leaves one for the next check to find)."""
        return int(self._last_error()) if self.available else 0

    def end_capture(self, stream: int) -> int | None:
        """End a capture still open on `stream` (a cudaStream_t as an integer) and drop the graph it made; the
        CUDA status, or None where the runtime lacks the calls."""
        if not self.available or self._end_capture is None or self._graph_destroy is None:
            return None
        graph = ctypes.c_void_p()
        status = int(self._end_capture(ctypes.c_void_p(stream), ctypes.byref(graph)))
        if graph.value:
            self._graph_destroy(graph)
        return status
