"""A disk cache of completions keyed by the full request, so that a re-run never re-queries a model.

    provider = get_provider("openai:gpt-4o", cache_dir="runs/cache")   # wraps the provider in CachedProvider

Key: SHA-256 of the canonical JSON of ``{"provider", "model", "messages", "temperature", "max_tokens",
"seed", "sample"}`` (``request_key``). The base URL, the key and the retry settings are not part of it:
the same model behind another URL or port hits the same entries.

Layout: ``CACHE_DIR/<key[:2]>/<key>.json``, one entry per file, written to a temporary file in the same
folder and renamed into place, so a reader sees a whole entry or none. An entry is

    {"format": "kerneljudge.completion.v1", "key": "...", "request": {...the keyed fields...},
     "completion": {...Completion fields...}, "created": "2025-01-01T00:00:00+00:00"}

Only successful replies are stored (a truncated one is a reply too); errors never are. A cache hit
returns the stored Completion with ``cached=True`` (its latency_s and cost_usd are those of the original
call). A cache folder is also a valid ``replay:`` folder. A corrupt entry is ignored and overwritten.
Concurrent identical calls in one process share one request.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from kerneljudge.core import atomic_file
from kerneljudge.generate.providers.per_loop import PerLoop
from kerneljudge.generate.providers.types import Completion, Message, Provider, check_messages

log = logging.getLogger("kerneljudge.generate")

FORMAT = "kerneljudge.completion.v1"


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_fields(provider: str | None, model: str | None, messages: Sequence[Message], temperature: float,
                   max_tokens: int, seed: int | None, sample: int) -> dict[str, Any]:
    return {"provider": provider, "model": model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "temperature": float(temperature), "max_tokens": int(max_tokens),
            "seed": None if seed is None else int(seed), "sample": int(sample)}


def request_key(provider: str | None, model: str | None, messages: Sequence[Message], *, temperature: float = 0.0,
                max_tokens: int = 4096, seed: int | None = None, sample: int = 0) -> str:
    """The cache key of one request (hex SHA-256)."""
    fields = request_fields(provider, model, messages, temperature, max_tokens, seed, sample)
    return hashlib.sha256(canonical(fields).encode("utf-8")).hexdigest()


def write_json_atomic(path: Path, data: Any) -> None:
    atomic_file.write_json(path, data, fsync=True, ensure_ascii=False, indent=1, sort_keys=True)


class CompletionCache:
    """The folder of entries (usable without a provider, e.g. to inspect or pre-fill a cache)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Completion | None:
        path = self.path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            if entry.get("format") != FORMAT or entry.get("key") != key:
                raise ValueError("not an entry for this key")
            return dataclasses.replace(Completion.from_dict(entry["completion"]), cached=True)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as err:
            log.warning("ignoring unreadable cache entry %s: %s", path, err)
            return None

    def put(self, key: str, request: dict[str, Any], completion: Completion) -> Path:
        stored = dataclasses.replace(completion, cached=False).to_dict()
        entry = {"format": FORMAT, "key": key, "request": request, "completion": stored,
                 "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        path = self.path(key)
        write_json_atomic(path, entry)
        return path

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("??/*.json")) if self.root.exists() else 0


class CachedProvider:
    """Serves a request from the cache when it was answered before; otherwise asks ``inner`` and stores it."""

    network = True

    def __init__(self, inner: Provider, cache_dir: str | os.PathLike):
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.cache = CompletionCache(cache_dir)
        self.hits = 0
        self.misses = 0
        self._locks = PerLoop(dict)

    @property
    def spec(self) -> str:
        return f"{self.name}:{self.model}"

    @property
    def stats(self) -> dict[str, Any]:
        """The wrapped provider's totals (requests actually sent) plus cache hits and misses."""
        return {**getattr(self.inner, "stats", {}), "cache_hits": self.hits, "cache_misses": self.misses}

    def __repr__(self) -> str:
        return f"CachedProvider({self.inner!r}, cache_dir={str(self.cache.root)!r})"

    async def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 4096,
                       seed: int | None = None, sample: int = 0) -> Completion:
        messages = check_messages(messages)
        request = request_fields(self.name, self.model, messages, temperature, max_tokens, seed, sample)
        key = hashlib.sha256(canonical(request).encode("utf-8")).hexdigest()
        locks: dict[str, list] = self._locks.get()   # key -> [lock, number of calls using it]
        slot = locks.setdefault(key, [asyncio.Lock(), 0])
        slot[1] += 1
        try:
            async with slot[0]:
                hit = self.cache.get(key)
                if hit is not None:
                    self.hits += 1
                    log.debug("%s: cache hit %s", self.spec, key[:12])
                    return hit
                self.misses += 1
                completion = await self.inner.complete(messages, temperature=temperature, max_tokens=max_tokens,
                                                       seed=seed, sample=sample)
                self.cache.put(key, request, completion)
                return completion
        finally:
            slot[1] -= 1
            if slot[1] == 0:
                locks.pop(key, None)

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()


__all__ = ["CachedProvider", "CompletionCache", "request_key", "write_json_atomic"]
