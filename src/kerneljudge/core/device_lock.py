"""A cross-process lock per device, so that timings from several processes never overlap on one GPU.

An advisory `fcntl.flock` on a file in a shared folder: exclusive, blocking, released by the kernel when
the holder dies (a worker killed in the middle of a timing cannot leave the device locked). The file is
opened close-on-exec, so programs the holder starts never inherit (and so never keep) the lock.

    with DeviceLock("/tmp/kj-locks/gpu0.lock") as lock:
        ...            # only one process in here at a time
    lock.wait_s        # how long it waited to get in
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path


def lock_path(lock_dir: str | Path, device_key: str) -> str:
    """The lock file for a device (e.g. "gpu0", "cpu") in a lock folder."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in device_key)
    return str(Path(lock_dir) / f"{safe}.lock")


class DeviceLock:
    def __init__(self, path: str | Path):
        self.path = str(path)
        self.wait_s = 0.0
        self.held_s = 0.0
        self._fd: int | None = None
        self._acquired_at = 0.0

    def acquire(self, timeout_s: float | None = None) -> bool:
        """Take the lock; False when timeout_s passed first (None: wait as long as it takes)."""
        if self._fd is not None:
            raise RuntimeError(f"{self.path} is already held by this object")
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        started = time.monotonic()
        try:
            if timeout_s is None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            else:
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if time.monotonic() - started >= timeout_s:
                            os.close(fd)
                            self.wait_s = time.monotonic() - started
                            return False
                        time.sleep(0.005)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        self._acquired_at = time.monotonic()
        self.wait_s = self._acquired_at - started
        return True

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = None
            self.held_s = time.monotonic() - self._acquired_at

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> "DeviceLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
