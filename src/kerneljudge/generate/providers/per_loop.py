"""One object per running event loop: asyncio primitives and HTTP clients must not cross loops, and a provider
may be used from several loops in turn (one asyncio.run after another). Used by the SDK clients, the retry
wrapper's concurrency limit and the cache's per-request locks.
"""

from __future__ import annotations

import asyncio


class PerLoop:
    """One object per running event loop (asyncio primitives and HTTP clients must not cross loops)."""

    def __init__(self, factory):
        self._factory = factory
        self._loop = None
        self._value = None

    def get(self):
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop, self._value = loop, self._factory()
        return self._value

    def peek(self):
        return self._value

    def clear(self):
        self._loop = self._value = None


__all__ = ["PerLoop"]
