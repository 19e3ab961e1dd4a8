"""API keys: read from the environment, and redacted from every message.

API keys are read from the environment when a provider is built, kept in a private attribute, passed
only to the SDK, and redacted from every error message this package raises or logs. They are never part
of a cache key, a cache entry, a repr or a log line.
"""

from __future__ import annotations

import os
from typing import Sequence

from kerneljudge.generate.providers.types import ProviderConfigError


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


__all__ = ["redact", "read_key"]
