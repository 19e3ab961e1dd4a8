"""The providers' common types and errors: a chat message, a completion, the Provider interface, the errors
every provider raises, and the check every message list passes before it is sent.

Imports nothing else of the providers package.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Protocol, Sequence, TypedDict, runtime_checkable


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


__all__ = [
    "Message", "ROLES", "Completion", "Provider", "ProviderError", "ProviderConfigError", "ProviderRequestError",
    "TransientProviderError", "ProviderExhaustedError", "check_messages",
]
