"""Retry: which HTTP failures are worth another attempt, how long to wait (Retry-After), and ``ReliableProvider``,
the wrapper around every network provider that retries, limits concurrency and times out each call.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import logging
import random
import time
from typing import Mapping, Sequence

from kerneljudge.generate.providers.keys import redact
from kerneljudge.generate.providers.per_loop import PerLoop
from kerneljudge.generate.providers.types import (
    Completion, Message, Provider, ProviderConfigError, ProviderError, ProviderExhaustedError, ProviderRequestError,
    TransientProviderError, check_messages,
)

log = logging.getLogger("kerneljudge.generate")


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date); None if absent."""
    if not headers:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


def status_error(status: int, message: str, headers: Mapping[str, str] | None, *,
                 provider: str, key_env: str | None = None) -> ProviderError:
    """The right ProviderError for an HTTP error status (``message`` must already be redacted)."""
    if status in RETRYABLE_STATUS or status >= 500:
        return TransientProviderError(f"{provider}: HTTP {status}: {message}", status=status,
                                      retry_after=parse_retry_after(headers))
    hint = ""
    if status in (401, 403) and key_env:
        hint = f" (check the key in {key_env})"
    elif status == 404:
        hint = " (check the model name and the base URL)"
    return ProviderRequestError(f"{provider}: HTTP {status}{hint}: {message}", status=status)


class ReliableProvider:
    """Wraps a provider with retries, a concurrency limit and a per-call timeout.

    Retried: TransientProviderError (429, 408, 409, 5xx, dropped connections) and timeouts. The wait
    before attempt n+1 is ``min(backoff_max, backoff_base * 2**(n-1))`` scaled by a random factor in
    [0.5, 1], or, when the server sent Retry-After / retry-after-ms, that many seconds (plus up to 10%
    jitter); a Retry-After above ``max_retry_after`` gives up at once. At most ``concurrency`` requests
    are in flight at a time (the wait between attempts does not hold a slot). After ``max_attempts``
    failed attempts, ProviderExhaustedError. Non-retryable errors (ProviderRequestError) pass at once.
    """

    def __init__(self, inner: Provider, *, max_attempts: int = 6, concurrency: int = 8,
                 timeout: float | None = 600.0, backoff_base: float = 1.0, backoff_max: float = 60.0,
                 max_retry_after: float = 300.0, secrets: Sequence[str] = ()):
        if max_attempts < 1:
            raise ProviderConfigError("max_attempts must be >= 1")
        if concurrency < 1:
            raise ProviderConfigError("concurrency must be >= 1")
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.max_attempts = max_attempts
        self.concurrency = concurrency
        self.timeout = timeout
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.max_retry_after = max_retry_after
        self._secrets = tuple(secrets) or tuple(getattr(inner, "_secrets", ()))
        self._semaphore = PerLoop(lambda: asyncio.Semaphore(self.concurrency))
        self._rng = random.Random()
        # running totals over this provider's life: what a run spent
        self.stats = {"calls": 0, "failed_calls": 0, "requests": 0, "prompt_tokens": 0, "completion_tokens": 0,
                      "cost_usd": 0.0, "calls_without_price": 0}

    @property
    def spec(self) -> str:
        return f"{self.name}:{self.model}"

    def __repr__(self) -> str:
        return (f"ReliableProvider({self.inner!r}, max_attempts={self.max_attempts}, "
                f"concurrency={self.concurrency}, timeout={self.timeout})")

    def _delay(self, attempt: int, error: TransientProviderError) -> float:
        if error.retry_after is not None:
            return error.retry_after * (1.0 + 0.1 * self._rng.random())
        return min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1)) * (0.5 + 0.5 * self._rng.random())

    async def _attempt(self, messages, temperature, max_tokens, seed, sample) -> Completion:
        async with self._semaphore.get():
            call = self.inner.complete(messages, temperature=temperature, max_tokens=max_tokens,
                                       seed=seed, sample=sample)
            if self.timeout is None:
                return await call
            try:
                return await asyncio.wait_for(call, self.timeout)
            except asyncio.TimeoutError:
                raise TransientProviderError(f"{self.spec}: no reply within {self.timeout:g} s") from None

    async def complete(self, messages: Sequence[Message], *, temperature: float = 0.0,
                       max_tokens: int = 4096, seed: int | None = None, sample: int = 0) -> Completion:
        messages = check_messages(messages)
        self.stats["calls"] += 1
        try:
            completion = await self._complete(messages, temperature, max_tokens, seed, sample)
        except BaseException:
            self.stats["failed_calls"] += 1
            raise
        self.stats["prompt_tokens"] += int(completion.usage.get("prompt_tokens", 0) or 0)
        self.stats["completion_tokens"] += int(completion.usage.get("completion_tokens", 0) or 0)
        if completion.cost_usd is None:
            self.stats["calls_without_price"] += 1
        else:
            self.stats["cost_usd"] += completion.cost_usd
        log.debug("%s: %d+%d tokens, cost %s USD, %.2f s, %d attempt(s)", self.spec,
                  completion.usage.get("prompt_tokens", 0), completion.usage.get("completion_tokens", 0),
                  completion.cost_usd, completion.latency_s, completion.attempts)
        return completion

    async def _complete(self, messages, temperature, max_tokens, seed, sample) -> Completion:
        last: TransientProviderError | None = None
        for attempt in range(1, self.max_attempts + 1):
            self.stats["requests"] += 1
            try:
                completion = await self._attempt(messages, temperature, max_tokens, seed, sample)
            except TransientProviderError as err:
                last = err
                message = redact(str(err), self._secrets)
                if attempt == self.max_attempts:
                    break
                if err.retry_after is not None and err.retry_after > self.max_retry_after:
                    raise ProviderExhaustedError(
                        f"{self.spec}: server asked to retry after {err.retry_after:g} s, more than "
                        f"max_retry_after={self.max_retry_after:g} s; giving up: {message}",
                        attempts=attempt, last_error=err) from err
                delay = self._delay(attempt, err)
                log.warning("%s: attempt %d/%d failed (%s); retrying in %.2f s",
                            self.spec, attempt, self.max_attempts, message, delay)
                await asyncio.sleep(delay)
                continue
            return dataclasses.replace(completion, attempts=attempt) if attempt > 1 else completion
        message = redact(str(last), self._secrets)
        raise ProviderExhaustedError(f"{self.spec}: gave up after {self.max_attempts} attempts; "
                                     f"last error: {message}", attempts=self.max_attempts, last_error=last)

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()


__all__ = ["RETRYABLE_STATUS", "ReliableProvider", "parse_retry_after", "status_error"]
