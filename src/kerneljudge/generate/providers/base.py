"""Model providers: one small async interface from chat messages to text, usage and cost.

    from kerneljudge.generate.providers.base import get_provider

    provider = get_provider("openai:gpt-4o-mini", cache_dir="runs/cache", concurrency=8)
    completion = await provider.complete([{"role": "user", "content": "Write a kernel"}], temperature=0.0)
    print(completion.text, completion.usage, completion.cost_usd, completion.cached)

Specs (``get_provider``):

- ``openai:MODEL``     any OpenAI-compatible chat-completions server (OpenAI, vLLM, SGLang, ...) through the
  ``openai`` SDK. Key from ``OPENAI_API_KEY``; base URL from the ``base_url=`` option, else
  ``OPENAI_BASE_URL``, else OpenAI's. Needs ``pip install kerneljudge[openai]``.
- ``anthropic:MODEL``  Anthropic's messages API through the ``anthropic`` SDK. Key from
  ``ANTHROPIC_API_KEY``; base URL from ``base_url=``, else ``ANTHROPIC_BASE_URL``. Needs
  ``pip install kerneljudge[anthropic]``.
- ``replay:FOLDER``    recorded replies served from a folder, offline (see ``replay.py`` for the format).

Every network provider is wrapped in ``ReliableProvider`` (retries with exponential backoff and jitter on
429, 408/409, 5xx, timeouts and dropped connections, honouring ``Retry-After``; a concurrency limit; a
per-call timeout) and, with ``cache_dir=``, in ``CachedProvider`` (``cache.py``) so that a re-run never
re-queries a model.

API keys are read from the environment when a provider is built, kept in a private attribute, passed
only to the SDK, and redacted from every error message this package raises or logs. They are never part
of a cache key, a cache entry, a repr or a log line.

No SDK is imported by this module: ``get_provider`` imports a provider's module only when it is chosen,
so a missing optional SDK fails only then, naming the extra to install.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import importlib
import logging
import os
import random
import time
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Protocol, Sequence, TypedDict, runtime_checkable

log = logging.getLogger("kerneljudge.generate")


class Message(TypedDict):
    """One chat message. Plain dicts are fine: ``{"role": "user", "content": "..."}``."""

    role: Literal["system", "user", "assistant"]
    content: str


ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class Completion:
    """One model reply.

    ``usage`` holds ``prompt_tokens`` and ``completion_tokens`` (0 when the server did not report them).
    ``cost_usd`` is estimated from ``PRICES`` (None for a model not in the table). ``latency_s`` is the
    wall time of the request that succeeded (for a cached reply: of the original request). ``cached`` is
    True when no model was queried for this call (disk cache or replay). ``finish_reason`` is normalised
    to ``"stop"``, ``"length"`` (truncated at max_tokens) or the server's own word; ``attempts`` counts the
    requests this reply took (1 without retries).
    """

    text: str
    model: str
    usage: dict
    cost_usd: float | None
    latency_s: float
    cached: bool
    raw_id: str | None
    finish_reason: str | None = None
    attempts: int = 1

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Completion":
        names = {f.name for f in dataclasses.fields(cls)}
        known = {k: v for k, v in data.items() if k in names}
        known.setdefault("usage", {"prompt_tokens": 0, "completion_tokens": 0})
        known.setdefault("cost_usd", None)
        known.setdefault("latency_s", 0.0)
        known.setdefault("cached", False)
        known.setdefault("raw_id", None)
        known.setdefault("model", "")
        return cls(**known)


@runtime_checkable
class Provider(Protocol):
    """What every provider offers. ``sample`` (default 0) tells k samples of one request apart: it is part
    of the cache key and of the replay lookup, and is ignored by the network providers themselves."""

    name: str
    model: str

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 4096,
        seed: int | None = None,
        sample: int = 0,
    ) -> Completion: ...


# ----------------------------------------------------------------------------------------------- errors


class ProviderError(RuntimeError):
    """Base class of every error a provider raises."""


class ProviderConfigError(ProviderError):
    """The provider cannot be built: unknown spec, missing SDK, missing key, bad option."""


class ProviderRequestError(ProviderError):
    """The server rejected the request in a way a retry will not fix (400, 401, 403, 404, 422 ...)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class TransientProviderError(ProviderError):
    """A failure worth retrying: 429, 408, 409, 5xx, a timeout, a dropped connection."""

    def __init__(self, message: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class ProviderExhaustedError(ProviderError):
    """Every attempt failed; ``last_error`` is the final TransientProviderError."""

    def __init__(self, message: str, attempts: int, last_error: BaseException | None):
        super().__init__(message)
        self.attempts = attempts
        self.last_error = last_error


# ---------------------------------------------------------------------------------------------- secrets


def redact(text: str, secrets: Sequence[str | None]) -> str:
    """``text`` with every secret (and its last 8+ characters, which servers like to echo) masked."""
    for secret in secrets:
        if not secret:
            continue
        text = text.replace(secret, "***")
        if len(secret) >= 16:
            text = text.replace(secret[-8:], "***")
    return text


def read_key(env_var: str, provider: str, hint: str = "") -> str:
    """The API key from ``env_var``; a clear ProviderConfigError when it is unset or empty."""
    value = os.environ.get(env_var, "").strip()
    if not value:
        raise ProviderConfigError(
            f"the {provider} provider needs an API key in the environment variable {env_var}, "
            f"which is not set{hint}")
    return value


# ----------------------------------------------------------------------------------------------- prices

# USD per million tokens (input, output), matched by the longest prefix of the model name (a vendor
# prefix such as "openai/" is ignored). List prices as published in 2025; check them before quoting a
# bill. A model missing here gets cost_usd=None; pass prices={...} to get_provider to add or override.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5": (1.25, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4-turbo": (10.00, 30.00),
    "o1-mini": (1.10, 4.40),
    "o1": (15.00, 60.00),
    "o3-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
    "claude-opus-4-5": (5.00, 25.00),
    "claude-opus-4": (15.00, 75.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-opus": (15.00, 75.00),
    "claude-3-haiku": (0.25, 1.25),
}


def price_for(model: str, prices: Mapping[str, tuple[float, float]] | None = None) -> tuple[float, float] | None:
    table = {**PRICES, **(prices or {})}
    for name in (model, model.rsplit("/", 1)[-1]):
        best = max((p for p in table if name.startswith(p)), key=len, default=None)
        if best is not None:
            return table[best]
    return None


def estimate_cost(model: str, usage: Mapping[str, Any],
                  prices: Mapping[str, tuple[float, float]] | None = None) -> float | None:
    """USD for one call from the price table, or None when the model is not in it."""
    price = price_for(model, prices)
    if price is None:
        return None
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    return round((prompt * price[0] + completion * price[1]) / 1e6, 8)


# ------------------------------------------------------------------------------------------ validation


def check_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Plain ``{"role", "content"}`` dicts, or a ProviderConfigError saying what is wrong."""
    if not messages:
        raise ProviderConfigError("no messages to send")
    out = []
    for i, m in enumerate(messages):
        role, content = m.get("role"), m.get("content")
        if role not in ROLES:
            raise ProviderConfigError(f"message {i}: role must be one of {ROLES}, got {role!r}")
        if not isinstance(content, str):
            raise ProviderConfigError(f"message {i}: content must be a str, got {type(content).__name__}")
        out.append({"role": role, "content": content})
    return out


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


class _PerLoop:
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


# -------------------------------------------------------------------------------------------- reliable


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
        self._semaphore = _PerLoop(lambda: asyncio.Semaphore(self.concurrency))
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


# -------------------------------------------------------------------------------------------- registry

# registry name -> ("module:Class", the pip extra its SDK comes with, or None)
PROVIDERS: dict[str, tuple[str, str | None]] = {
    "openai": ("kerneljudge.generate.providers.openai:OpenAIProvider", "openai"),
    "anthropic": ("kerneljudge.generate.providers.anthropic:AnthropicProvider", "anthropic"),
    "replay": ("kerneljudge.generate.providers.replay:ReplayProvider", None),
}

# options consumed by the wrappers; everything else goes to the provider class
RELIABLE_OPTIONS = ("max_attempts", "concurrency", "timeout", "backoff_base", "backoff_max", "max_retry_after")


def register_provider(name: str, target: str, extra: str | None = None) -> None:
    """Add a provider: ``target`` is ``"package.module:Class"``, imported only when chosen."""
    PROVIDERS[name] = (target, extra)


def parse_spec(spec: str) -> tuple[str, str]:
    name, sep, model = spec.partition(":")
    if not sep or not name or not model:
        raise ProviderConfigError(
            f"bad provider spec {spec!r}: expected NAME:MODEL, e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5, "
            f"replay:FOLDER (known names: {', '.join(sorted(PROVIDERS))})")
    if name not in PROVIDERS:
        raise ProviderConfigError(f"unknown provider {name!r} in {spec!r}; known: {', '.join(sorted(PROVIDERS))}")
    return name, model


def load_provider_class(name: str):
    target, extra = PROVIDERS[name]
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        cls = getattr(module, class_name)
        require = getattr(cls, "require_sdk", None)
        if require is not None:
            require()
    except ImportError as err:
        install = f"pip install kerneljudge[{extra}]" if extra else "check the installation"
        raise ProviderConfigError(f"the {name} provider needs a package that is not installed "
                                  f"({err.name or err}): {install}") from err
    return cls


def get_provider(spec: str, **options: Any) -> Provider:
    """Build a provider from ``"openai:MODEL"``, ``"anthropic:MODEL"`` or ``"replay:FOLDER"``.

    Options: ``cache_dir`` (disk cache, see cache.py; ignored by replay, which queries nothing);
    ``max_attempts`` (6), ``concurrency`` (8), ``timeout`` (600 s per call), ``backoff_base`` (1 s),
    ``backoff_max`` (60 s), ``max_retry_after`` (300 s) for the retry wrapper; the rest go to the provider
    class: ``base_url``, ``api_key_env``, ``prices``, ``extra_body``, ``send_temperature`` (both),
    ``token_param`` (openai), ``model`` (replay: only entries recorded for that model).

    The result is ``CachedProvider(ReliableProvider(OpenAIProvider(...)))`` (without the outer layer when
    there is no cache_dir); each layer has ``name``, ``model``, ``spec``, ``complete`` and ``aclose``, and
    ``stats`` (calls, requests, failed_calls, tokens, cost_usd, cache hits/misses) from the wrappers.
    """
    name, model = parse_spec(spec)
    cls = load_provider_class(name)
    cache_dir = options.pop("cache_dir", None)
    reliable = {k: options.pop(k) for k in RELIABLE_OPTIONS if k in options}
    if getattr(cls, "network", True) and "timeout" in reliable and reliable["timeout"] is not None:
        options.setdefault("timeout", float(reliable["timeout"]) + 5.0)  # the SDK's own backstop
    try:
        provider = cls(model, **options)
    except TypeError as err:
        raise ProviderConfigError(f"bad option for the {name} provider: {err}") from err
    if getattr(cls, "network", True):
        provider = ReliableProvider(provider, **reliable)
    elif reliable:
        raise ProviderConfigError(f"the {name} provider takes no retry options: {sorted(reliable)}")
    if cache_dir is not None and getattr(cls, "network", True):
        from kerneljudge.generate.providers.cache import CachedProvider

        provider = CachedProvider(provider, cache_dir)
    return provider


__all__ = [
    "Message", "Completion", "Provider", "ProviderError", "ProviderConfigError", "ProviderRequestError",
    "TransientProviderError", "ProviderExhaustedError", "ReliableProvider", "PRICES", "estimate_cost",
    "price_for", "get_provider", "register_provider", "parse_spec", "redact", "read_key",
]
